#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and shows Netpulse working: builds, makes a throwaway CA and certificates,
# starts netpulsed and netpulse-agent on 127.0.0.1, makes some traffic to watch, and ends with what an operator
# looks at: a vnStat-like traffic view, the top talkers, the 95th-percentile bill, the alert the traffic fired
# (with its chart), the daemon's snapshots and dashboards (with their index page), and a report with its checksum
# manifest, all left in $DEMO_DIR.
#   scripts/demo.sh            about 30 seconds of traffic
#   DEMO_SECONDS=120 scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
ensure_packages

SECONDS_TO_RUN=${DEMO_SECONDS:-30}
DEMO=${DEMO_DIR:-/tmp/netpulse-demo}
PORT=${DEMO_PORT:-17420}
BIN=.build/debug
NS=netpulse-demo

echo "==> building"
swift build 2>&1 | { grep -Ev '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Wrapping|Linking|Applying)' || true; }

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "$(id -u)" -eq 0 ]; then
        ip netns del "$NS" 2>/dev/null || true
        ip link del np-demo0 2>/dev/null || true
    fi
}
trap cleanup EXIT

rm -rf "$DEMO"
mkdir -p "$DEMO"
echo "==> a throwaway CA and certificates in $DEMO/ca"
$BIN/netpulse ca init --dir "$DEMO/ca" >/dev/null
$BIN/netpulse ca issue --dir "$DEMO/ca" --daemon netpulsed --ip 127.0.0.1 >/dev/null
$BIN/netpulse ca issue --dir "$DEMO/ca" --agent demo-agent >/dev/null

# Traffic: as root, a veth pair to a network namespace of our own carrying a steady TCP stream; otherwise the
# stream runs over loopback, which the agent then watches too.
if [ "$(id -u)" -eq 0 ]; then
    ip netns del "$NS" 2>/dev/null || true
    ip link del np-demo0 2>/dev/null || true
    ip netns add "$NS"
    ip link add np-demo0 type veth peer name np-demo1
    ip link set np-demo1 netns "$NS"
    ip addr add 10.253.0.1/30 dev np-demo0
    ip link set np-demo0 up
    ip -n "$NS" addr add 10.253.0.2/30 dev np-demo1
    ip -n "$NS" link set np-demo1 up
    ip -n "$NS" link set lo up
    TARGET=10.253.0.2
    EXCLUDE='["lo"]'
else
    TARGET=127.0.0.1
    EXCLUDE='[]'
fi

# The demo's traffic crosses a veth, which host and fleet totals leave out by default (on a real host the same
# bytes also cross a physical NIC): count veths here. Snapshots every 10 s instead of 5 min.
cat > "$DEMO/netpulsed.toml" <<CONF
[daemon]
state_directory = "$DEMO/netpulsed"
time_zone = "${DEMO_TZ:-UTC}"
[listen]
address = "127.0.0.1:$PORT"
[tls]
ca = "$DEMO/ca/ca.pem"
certificate = "$DEMO/ca/netpulsed.pem"
key = "$DEMO/ca/netpulsed-key.pem"
[aggregation]
count = ["physical", "bond", "veth", "unknown"]
[labels]
# Agents set the labels named here themselves (by default none: labels make groups and route alerts).
from_agents = ["role"]
[labels.demo-agent]
site = "demo-lab"
[snapshots]
interval = "10s"
windows = ["last-1h", "today", "billing-period"]
scopes = ["fleet", "groups", "hosts", "interfaces"]
[dashboards]
hour_interval = "10s"
[alerts]
evaluation_interval = "2s"
# The demo's stream crossing 10 Mbit/s for 10 seconds fires this; it resolves below 5 Mbit/s.
[alert.DemoLinkBusy]
expr = "rate > 10Mbit/s"
clear = "5Mbit/s"
window = "1m"
for = "10s"
scope = "interface"
interfaces = ["np-demo0", "lo"]
severity = "warning"
[alert.DemoLinkBusy.annotations]
summary = "{{ \$labels.host }} {{ \$labels.interface }} carries {{ \$value }} (over {{ \$threshold }})"
CONF
cat > "$DEMO/agent.toml" <<CONF
[agent]
id = "demo-agent"
state_directory = "$DEMO/agent"
[sampling]
interval = "1s"
exclude = $EXCLUDE
[batch]
interval = "2s"
[daemon]
endpoints = ["127.0.0.1:$PORT"]
ca = "$DEMO/ca/ca.pem"
certificate = "$DEMO/ca/demo-agent.pem"
key = "$DEMO/ca/demo-agent-key.pem"
[labels]
role = "demo"
CONF

STARTED=$(date +%s)
echo "==> starting netpulsed and netpulse-agent (logs in $DEMO/*.log)"
$BIN/netpulsed --config "$DEMO/netpulsed.toml" >"$DEMO/netpulsed.log" 2>&1 &
pids+=($!)
sleep 1
$BIN/netpulse-agent --config "$DEMO/agent.toml" >"$DEMO/agent.log" 2>&1 &
pids+=($!)

echo "==> $SECONDS_TO_RUN seconds of traffic to $TARGET (about 40 Mbit/s, varying)"
SINK="import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('$TARGET', 17421)); s.listen(1); c, _ = s.accept()
while c.recv(1 << 16): pass"
SOURCE="import socket, time, math
c = socket.create_connection(('$TARGET', 17421)); chunk = b'x' * 65536; start = time.time()
while time.time() - start < $SECONDS_TO_RUN:
    rate = 5e6 * (1 + 0.5 * math.sin((time.time() - start) / 4))
    c.sendall(chunk); time.sleep(len(chunk) / rate)"
if [ "$TARGET" = 127.0.0.1 ]; then
    python3 -c "$SINK" & pids+=($!)
else
    ip netns exec "$NS" python3 -c "$SINK" & pids+=($!)
fi
sleep 0.5
python3 -c "$SOURCE" &
SOURCE_PID=$!
sleep $((SECONDS_TO_RUN / 2 + 3))
Q=(--config "$DEMO/netpulsed.toml")
echo
echo "==> while the traffic flows: netpulse rates --config $DEMO/netpulsed.toml"
$BIN/netpulse rates "${Q[@]}"
wait "$SOURCE_PID"
sleep 4
echo
echo "==> traffic per 5 minutes, like vnstat -5: netpulse traffic --by 5min --last 1h"
$BIN/netpulse traffic "${Q[@]}" --by 5min --last 1h
echo "==> per interface today: netpulse traffic --by day --interface '*'"
$BIN/netpulse traffic "${Q[@]}" --by day --interface '*'
echo "==> the top talkers of the last hour: netpulse top --by bytes --last 1h"
$BIN/netpulse top "${Q[@]}" --by bytes --last 1h --top 5
echo
echo "==> the 95th-percentile bills of this period: netpulse bill --scope interface"
echo "    (a bill counts each 5-minute interval once it has ended; run the demo longer, DEMO_SECONDS=400, to see one)"
$BIN/netpulse bill "${Q[@]}" --scope interface
echo
# A snapshot is written every 10 s; wait for one that has seen the whole run.
for _ in $(seq 1 20); do
    if [ -e "$DEMO/netpulsed/snapshots/latest.json" ] &&
        [ "$(find "$DEMO/netpulsed/snapshots" -name 'snapshot-*.json' -newer "$DEMO/agent.log" | wc -l)" -gt 0 ]; then
        break
    fi
    sleep 1
done
echo "==> the daemon's analytics snapshots (docs/snapshots.md), kept in $DEMO/netpulsed/snapshots:"
ls -l "$DEMO/netpulsed/snapshots" | tail -n +2 | sed 's/^/    /'
echo "    newest: $(readlink -f "$DEMO/netpulsed/snapshots/latest.json")"
echo "            $(readlink -f "$DEMO/netpulsed/snapshots/latest.csv")"
echo
# The last hour is drawn in 1-minute buckets up to the last minute that has ended, every 10 s here; wait for the
# first drawing after the minute in which the traffic ended.
SHOWN=$(date -u -d "@$(( ($(date +%s) / 60 + 1) * 60 ))" +%Y%m%dT%H%M%SZ)
echo "==> waiting for the dashboards to show the traffic (drawn after $SHOWN)"
for _ in $(seq 1 100); do
    NEWEST=$(ls "$DEMO/netpulsed/dashboards" 2>/dev/null | sed -n 's/^fleet-hour-\(2[0-9T]*Z\)\.svg$/\1/p' | tail -n 1)
    if [ -n "$NEWEST" ] && [[ ! "$NEWEST" < "$SHOWN" ]]; then
        break
    fi
    sleep 1
done
echo "==> the daemon's dashboards (docs/dashboards.md), kept fresh in $DEMO/netpulsed/dashboards:"
ls "$DEMO/netpulsed/dashboards" | grep -- '-latest.svg$' | sed 's/^/    /'
echo
echo "==> the alert the traffic fired: netpulse alerts (docs/alerts.md)"
for _ in $(seq 1 30); do
    ls "$DEMO"/netpulsed/alerts/DemoLinkBusy-*-firing-*.svg >/dev/null 2>&1 && break
    sleep 1
done
$BIN/netpulse alerts "${Q[@]}"
CHART=$(ls "$DEMO"/netpulsed/alerts/DemoLinkBusy-*-firing-*.svg 2>/dev/null | head -n 1)
echo
# A report of the demo's minutes (a scheduled one covers yesterday, last week or last month: docs/reports.md).
FROM=$(date -u -d "@$((STARTED / 60 * 60))" +%Y-%m-%dT%H:%M:00Z)
TO=$(date -u +%Y-%m-%dT%H:%M:00Z)
echo "==> a report of the demo: netpulse report --from $FROM --to $TO --output $DEMO/reports"
REPORT=$($BIN/netpulse report "${Q[@]}" --from "$FROM" --to "$TO" --output "$DEMO/reports")
ls "$REPORT/" | sed 's/^/    /'
(cd "$REPORT" && sha256sum --check --quiet SHA256SUMS && echo "    sha256sum -c SHA256SUMS: every file checks")
echo
echo "==> agent log"
cat "$DEMO/agent.log"
echo
echo "==> everything is in $DEMO:"
echo "    dashboards   file://$DEMO/netpulsed/dashboards/index.html   (open in a browser; it follows new renders)"
echo "    alert chart  ${CHART:-none yet (the alert had not fired; see netpulsed.log)}"
echo "    snapshot     $(readlink -f "$DEMO/netpulsed/snapshots/latest.json")"
echo "    report       file://$REPORT/report.html   (with report.json, CSVs and SHA256SUMS)"
