#!/usr/bin/env bash
# The main job, end to end on the local defaults (what `make demo` runs):
#   a real Kafka broker (started if not running) → a streaming worker → two real access logs fed
#   as live lines → the candidate rules each site's window emits, printed; then the batch
#   `dustbuster mine` on the same log, for comparison.  Everything stays under var/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
RUN="$(date +%s)"
export DUST_TOPIC_PREFIX="demo$RUN" DUST_APP_ID="demo$RUN" DUST_WINDOW_S="${DUST_WINDOW_S:-3}" \
       DUST_DATA_DIR="var/demo/worker-$RUN" DUST_KAFKA_BOOTSTRAP="${DUST_KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
mkdir -p var/demo

started_broker=0
hostport="${DUST_KAFKA_BOOTSTRAP%%,*}"
if ! $PY -c "import socket,sys; h,p='$hostport'.rsplit(':',1); socket.create_connection((h,int(p)),1)" 2>/dev/null; then
  $PY -m dustbuster broker start
  started_broker=1
fi
$PY -m dustbuster worker > "var/demo/worker-$RUN.log" 2>&1 &
worker=$!
cleanup() {
  kill "$worker" 2>/dev/null && wait "$worker" 2>/dev/null || true
  if [ "$started_broker" = 1 ]; then $PY -m dustbuster broker stop; fi
}
trap cleanup EXIT

SEMI=tests/data/logs/semicomplete-apache/apache_logs
TWIKI=tests/data/logs/monitorware-twiki/access_log
$PY -m dustbuster feed "$SEMI" --site semicomplete.com
$PY -m dustbuster feed "$TWIKI" --site monitorware.example
$PY -m dustbuster candidates --site monitorware.example --wait-lines "$(wc -l < "$TWIKI")" --timeout 180
$PY -m dustbuster candidates --site semicomplete.com --wait-lines "$(wc -l < "$SEMI")" --timeout 180 --limit 15
echo "# the same log through the batch engine (dustbuster mine): same rules"
$PY -m dustbuster mine "$SEMI" --site semicomplete.com --limit 15
