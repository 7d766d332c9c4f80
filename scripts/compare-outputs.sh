#!/usr/bin/env bash
# Proves a change kept what users read: the same commands of two `netpulse` builds, over the same store at the same
# frozen time, must print and write the same bytes (tables, JSON, CSV, snapshots, reports with their SVGs), and the
# two `netpulsed` builds, started over copies of that store at that time, must draw the same dashboards.
#   scripts/compare-outputs.sh BASE_REV          builds BASE_REV in a worktree beside this one (debug) and compares
#                                                it with this checkout's debug build
# The store is made by the base build's own `netpulse-bench query-store` (rollups bulk-loaded, not ingested): what
# is compared is the reading and the drawing; the writer is held to the oracle by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
ensure_packages faketime
base_rev=${1:?usage: scripts/compare-outputs.sh BASE_REV}
work=${COMPARE_DIR:-/tmp/netpulse-compare}
base_tree=$work/base
mkdir -p "$work"
if [ ! -d "$base_tree" ]; then git worktree add --detach "$base_tree" "$base_rev"; fi
git -C "$base_tree" checkout -q --detach "$base_rev"
echo "==> building $base_rev and this checkout (debug)"
(cd "$base_tree" && for product in netpulse netpulsed netpulse-bench; do swift build --product $product >/dev/null; done)
swift build --product netpulse >/dev/null
swift build --product netpulsed >/dev/null
old=$base_tree/.build/debug/netpulse
new=$PWD/.build/debug/netpulse
store=$work/store
rm -rf "$store"
echo "==> a store of 320 interfaces × 40 days ($base_rev's netpulse-bench query-store)"
"$base_tree/.build/debug/netpulse-bench" query-store "$store" 320 40 >/dev/null
config=$store/netpulsed.toml
# One instant for both builds, frozen (libfaketime), and a window of whole days before it.
today=$(date -u -d "$(date -u +%Y-%m-%d)" +%s)
now="$(date -u -d "@$today" +%Y-%m-%d) 07:00:00"
from=$(date -u -d "@$((today - 2 * 86400))" +%Y-%m-%d)
to=$(date -u -d "@$((today - 86400))" +%Y-%m-%d)
out=$work/out
rm -rf "$out"
for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    dir=$out/$side
    mkdir -p "$dir/report"
    # What a command prints on both streams, and how it exits (a refusal is output too).
    at() { FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f "$now" "$bin" "$@" --config "$config" 2>&1 || echo "exit $?"; }
    for format in table json csv; do
        at traffic --from "$from" --to "$to" --format $format >"$dir/traffic.$format"
        at traffic --from "$from" --to "$to" --format $format --scope host --by hour >"$dir/traffic-hosts.$format"
        at top --from "$from" --to "$to" --format $format >"$dir/top.$format"
        at top --from "$from" --to "$to" --format $format --by p95 >"$dir/top-p95.$format"
        at rates --format $format >"$dir/rates.$format"
        at bill --format $format >"$dir/bill.$format"
        at bill --period previous --format $format --scope fleet >"$dir/bill-fleet.$format"
        at export --from "$from" --to "$to" --format $format --level 1h >"$dir/export.$format"
        at export --from "$from" --to "$to" --format $format --level 5m --scope host >"$dir/export-hosts.$format"
        at snapshot --format $format >"$dir/snapshot.$format"
    done
    at report --from "$from" --to "$to" --output "$dir/report" >/dev/null
done

# The daemon draws every dashboard and range at start when none is on disk: run each build over its own copy of the
# store (a daemon writes to it: bills, its own rows) until the drawing is done, then stop it.
echo "==> dashboards drawn by both netpulsed builds"
"$new" ca init --dir "$work/ca" >/dev/null 2>&1 || true
[ -f "$work/ca/netpulsed.pem" ] || "$new" ca issue --dir "$work/ca" --daemon netpulsed >/dev/null
for side in old new; do
    daemon=$base_tree/.build/debug/netpulsed
    [ "$side" = new ] && daemon=$PWD/.build/debug/netpulsed
    copy=$work/store-$side
    rm -rf "$copy"
    cp -a "$store" "$copy"
    port=$((20000 + RANDOM % 20000))
    cat >"$copy/netpulsed.toml" <<TOML
[daemon]
state_directory = "$copy/netpulsed"
[listen]
address = "127.0.0.1:$port"
[tls]
ca = "$work/ca/ca.pem"
certificate = "$work/ca/netpulsed.pem"
key = "$work/ca/netpulsed-key.pem"
[rollups]
levels = ["5m", "1h", "1d"]
[dashboards]
directory = "$out/$side/dashboards"
busy_share = 1
[snapshots]
enabled = false
TOML
    FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f "$now" "$daemon" --config "$copy/netpulsed.toml" 2>"$work/netpulsed-$side.log" &
    pid=$!
    trap 'kill $pid 2>/dev/null || true' EXIT
    # Done when index.html is there and no file has come for 5 s (each page is written whole, then renamed).
    last=-1
    for _ in $(seq 1 600); do
        sleep 5
        count=$( (find "$out/$side/dashboards" -type f 2>/dev/null || true) | wc -l)
        if [ -f "$out/$side/dashboards/index.html" ] && [ "$count" = "$last" ]; then break; fi
        last=$count
        kill -0 $pid 2>/dev/null || { echo "netpulsed ($side) stopped:" >&2; tail -5 "$work/netpulsed-$side.log" >&2; exit 1; }
    done
    # faketime runs the daemon as its child: stop the daemon, not just the wrapper.
    pkill -TERM -P $pid || true
    wait $pid || true
    rm -rf "$copy"
done
if diff -r "$out/old" "$out/new" >"$work/diff.txt"; then
    echo "identical: $(find "$out/new" -type f | wc -l) files, $(du -sb "$out/new" | cut -f1) bytes ($base_rev and this checkout)"
else
    echo "DIFFERENT ($work/diff.txt):" >&2
    head -40 "$work/diff.txt" >&2
    exit 1
fi
