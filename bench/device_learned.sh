#!/usr/bin/env bash
# bench/bench_learned.py on a GPU machine of the `device` tool (issue 15): its image has JAX with
# CUDA but not our other dependencies, so only what the model needs is put on the path
# (dustbuster.core.errors; the core's __init__ would import numpy-free helpers it lacks).
# Then the same benchmark on that machine's CPU, for the ratio.  Output: $OUT/gpu.txt, $OUT/cpu.txt.
set -u
T=/tmp/dust-tree/dustbuster
mkdir -p "$T/core"
cp dustbuster/__init__.py "$T/"
printf '' > "$T/core/__init__.py"
cp core/errors.py "$T/core/"
ln -sfn "$PWD/learned" "$T/learned"
cp bench/bench_learned.py /tmp/dust-tree/  # run from there: its folder's parent goes on sys.path first
export PYTHONPATH=/tmp/dust-tree PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L
python3 -c 'import jax; print(jax.__version__, jax.devices())'
timeout 300 python3 /tmp/dust-tree/bench_learned.py --pairs 10000 --time-budget 240 2>&1 | tee "$OUT/gpu.txt" | grep -v '  epoch'
JAX_PLATFORMS=cpu timeout 200 python3 /tmp/dust-tree/bench_learned.py --pairs 10000 --time-budget 150 2>&1 | tee "$OUT/cpu.txt" | grep -v '  epoch'
