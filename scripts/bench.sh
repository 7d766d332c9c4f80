#!/usr/bin/env bash
# Benchmarks behind docs/benchmarks.md, on release builds. Not part of the tests.
#   scripts/bench.sh            everything (the agent's cost needs root for its network namespaces)
#   scripts/bench.sh wire       only the wire size
#   scripts/bench.sh ingest     only the daemon's ingest (real pace and saturated) and the store alone
#   scripts/bench.sh postgres   saturated ingest into one PostgreSQL database from 1, 2 and 3 daemons, beside one
#                               daemon on SQLite (BENCH_AGENTS, BENCH_PG_SECONDS); CPU per million values per process
#   scripts/bench.sh connections 10,000 agent connections held (memory per connection), a reconnect storm of all of
#                               them, and openssl s_server doing the same handshakes (BENCH_CONNECTIONS)
#   scripts/bench.sh bounds     the daemon's peak memory while agents send the largest batches as fast as it takes
#                               them, for queue_bytes of 16, 64 and 256 MiB (BENCH_BOUNDS_AGENTS, default 8)
#   scripts/bench.sh size       only the store's size per interface, beside an rrdtool RRD
#   scripts/bench.sh query      only the CLI's queries on bulk-loaded stores (BENCH_QUERY_SIZES, default
#                               "1000 10000 100000"; 100,000 takes about 25 GB of BENCH_QUERY_DIR and most of an
#                               hour to load)
#   scripts/bench.sh dashboards drawing the default dashboards from a bulk-loaded store of 10,000 interfaces
#                               (BENCH_DASHBOARD_INTERFACES; about 6 GB of BENCH_QUERY_DIR and 8 minutes to load),
#                               the alert service's evaluation over it, and ingest's ack latency while the daemon
#                               draws them from it, and remote write from it to a real Prometheus
#   scripts/bench.sh http       the HTTP API's latency beside the CLI's, on-demand page renders, SSE commit-to-event
#                               and Chromium's commit-to-paint with 10 live pages, and the daemon's CPU and memory
#                               meanwhile, on a bulk-loaded store of 10,000 interfaces (BENCH_HTTP_INTERFACES,
#                               BENCH_HTTP_AGENTS real agents, BENCH_HTTP_SECONDS; BENCH_KEEP_STORE=1 keeps the store)
#   scripts/bench.sh report     a 30-day report of 1,000 hosts of 16 interfaces (BENCH_REPORT_HOSTS), bulk-loaded
#   scripts/bench.sh agent      only the agent's CPU and memory
#   scripts/bench.sh charts     only the chart rendering (scripts/bench-charts.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
ensure_packages prometheus-node-exporter curl rrdtool openssl
WHAT=${1:-all}
R=.build/release

echo "==> building release binaries"
build_release
swift build -c release --product netpulse-bench >/dev/null

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r)"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
echo

if [ "$WHAT" = all ] || [ "$WHAT" = wire ]; then
    $R/netpulse-bench wire
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = connections ]; then
    $R/netpulse-bench connections "$R/netpulsed" "${BENCH_CONNECTIONS:-10000}"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = bounds ]; then
    $R/netpulse-bench bounds "$R/netpulsed" "${BENCH_BOUNDS_AGENTS:-8}" 16 64 256
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = ingest ]; then
    # 625 agents × 16 interfaces = 10,000 interfaces.
    $R/netpulse-bench ingest "$R/netpulsed" "${BENCH_AGENTS:-625}" "${BENCH_SECONDS:-30}"
    echo
    $R/netpulse-bench store "${BENCH_INTERFACES:-10000}" "${BENCH_STORE_SECONDS:-60}"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = postgres ]; then
    ensure_postgresql
    ensure_prometheus
    $R/netpulse-bench postgres "$R/netpulsed" "$PROMETHEUS_TOOLS/usr/bin/prometheus" "${BENCH_AGENTS:-625}" \
        "${BENCH_PG_SECONDS:-20}"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = size ]; then
    DIR=$(mktemp -d /tmp/netpulse-bench-size.XXXXXX)
    $R/netpulse-bench fill "$DIR/netpulse.db" 32 24 >/dev/null
    python3 scripts/bench-size.py "$DIR/netpulse.db" 32 24 "$DIR"
    rm -rf "$DIR"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = query ]; then
    # Stores of N interfaces with 30 days of 5-minute data (and their hourly and daily rollups and open bills),
    # written by the bulk loader, not by ingest (SQLiteStore+BulkLoad.swift); each is deleted after its run.
    # From 100,000 interfaces on, 5-minute rows are kept for the first day and the last 8 only (the queries read
    # nothing else of them; a full month would be 62 GB), see QueryBench.swift.
    QUERY_DIR=${BENCH_QUERY_DIR:-/var/tmp}
    echo "fresh netpulse processes on bulk-loaded stores, 30 days of 5-minute data (median of 5 runs):"
    for N in ${BENCH_QUERY_SIZES:-1000 10000 100000}; do
        STORE_DIR="$QUERY_DIR/netpulse-bench-query-$N"
        FINE_DAYS=""
        if [ "$N" -ge 100000 ]; then FINE_DAYS=8; fi
        $R/netpulse-bench query-store "$STORE_DIR" "$N" 30 $FINE_DAYS | tail -n 1
        python3 scripts/bench-query.py $R/netpulse "$STORE_DIR/netpulsed.toml" "$N interfaces"
        if [ "$(id -u)" -eq 0 ]; then
            python3 scripts/bench-query.py $R/netpulse "$STORE_DIR/netpulsed.toml" "$N interfaces, cold cache" 3 cold
        fi
        rm -rf "$STORE_DIR"
    done
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = dashboards ]; then
    N=${BENCH_DASHBOARD_INTERFACES:-10000}
    STORE_DIR="${BENCH_QUERY_DIR:-/var/tmp}/netpulse-bench-dashboards-$N"
    $R/netpulse-bench query-store "$STORE_DIR" "$N" 30 | tail -n 1
    $R/netpulse-bench render "$STORE_DIR/netpulsed.toml" 3
    echo
    $R/netpulse-bench alerts "$STORE_DIR/netpulsed.toml" 2>/dev/null
    echo
    # Remote write of every interface to Debian's Prometheus (unpacked into .build/tools, not installed).
    ensure_prometheus
    $R/netpulse-bench remote-write "$STORE_DIR/netpulsed.toml" "$PROMETHEUS_TOOLS/usr/bin/prometheus"
    echo
    # Ack latency at half of the maximum ingest on this store (BENCH_LOAD_FRACTION), with and without the daemon
    # drawing the fleet overview for every range every 10 s.
    $R/netpulse-bench ingest-render "$R/netpulsed" "$STORE_DIR" "${BENCH_AGENTS:-625}" "${BENCH_RENDER_SECONDS:-60}"
    rm -rf "$STORE_DIR"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = http ]; then
    # The API and the live dashboards on a bulk-loaded store of 10,000 interfaces, with real agents and a real
    # Chromium (scripts/bench-http.py says what each figure is and what it leaves out).
    ensure_packages chromium chromium-driver python3-selenium
    N=${BENCH_HTTP_INTERFACES:-10000}
    STORE_DIR="${BENCH_QUERY_DIR:-/var/tmp}/netpulse-bench-http-$N"
    # A store kept from an earlier run (BENCH_KEEP_STORE) is made again once its bulk data no longer fills the
    # last hour: its hosts would be silent there, and the fleet overview would rank the live agents' interfaces
    # alone (a read much cheaper than a real fleet's).
    if [ -d "$STORE_DIR" ] && { [ ! -f "$STORE_DIR/made" ] || [ -n "$(find "$STORE_DIR/made" -mmin +10)" ]; }; then
        echo "bench: $STORE_DIR was made more than 10 minutes ago; making it again"
        rm -rf "$STORE_DIR"
    fi
    if [ ! -f "$STORE_DIR/netpulsed/netpulse.db" ]; then
        $R/netpulse-bench query-store "$STORE_DIR" "$N" 30 | tail -n 1
        touch "$STORE_DIR/made"
    fi
    BENCH_AGENT_BINARY=$AGENT_RELEASE /usr/bin/python3 scripts/bench-http.py "$R" "$STORE_DIR" "${BENCH_HTTP_AGENTS:-20}" "${BENCH_HTTP_SECONDS:-600}"
    [ -n "${BENCH_KEEP_STORE:-}" ] || rm -rf "$STORE_DIR"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = report ]; then
    HOSTS=${BENCH_REPORT_HOSTS:-1000}
    STORE_DIR="${BENCH_QUERY_DIR:-/var/tmp}/netpulse-bench-report-$HOSTS"
    $R/netpulse-bench query-store "$STORE_DIR" "$((HOSTS * 16))" 31 | tail -n 1
    $R/netpulse-bench report "$STORE_DIR/netpulsed.toml"
    rm -rf "$STORE_DIR"
    echo
fi

if [ "$WHAT" = all ] || [ "$WHAT" = agent ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "agent cost: skipped (needs root for network namespaces)"
    else
        SECONDS_TO_MEASURE=${BENCH_AGENT_SECONDS:-120}
        DIR=$(mktemp -d /tmp/netpulse-bench-agent.XXXXXX)
        A=npb-a-$$
        B=npb-b-$$
        cleanup() {
            kill $(jobs -p) 2>/dev/null || true
            wait 2>/dev/null || true
            ip netns del "$A" 2>/dev/null || true
            ip netns del "$B" 2>/dev/null || true
            rm -rf "$DIR"
        }
        trap cleanup EXIT
        ip netns add "$A"
        ip netns add "$B"
        ip -n "$A" link set lo up
        ip -n "$B" link set lo up
        # 16 interfaces with a little traffic each, as on a busy host.
        for i in $(seq 0 15); do
            ip -n "$A" link add "veth$i" type veth peer name "peer$i" netns "$B"
            ip -n "$A" addr add "10.200.$i.1/30" dev "veth$i"
            ip -n "$B" addr add "10.200.$i.2/30" dev "peer$i"
            ip -n "$A" link set "veth$i" up
            ip -n "$B" link set "peer$i" up
        done
        $R/netpulse ca init --dir "$DIR/ca" >/dev/null
        $R/netpulse ca issue --dir "$DIR/ca" --daemon netpulsed >/dev/null
        $R/netpulse ca issue --dir "$DIR/ca" --agent bench >/dev/null
        printf '[daemon]\nstate_directory = "%s/d"\n[listen]\naddress = "127.0.0.1:7420"\n[tls]\nca = "%s/ca/ca.pem"\ncertificate = "%s/ca/netpulsed.pem"\nkey = "%s/ca/netpulsed-key.pem"\n' \
            "$DIR" "$DIR" "$DIR" "$DIR" >"$DIR/d.toml"
        printf '[agent]\nid = "bench"\nstate_directory = "%s/a"\n[daemon]\nca = "%s/ca/ca.pem"\ncertificate = "%s/ca/bench.pem"\nkey = "%s/ca/bench-key.pem"\n' \
            "$DIR" "$DIR" "$DIR" "$DIR" >"$DIR/a.toml"
        ip netns exec "$A" $R/netpulsed --config "$DIR/d.toml" 2>"$DIR/d.log" &
        sleep 1
        ip netns exec "$A" python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    for i in range(16): s.sendto(b'x' * 200, ('10.200.%d.2' % i, 9))
    time.sleep(0.1)" &
        ip netns exec "$A" $AGENT_RELEASE --config "$DIR/a.toml" 2>"$DIR/a.log" &
        AGENT=$!
        # node_exporter, the usual peer, scraped once a second like the agent samples; only its netdev collector, so
        # both read the same thing (/proc/net/dev).
        ip netns exec "$A" prometheus-node-exporter --web.listen-address=127.0.0.1:9100 --log.level=error \
            --collector.disable-defaults --collector.netdev 2>/dev/null &
        NODE=$!
        ip netns exec "$A" bash -c 'while true; do curl -s -o /dev/null http://127.0.0.1:9100/metrics; sleep 1; done' &
        sleep 10
        AGENT_PID=$(pgrep -f "netpulse-agent --config $DIR/a.toml" | head -n 1)
        NODE_PID=$(pgrep -f "prometheus-node-exporter --web.listen-address=127.0.0.1:9100" | head -n 1)
        echo "agent at 1 Hz with 16 interfaces (release build as shipped, see build_release), over ${SECONDS_TO_MEASURE} s:"
        $R/netpulse-bench usage "$AGENT_PID" "$SECONDS_TO_MEASURE" 1 &
        U1=$!
        ( $R/netpulse-bench usage "$NODE_PID" "$SECONDS_TO_MEASURE" 1 | sed 's/^/ node_exporter:/' >"$DIR/node.txt" ) &
        wait $U1
        sleep 1
        echo "prometheus-node-exporter $(dpkg-query -W -f='${Version}' prometheus-node-exporter), netdev collector only, scraped every second, same run:"
        sed 's/ node_exporter://' "$DIR/node.txt"
        grep -c "connected to" "$DIR/a.log" >/dev/null || { echo "agent did not connect:"; cat "$DIR/a.log"; }
        echo "agent binary: $(stat -c %s $AGENT_RELEASE | numfmt --to=iec-i)B; links: $(ldd $AGENT_RELEASE | awk '{print $1}' | tr '\n' ' ')"
        echo
    fi
fi

if [ "$WHAT" = all ] || [ "$WHAT" = charts ]; then
    if [ -x scripts/bench-charts.sh ]; then scripts/bench-charts.sh; fi
fi
