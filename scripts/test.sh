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
if [ $# -gt 0 ]; then
    swift test --skip-build "$@"
else
    # The end-to-end tests run one at a time (EndToEnd is serialized), and mostly wait: for agents' batches, a
    # certificate's three minutes, a browser (21 minutes in a row, 3.5 of them on a CPU). Those that boot a systemd
    # or a Prometheus, or wait out a certificate, run in a process of their own beside the rest, so that the two
    # chains' waits overlap; its output follows the first's.
    beside='\.EndToEnd/(PackageTests|SystemdTests|RemoteWriteTests|RenewalTests|AlertTests|MoveTests)/'
    "$(swift build --show-bin-path)/netpulsePackageTests.xctest" --testing-library swift-testing --filter "$beside" \
        >.build/tests-beside.log 2>&1 &
    beside_pid=$!
    status=0
    swift test --skip-build --skip PulseSystemdTests --skip PostgresOutageTests --skip "$beside" || status=$?
    beside_status=0
    wait "$beside_pid" || beside_status=$?
    echo "==> the end-to-end tests run beside: $beside"
    cat .build/tests-beside.log
    if [ "$status" -ne 0 ] || [ "$beside_status" -ne 0 ]; then
        echo "==> tests failed (exit status $status, and $beside_status for those beside)" >&2
        exit 1
    fi
    # PulseSystemdTests set NOTIFY_SOCKET and friends in the process environment, which must not change while other
    # tests start processes; they get a process of their own.
    swift test --skip-build --filter PulseSystemdTests
    # How long a call takes while PostgreSQL is down, measured away from the whole suite's load.
    swift test --skip-build --filter PostgresOutageTests
    echo "==> fuzzing (libFuzzer, AddressSanitizer)"
    scripts/fuzz.sh
fi
