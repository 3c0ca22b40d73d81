#!/usr/bin/env bash
# The main job, end to end on the local defaults (what `make demo` runs):
#   a real Kafka broker (started if not running) → a streaming worker → two real access logs fed
#   as live lines → the candidate rules each site's window emits, printed; then the batch
#   `dustbuster mine` on the same log, for comparison.  Part 2, the crawler side: the simulated
#   forum (sim/site.py, its truth in sim/forum.py) on loopback → its traffic log fed → the validator fetches its pages and
#   publishes rules → a frontier canonicalized by the worker (seen flags), the HTTP API, a Nutch
#   export.  Everything stays under var/ and on 127.0.0.1.
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
SIMPORT=$($PY -c "from dustbuster.broker import free_port; print(free_port())")
API=$($PY -c "from dustbuster.broker import free_port; print(free_port())")
$PY -m dustbuster sim-site --port "$SIMPORT" > "var/demo/sim-$RUN.log" 2>&1 &
sim=$!
$PY - "$SIMPORT" > "var/demo/sites-$RUN.json" <<'PYEOF'
import json, sys
port = sys.argv[1]
hosts = ["www.forum.test", "forum.test", "politics.forum.test", "movies.forum.test"]
print(json.dumps({"forum.test": {"origins": [f"http://{h}:{port}" for h in hosts], "allow_private": True,
                                 "resolve": {h: "127.0.0.1" for h in hosts}, "rate_per_s": 1000, "concurrency": 8}}))
PYEOF
export DUST_VALIDATOR_SITES="var/demo/sites-$RUN.json" DUST_API_PORT="$API"
$PY -m dustbuster worker > "var/demo/worker-$RUN.log" 2>&1 &
worker=$!
echo "# a streaming worker runs; its live dashboard: http://127.0.0.1:$API/ (open it while the demo runs)"
cleanup() {
  kill "$worker" 2>/dev/null && wait "$worker" 2>/dev/null || true   # the worker first: its rounds need the site
  kill "$sim" 2>/dev/null && wait "$sim" 2>/dev/null || true
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

echo
echo "# part 2, the crawler side: the simulated forum's log → validated rules → canonical URLs"
$PY -m dustbuster sim-site --port "$SIMPORT" --write-log "var/demo/sim-$RUN.access.log" --lines 12000 -q
$PY -m dustbuster feed "var/demo/sim-$RUN.access.log" --site forum.test
# The worker mines every DUST_WINDOW_S, so its first windows see part of the log; wait for the
# candidate set of all 12,000 lines and for the validation round of that window (the dashboard's
# state.json says which window each round was), so the rules below are those of the whole log.
W=$($PY -m dustbuster candidates --site forum.test --wait-lines 12000 --timeout 180 --json |
    $PY -c 'import json, sys; print(json.load(sys.stdin)["forum.test"]["window"])')
$PY - "$API" "$W" <<'PYEOF'
import json, sys, time, urllib.request
port, window = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/dashboard/state.json?site=forum.test", timeout=10) as r:
        last = (json.load(r).get("detail") or {}).get("last_round") or {}
    if int(last.get("window") or 0) >= window:
        break
    time.sleep(1)
else:
    sys.exit(f"no validation round of window {window} (the whole log) within 300 s")
PYEOF
echo "# the validated rule set, as a crawler operator reads it (dustbuster rules --site forum.test):"
$PY -m dustbuster rules --site forum.test | sed 's/^/  /'
P="http://www.forum.test:$SIMPORT"
B="http://forum.test:$SIMPORT"
echo "# the simulator's truth (sim/forum.py): story?id=N = story_N = story.php3?id=N; sid, utm_source and"
echo "# LastView=&Close= change nothing; www. and the bare host are one site; page=N, print/ and the"
echo "# politics./movies. sections are other pages.  Expected below: the first three URLs -> one story_101,"
echo "# the next two -> one story_102, the politics section's story_101 keeps its own URL."
echo "# a frontier of 6 URLs through the worker (dustbuster frontier --wait): new|seen, URL, canonical"
printf '%s\n' "$P/story?id=101&sid=42" "$P/story_101" "$B/story.php3?id=101" \
  "$P/story?id=102&LastView=&Close=" "$B/story_102?utm_source=feed1" \
  "http://politics.forum.test:$SIMPORT/story_101" |
  $PY -m dustbuster frontier --site forum.test --wait --timeout 60
echo "# POST /canonicalize on the worker's HTTP API (port $API)"
$PY - "$API" "$P" <<'PYEOF'
import json, sys, urllib.request
port, p = sys.argv[1], sys.argv[2]
body = json.dumps({"urls": [f"{p}/thread?rep=7&sid=1", f"{p.upper()}/a/../story?id=5#c"]}).encode()
with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/canonicalize", data=body)) as r:
    for x in json.load(r)["results"]:
        print(f"    {x['url']} -> {x['canonical']}  (v{x['version']}, {len(x['rules'])} rules)")
PYEOF
echo "# the same rules for Apache Nutch (dustbuster export --to nutch), first rule; a rule Nutch cannot say is named on stderr and listed in the file:"
$PY -m dustbuster export --from-topic --site forum.test --to nutch | sed -n '4,8p'

