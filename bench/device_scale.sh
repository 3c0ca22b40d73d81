#!/usr/bin/env bash
# Scale-out on a 16-core machine of the `device` tool (issue 25 item 4): the local KRaft broker,
# 1, 2, 4 and 8 workers of one consumer group and several producer processes, in one short call.
# That machine reaches no registry and has Python 3.12 without Java or our streaming dependencies:
# bench/device_pack.sh packs them into .devpack/ here first (carry it).  Run through the tool as
#   run(command="bash bench/device_scale.sh", carry=[".devpack"], timeout_s=600)
# Output: $OUT/scale.txt, $OUT/bench_scale.json (and $OUT/stream.txt when STREAM_ARGS is set).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
mkdir -p /tmp/dp && xz -dc .devpack/pack.tar.xz | tar xf - -C /tmp/dp || exit 1
export PATH=/tmp/dp/jre/bin:$PATH
mkdir -p deploy/kafka/target && rm -rf deploy/kafka/target/kafka-4.1.1-libs && ln -s /tmp/dp/libs deploy/kafka/target/kafka-4.1.1-libs
rm -rf /tmp/site; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .devpack/whl/*.whl || exit 1
for d in core logs fetch state stream agents sim learned; do ln -sfn ../$d dustbuster/$d; done  # the package-dir map, uninstalled
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export DUST_BROKER_JVM="-Xms1g -Xmx4g -XX:+UseParallelGC -Djava.awt.headless=true" DUST_BROKER_THREADS=8
# PREFILL=1: the raw topic filled before the workers start (the 8-worker point of 2026-11-26 measured
# the producers); the group's first assignment then waits 5 s for every worker to join
[ -n "${PREFILL:-}" ] && export DUST_BROKER_REBALANCE_DELAY_MS=5000
say "ready: $(nproc) cpus, $(python3 --version), $(java -version 2>&1 | head -1)"
python3 -c 'import dustbuster.stream.app, dustbuster.agents.context, aiokafka, faust, rocksdict; print("imports ok")' || exit 1
timeout ${SCALE_S:-400} python3 bench/bench_scale.py --sites ${SITES:-16} --lines ${LINES:-60000} --workers ${WORKERS:-1,2,4,8} \
  --repeat ${REPEAT:-1} --window auto --producers ${PRODUCERS:-8} ${PREFILL:+--prefill} 2>&1 | tee "$OUT/scale.txt" | grep -E '^\{"workers|Error|error' 
cp bench/out/bench_scale.json "$OUT/" 2>/dev/null
say "scale done"
if [ -n "${STREAM_ARGS:-}" ]; then
  timeout ${STREAM_S:-150} python3 bench/bench_stream.py $STREAM_ARGS 2>&1 | tee "$OUT/stream.txt" | tail -30
  say "stream done"
fi
python3 - <<'PY'
import json
d = json.load(open("bench/out/bench_scale.json"))
m = d["median_new_urls_per_s"]; one = m.get("1") or m.get(1)
for n, r in m.items():
    print(f"workers {n}: {r} new URLs/s, speed-up {r / one:.2f}x, {r / one / int(n):.2f} of linear")
PY
