#!/usr/bin/env bash
# Benchmarks PulseCharts against rrdtool on the same data, in the same run:
#   (a) one line chart of 86,400 points in four series (one day at 1 s),
#   (b) a dashboard of 12 panels (one day at 1 min, download up and upload down).
# Each side is run REPETITIONS times and the median is reported, with the size of the SVG it wrote.
# rrdtool draws one graph per invocation, so its dashboard time is the sum of 12 `rrdtool graph` runs and its
# size the sum of the 12 files. Our times are measured inside pulsecharts-bench (build the chart from data in
# memory, render, write the file); rrdtool's are wall-clock times of the command, which include reading the RRD.
#
# Usage: scripts/bench-charts.sh [REPETITIONS]     (needs rrdtool: apt-get install -y rrdtool)
set -euo pipefail

cd "$(dirname "$0")/.."
REPETITIONS="${1:-15}"
OUT="${BENCH_CHARTS_DIR:-.build/bench-charts}"

if ! command -v rrdtool >/dev/null; then
    echo "rrdtool is not installed: apt-get install -y rrdtool" >&2
    exit 1
fi

swift build -c release --product pulsecharts-bench >&2
BIN="$(swift build -c release --show-bin-path)/pulsecharts-bench"
mkdir -p "$OUT"
"$BIN" data "$OUT" >&2

LINE_START=1735689600
LINE_END=$((LINE_START + 86400))
PANEL_START=1735689600
PANEL_END=$((PANEL_START + 86400))

# The same values go into the RRDs, in batches of 2,000 updates per rrdtool call.
rm -f "$OUT"/*.rrd
rrdtool create "$OUT/line.rrd" --start "$LINE_START" --step 1 \
    DS:eth0:GAUGE:5:U:U DS:eth1:GAUGE:5:U:U DS:eth2:GAUGE:5:U:U DS:eth3:GAUGE:5:U:U \
    RRA:AVERAGE:0.5:1:86400
xargs -n 2000 rrdtool update "$OUT/line.rrd" < "$OUT/line.updates"
for i in $(seq -w 0 11); do
    rrdtool create "$OUT/panel-$i.rrd" --start "$PANEL_START" --step 60 \
        DS:rx:GAUGE:120:U:U DS:tx:GAUGE:120:U:U RRA:AVERAGE:0.5:1:1440
    xargs -n 2000 rrdtool update "$OUT/panel-$i.rrd" < "$OUT/panel-$i.updates"
done

now_us() { echo $(( $(date +%s%N) / 1000 )); }   # microseconds
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

rrd_line() {
    rrdtool graph "$OUT/rrd-line.svg" --imgformat SVG --start "$LINE_START" --end "$LINE_END" \
        --width 800 --height 300 --title "Traffic by interface, 1 s resolution" --base 1000 \
        DEF:a="$OUT/line.rrd":eth0:AVERAGE DEF:b="$OUT/line.rrd":eth1:AVERAGE \
        DEF:c="$OUT/line.rrd":eth2:AVERAGE DEF:d="$OUT/line.rrd":eth3:AVERAGE \
        LINE2:a#0072B2:eth0 LINE2:b#E69F00:eth1 LINE2:c#009E73:eth2 LINE2:d#D55E00:eth3 >/dev/null
}

rrd_dashboard() {
    for i in $(seq -w 0 11); do
        n=$((10#$i))
        rrdtool graph "$OUT/rrd-panel-$i.svg" --imgformat SVG --start "$PANEL_START" --end "$PANEL_END" \
            --width 320 --height 120 --title "host$((n / 2 + 1)) eth$((n % 2))" --base 1000 \
            DEF:rx="$OUT/panel-$i.rrd":rx:AVERAGE DEF:tx="$OUT/panel-$i.rrd":tx:AVERAGE CDEF:txn=tx,-1,* \
            AREA:rx#0072B2:Download AREA:txn#E69F00:Upload >/dev/null
    done
}

rrd_line; rrd_dashboard   # warm the page cache and font cache before timing
line_times=(); dash_times=()
for _ in $(seq "$REPETITIONS"); do
    t0=$(now_us); rrd_line; t1=$(now_us); rrd_dashboard; t2=$(now_us)
    line_times+=($((t1 - t0))); dash_times+=($((t2 - t1)))
done
rrd_line_ms=$(printf '%s\n' "${line_times[@]}" | median | awk '{ printf "%.2f", $1 / 1000 }')
rrd_dash_ms=$(printf '%s\n' "${dash_times[@]}" | median | awk '{ printf "%.2f", $1 / 1000 }')
rrd_line_bytes=$(stat -c %s "$OUT/rrd-line.svg")
rrd_dash_bytes=$(cat "$OUT"/rrd-panel-*.svg | wc -c)

ours="$("$BIN" render "$OUT" "$REPETITIONS")"
echo "$ours" >&2
our_line_ms=$(echo "$ours" | awk '/^line +median_ms/ { sub("median_ms=", "", $2); print $2 }')
our_line_bytes=$(echo "$ours" | awk '/^line +median_ms/ { sub("bytes=", "", $3); print $3 }')
our_dash_ms=$(echo "$ours" | awk '/^dashboard/ { sub("median_ms=", "", $2); print $2 }')
our_dash_bytes=$(echo "$ours" | awk '/^dashboard/ { sub("bytes=", "", $3); print $3 }')

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; repetitions: $REPETITIONS (median)"
printf '%-34s %12s %12s %14s %14s\n' "chart" "ours ms" "rrdtool ms" "ours bytes" "rrdtool bytes"
printf '%-34s %12s %12s %14s %14s\n' "line, 4 x 86,400 points" "$our_line_ms" "$rrd_line_ms" "$our_line_bytes" "$rrd_line_bytes"
printf '%-34s %12s %12s %14s %14s\n' "dashboard, 12 panels x 2 x 1,440" "$our_dash_ms" "$rrd_dash_ms" "$our_dash_bytes" "$rrd_dash_bytes"
echo
echo "line:      $(ratio "$rrd_line_ms" "$our_line_ms")x faster than rrdtool, file $(ratio "$our_line_bytes" "$rrd_line_bytes")x the size"
echo "dashboard: $(ratio "$rrd_dash_ms" "$our_dash_ms")x faster than rrdtool, file $(ratio "$our_dash_bytes" "$rrd_dash_bytes")x the size"
