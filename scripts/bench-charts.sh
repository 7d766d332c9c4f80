#!/usr/bin/env bash
# Benchmarks PulseCharts against rrdtool on the same data, in the same run:
#   (a) one line chart of 86,400 points in four series (one day at 1 s),
#   (b) a dashboard of 12 panels (one day at 1 min, download up and upload down).
#
# Two kinds of row:
#   whole command  `pulsecharts-bench graph` and `rrdtool graph` are each one process per chart that reads the data
#                  from a file on disk, renders and writes the SVG. Both are timed the same way: from this shell with
#                  bash's $EPOCHREALTIME (no fork for the timer), after one warm-up run, REPETITIONS times,
#                  interleaved (rrdtool, ours, rrdtool, ours …) so a change in the machine's load hits both; median.
#                  rrdtool draws one graph per invocation, so its dashboard is 12 invocations (time and bytes summed);
#                  ours draws the 12-panel dashboard in one invocation, as Netpulse does, and for comparison also
#                  as 12 invocations of one panel each.
#   library call   PulseCharts called inside `pulsecharts-bench render` with the data already in memory, as netpulsed
#                  renders; timed in-process. Compared with the same rrdtool figures, which still include everything.
# The script checks that `graph` and `render` wrote byte-identical SVGs.
#
# pulsecharts-bench is built as a chart-drawing command would ship, like the agent (scripts/lib/common.sh): the
# Swift runtime linked in and position-dependent, so starting it does not load and relocate the shared Swift
# runtime libraries. It has its own build directory because these flags apply to everything it links.
#
# Usage: scripts/bench-charts.sh [REPETITIONS]     (installs rrdtool from Debian's packages when it is missing)
# Environment: BENCH_CHARTS_LINK     "shared" to build with the default shared Swift runtime instead
#              BENCH_CHARTS_PACKAGE  the Swift package that has pulsecharts-bench (default: this repository)
#              BENCH_CHARTS_SCRATCH  its build directory (default: .build-bench-charts in that package)
#              BENCH_CHARTS_DIR      where the data and the SVGs go (default: data in the build directory)
set -euo pipefail

cd "$(dirname "$0")/.."
source scripts/lib/common.sh
ensure_packages rrdtool
REPETITIONS="${1:-15}"
PACKAGE="${BENCH_CHARTS_PACKAGE:-.}"
if [ "${BENCH_CHARTS_LINK:-static}" = shared ]; then
    LINK=()
    SCRATCH="${BENCH_CHARTS_SCRATCH:-$PACKAGE/.build-bench-charts-shared}"
else
    LINK=(--static-swift-stdlib -Xlinker --no-pie -Xlinker --no-export-dynamic)
    SCRATCH="${BENCH_CHARTS_SCRATCH:-$PACKAGE/.build-bench-charts}"
fi
OUT="${BENCH_CHARTS_DIR:-$SCRATCH/data}"

if [ -z "${EPOCHREALTIME:-}" ]; then
    echo "needs bash 5 or later (for \$EPOCHREALTIME)" >&2
    exit 1
fi

BUILD=(swift build --package-path "$PACKAGE" --scratch-path "$SCRATCH" -c release "${LINK[@]}")
"${BUILD[@]}" --product pulsecharts-bench >&2
BIN="$("${BUILD[@]}" --show-bin-path)/pulsecharts-bench"
mkdir -p "$OUT"
"$BIN" data "$OUT" >&2

LINE_START=1735689600
LINE_END=$((LINE_START + 86400))
PANEL_START=1735689600
PANEL_END=$((PANEL_START + 86400))
PANELS=(00 01 02 03 04 05 06 07 08 09 10 11)

# The same values go into the RRDs, in batches of 2,000 updates per rrdtool call.
rm -f "$OUT"/*.rrd
rrdtool create "$OUT/line.rrd" --start "$LINE_START" --step 1 \
    DS:eth0:GAUGE:5:U:U DS:eth1:GAUGE:5:U:U DS:eth2:GAUGE:5:U:U DS:eth3:GAUGE:5:U:U \
    RRA:AVERAGE:0.5:1:86400
xargs -n 2000 rrdtool update "$OUT/line.rrd" < "$OUT/line.updates"
for i in "${PANELS[@]}"; do
    rrdtool create "$OUT/panel-$i.rrd" --start "$PANEL_START" --step 60 \
        DS:rx:GAUGE:120:U:U DS:tx:GAUGE:120:U:U RRA:AVERAGE:0.5:1:1440
    xargs -n 2000 rrdtool update "$OUT/panel-$i.rrd" < "$OUT/panel-$i.updates"
done

rrd_line() {
    rrdtool graph "$OUT/rrd-line.svg" --imgformat SVG --start "$LINE_START" --end "$LINE_END" \
        --width 800 --height 300 --title "Traffic by interface, 1 s resolution" --base 1000 \
        DEF:a="$OUT/line.rrd":eth0:AVERAGE DEF:b="$OUT/line.rrd":eth1:AVERAGE \
        DEF:c="$OUT/line.rrd":eth2:AVERAGE DEF:d="$OUT/line.rrd":eth3:AVERAGE \
        LINE2:a#0072B2:eth0 LINE2:b#E69F00:eth1 LINE2:c#009E73:eth2 LINE2:d#D55E00:eth3 >/dev/null
}

rrd_dashboard() {
    local i n
    for i in "${PANELS[@]}"; do
        n=$((10#$i))
        rrdtool graph "$OUT/rrd-panel-$i.svg" --imgformat SVG --start "$PANEL_START" --end "$PANEL_END" \
            --width 320 --height 120 --title "host$((n / 2 + 1)) eth$((n % 2))" --base 1000 \
            DEF:rx="$OUT/panel-$i.rrd":rx:AVERAGE DEF:tx="$OUT/panel-$i.rrd":tx:AVERAGE CDEF:txn=tx,-1,* \
            AREA:rx#0072B2:Download AREA:txn#E69F00:Upload >/dev/null
    done
}

PANEL_FILES=()
for i in "${PANELS[@]}"; do PANEL_FILES+=("$OUT/panel-$i.bin"); done
our_line() { "$BIN" graph line "$OUT/graph-line.svg" "$OUT/line.bin" >/dev/null; }
our_dashboard() { "$BIN" graph dashboard "$OUT/graph-dashboard.svg" "${PANEL_FILES[@]}" >/dev/null; }
our_panels() {   # the dashboard's panels drawn as rrdtool draws them: one process per panel
    local i n
    for i in "${PANELS[@]}"; do
        n=$((10#$i))
        "$BIN" graph panel "$OUT/graph-panel-$i.svg" "$OUT/panel-$i.bin" "host$((n / 2 + 1)) eth$((n % 2))" >/dev/null
    done
}

# time_us ARRAY COMMAND...: runs COMMAND and appends its wall-clock time in microseconds to ARRAY.
time_us() {
    local -n into=$1
    shift
    local t0=${EPOCHREALTIME/[.,]/}
    "$@"
    local t1=${EPOCHREALTIME/[.,]/}
    into+=($((t1 - t0)))
}
median_ms() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m / 1000 }'; }

rrd_line; our_line; rrd_dashboard; our_dashboard; our_panels   # warm-up: page cache, font cache, dynamic loader
rrd_line_us=(); our_line_us=(); rrd_dash_us=(); our_dash_us=(); our_panels_us=()
for _ in $(seq "$REPETITIONS"); do
    time_us rrd_line_us rrd_line
    time_us our_line_us our_line
    time_us rrd_dash_us rrd_dashboard
    time_us our_dash_us our_dashboard
    time_us our_panels_us our_panels
done
rrd_line_ms=$(median_ms "${rrd_line_us[@]}")
rrd_dash_ms=$(median_ms "${rrd_dash_us[@]}")
cmd_line_ms=$(median_ms "${our_line_us[@]}")
cmd_dash_ms=$(median_ms "${our_dash_us[@]}")
cmd_panels_ms=$(median_ms "${our_panels_us[@]}")
rrd_line_bytes=$(stat -c %s "$OUT/rrd-line.svg")
rrd_dash_bytes=$(cat "$OUT"/rrd-panel-*.svg | wc -c)
cmd_line_bytes=$(stat -c %s "$OUT/graph-line.svg")
cmd_dash_bytes=$(stat -c %s "$OUT/graph-dashboard.svg")
cmd_panels_bytes=$(cat "$OUT"/graph-panel-*.svg | wc -c)

lib="$("$BIN" render "$OUT" "$REPETITIONS")"
echo "$lib" >&2
field() { echo "$lib" | awk -v row="$1" -v key="$2" '$1 == row && $2 ~ "^median_ms=" { for (i = 2; i <= NF; i++) if (index($i, key "=") == 1) print substr($i, length(key) + 2) }'; }
lib_line_ms=$(field line median_ms)
lib_line_bytes=$(field line bytes)
lib_dash_ms=$(field dashboard median_ms)
lib_dash_bytes=$(field dashboard bytes)

for name in line dashboard; do
    if ! cmp -s "$OUT/graph-$name.svg" "$OUT/$name.svg"; then
        echo "$OUT/graph-$name.svg and $OUT/$name.svg differ: graph and render must write the same SVG" >&2
        exit 1
    fi
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }
row() {   # row CHART MEASUREMENT OUR_MS RRD_MS OUR_BYTES RRD_BYTES
    printf '%-22s %-34s %9s %11s %9s %10s %14s %6s\n' "$1" "$2" "$3" "$4" "$(ratio "$4" "$3")" "$5" "$6" \
        "$(awk -v a="$5" -v b="$6" 'BEGIN { printf "%.2f", a / b }')"
}
echo
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; rrdtool $(rrdtool --version | awk 'NR == 1 { print $2 }');" \
    "repetitions: $REPETITIONS (median); Swift runtime: ${BENCH_CHARTS_LINK:-static} (BENCH_CHARTS_LINK)"
printf '%-22s %-34s %9s %11s %9s %10s %14s %6s\n' "chart" "PulseCharts measured as" "ours ms" "rrdtool ms" \
    "speed-up" "ours B" "rrdtool B" "size"
row "line, 4 x 86,400" "whole command (1 process)" "$cmd_line_ms" "$rrd_line_ms" "$cmd_line_bytes" "$rrd_line_bytes"
row "line, 4 x 86,400" "library call, data in memory" "$lib_line_ms" "$rrd_line_ms" "$lib_line_bytes" \
    "$rrd_line_bytes"
row "dashboard, 12 panels" "whole command (1 vs 12 processes)" "$cmd_dash_ms" "$rrd_dash_ms" "$cmd_dash_bytes" \
    "$rrd_dash_bytes"
row "dashboard, 12 panels" "whole command (12 vs 12 processes)" "$cmd_panels_ms" "$rrd_dash_ms" \
    "$cmd_panels_bytes" "$rrd_dash_bytes"
row "dashboard, 12 panels" "library call, data in memory" "$lib_dash_ms" "$rrd_dash_ms" "$lib_dash_bytes" \
    "$rrd_dash_bytes"
echo "rrdtool is always the whole \`rrdtool graph\` command; size is ours / rrdtool's."
