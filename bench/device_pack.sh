#!/usr/bin/env bash
# Packs what bench/device_scale.sh needs on a machine of the `device` tool, which reaches no registry
# and has Python 3.12 with numpy/aiohttp but no Java, Kafka, aiokafka, Faust or RocksDB (issue 25
# item 4): a jlink'd Java 17 runtime and the broker's jars (stored, so xz packs them: ~27 MB), and
# the wheels of our other dependencies for CPython 3.12 (~13 MB).  Writes the git-ignored .devpack/
# (name it in the run's carry).  Needs java 17 (jlink), the broker's jars (make kafka-libs), zip, xz.
set -euo pipefail
cd "$(dirname "$0")/.."
P=.devpack; mkdir -p "$P/whl"; rm -rf "$P/jre" "$P/libs" "$P/pack.tar.xz"
grep -qx '/.devpack/' .git/info/exclude 2>/dev/null || echo '/.devpack/' >> "$(git rev-parse --git-dir)/info/exclude"
JH=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
jlink --module-path "$JH/jmods" --compress=0 --strip-debug --no-header-files --no-man-pages --output "$P/jre" \
  --add-modules java.base,java.logging,java.management,java.naming,java.security.jgss,java.security.sasl,java.sql,java.xml,java.desktop,jdk.unsupported,jdk.management,jdk.crypto.ec
strip --strip-unneeded "$P/jre/lib/server/libjvm.so"
mkdir -p "$P/libs"; T=$(mktemp -d)
for j in deploy/kafka/target/kafka-*-libs/*.jar; do   # stored (zip -0), other platforms' natives left out
  rm -rf "$T/x"; mkdir "$T/x"; (cd "$T/x" && unzip -q "$OLDPWD/$j")
  find "$T/x" \( -name '*.dll' -o -name '*.dylib' -o -name '*.jnilib' \) -delete
  find "$T/x" -name '*.so' -path '*/linux/*' ! -path '*amd64*' ! -path '*x86_64*' -delete
  (cd "$T/x" && zip -q -0 -r -X "$OLDPWD/$P/libs/$(basename "$j")" .)
done
rm -rf "$T"
tar cf - -C "$P" jre libs | xz -9 -T2 > "$P/pack.tar.xz"; rm -rf "$P/jre" "$P/libs"
plat=""; for t in manylinux_2_17 manylinux2014 manylinux_2_28 manylinux_2_5 manylinux1; do plat="$plat --platform ${t}_x86_64"; done
for w in aiokafka==0.14.0 faust-streaming==0.15.3 mode-streaming==0.7.1 rocksdict==0.3.29 pyahocorasick==2.3.1 \
         orjson cryptography==50.0.2 cffi pycparser venusian croniter intervaltree terminaltables aiohttp-cors \
         colorlog async-timeout pytz; do
  .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    $plat --platform any -d "$P/whl" "$w"
done
du -sh "$P"/pack.tar.xz "$P/whl"
