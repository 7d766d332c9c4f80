#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: unit tests, and end-to-end tests that start the real
# netpulsed and netpulse-agent with real certificates (as root they also use network namespaces).
#   scripts/test.sh                 everything
#   scripts/test.sh --filter NAME   only tests whose name matches NAME (passed to `swift test`)
# Without arguments it ends with scripts/fuzz.sh: 20 s per fuzz target; FUZZ_SECONDS=600 scripts/test.sh fuzzes longer.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
ensure_packages chromium chromium-driver python3-selenium python3-fusepy openssl testssl.sh nftables curl faketime  # browser checks of dashboards, alert charts and reports, and Selenium driving the live pages; a slow disk (FUSE); TLS checks with real clients; a lossy link; HTTP requests to Prometheus and the daemon; one frozen instant for two processes
ensure_prometheus  # a real Prometheus scrapes netpulsed's own metrics
ensure_postgresql  # the shared store's tests start PostgreSQL clusters of their own

echo "==> checking imports against Package.swift (scripts/check-imports.py)"
scripts/check-imports.py

echo "==> building (debug) with $(swift --version 2>/dev/null | head -n 1)"
# Progress lines are hidden; with pipefail the build's own status decides.
swift build --build-tests 2>&1 | { grep -Ev '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Wrapping|Linking|Applying)' || true; }

# The Debian packages of this build, for the test that installs, upgrades and purges them (PackageTests): debug
# programs linked as the release ones are (a release build would add ten minutes); revision 2 is the upgrade.
echo "==> packaging (scripts/package.sh --debug)"
rm -rf .build/packages/test  # only this build's packages: the test takes them by name and revision
scripts/package.sh --debug --out .build/packages/test --revision 1 --revision 2

echo "==> testing"
# Each test process runs under a time limit well above its usual length, with its output kept in a log: a test that
# hangs then fails the run with the names of the tests it left unfinished, where it would otherwise hold the run
# until CI's own limit and show nothing of the tests beside.
within() { # SECONDS NAME LOG show|quiet COMMAND…: COMMAND's status (124 when it overran, said with what it left unfinished)
    local seconds=$1 name=$2 log=$3 show=$4 status=0
    shift 4
    if [ "$show" = show ]; then
        timeout --kill-after=30 "$seconds" "$@" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
    else
        timeout --kill-after=30 "$seconds" "$@" >"$log" 2>&1 || status=$?
    fi
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        {
            echo "==> $name did not end within $seconds s and was stopped; tests started and not finished:"
            awk '/◇ Test .* started\.$/ { t = $0; sub(/^.*◇ Test /, "", t); sub(/ started\.$/, "", t); open[t]++ }
                 /(✔|✘) Test .* (passed|failed) after / {
                     t = $0; sub(/^.*(✔|✘) Test /, "", t); sub(/ (passed|failed) after .*$/, "", t); open[t]-- }
                 END { for (t in open) if (open[t] > 0) print "    " t }' "$log"
        } | tee -a "$log" >&2
        return 124
    fi
    return "$status"
}
if [ $# -gt 0 ]; then
    swift test --skip-build "$@"
else
    # The end-to-end tests run one at a time (EndToEnd is serialized), and mostly wait: for agents' batches, a
    # certificate's three minutes, a browser (21 minutes in a row, 3.5 of them on a CPU). Those that boot a systemd
    # or a Prometheus, or wait out a certificate, run in a process of their own beside the rest, so that the two
    # chains' waits overlap; its output follows the first's. The first takes about 16 minutes, the one beside 11.
    beside='\.EndToEnd/(PackageTests|SystemdTests|RemoteWriteTests|RenewalTests|AlertTests|MoveTests)/'
    within 1800 "the process beside" .build/tests-beside.log quiet \
        "$(swift build --show-bin-path)/netpulsePackageTests.xctest" --testing-library swift-testing --filter "$beside" &
    beside_pid=$!
    status=0
    within 2400 "the first test process" .build/tests-first.log show \
        swift test --skip-build --skip PulseSystemdTests --skip PostgresOutageTests --skip "$beside" || status=$?
    beside_status=0
    wait "$beside_pid" || beside_status=$?
    echo "==> the end-to-end tests run beside: $beside"
    cat .build/tests-beside.log
    if [ "$status" -ne 0 ] || [ "$beside_status" -ne 0 ]; then
        # The failures again, last, from both logs: a CI that shows only the head and the tail of a long output
        # then still shows what failed and why, wherever in the two logs it was.
        echo "==> what failed, from both test processes:" >&2
        awk '/✘ Test .* recorded an issue/ { shown = 1; n = 0; print; next }
             shown && /^↳/ && n < 40 { n++; print; next }
             { shown = 0 }' .build/tests-first.log .build/tests-beside.log >&2
        echo "==> tests failed (exit status $status, and $beside_status for those beside)" >&2
        exit 1
    fi
    # PulseSystemdTests set NOTIFY_SOCKET and friends in the process environment, which must not change while other
    # tests start processes; they get a process of their own.
    within 900 PulseSystemdTests .build/tests-systemd.log show \
        swift test --skip-build --filter PulseSystemdTests || status=$?
    [ "$status" -eq 0 ] || exit 1
    # How long a call takes while PostgreSQL is down, measured away from the whole suite's load.
    within 600 PostgresOutageTests .build/tests-outage.log show \
        swift test --skip-build --filter PostgresOutageTests || status=$?
    [ "$status" -eq 0 ] || exit 1
    echo "==> fuzzing (libFuzzer, AddressSanitizer)"
    scripts/fuzz.sh
fi
