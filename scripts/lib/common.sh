# Shared by the scripts: Swift on PATH, and the Debian packages Netpulse needs, installed when missing.
# shellcheck shell=bash

export PATH="/opt/swift/usr/bin:$PATH"
export DEBIAN_FRONTEND=noninteractive

# Packages for building (SQLite headers for GRDB; libsystemd for readiness, watchdog and the journal; libsnappy for
# remote write), all that scripts/install.sh needs:
NETPULSE_BUILD_PACKAGES=(libsqlite3-dev libsystemd-dev libsnappy-dev ca-certificates)
# and with them, for the tests (iproute2 for network namespaces, openssl for certificate checks, systemd to boot in a sandbox for the
# service tests, librsvg2-bin and libxml2-utils to render and parse chart SVGs, tzdata for time zones, python3 for
# the reference computation in Tests/Oracle and python3-jsonschema to validate snapshots) and for the demo.
NETPULSE_PACKAGES=("${NETPULSE_BUILD_PACKAGES[@]}" systemd iproute2 openssl librsvg2-bin libxml2-utils procps python3
    tzdata python3-jsonschema)

# The build's and the tests' packages, and any named.
ensure_packages() {
    ensure_listed "${NETPULSE_PACKAGES[@]}" "$@"
}

# The build's packages only, and any named.
ensure_build_packages() {
    ensure_listed "${NETPULSE_BUILD_PACKAGES[@]}" "$@"
}

ensure_listed() {
    local missing=()
    local package
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "==> installing ${missing[*]}"
        local sudo=""
        if [ "$(id -u)" -ne 0 ]; then
            command -v sudo >/dev/null || {
                echo "error: missing Debian packages ${missing[*]}; run this as root (or install sudo)" >&2
                exit 1
            }
            sudo="sudo"
        fi
        $sudo apt-get update -qq
        $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    if ! command -v swift >/dev/null; then
        echo "error: swift not found; install Swift 6.3 at /opt/swift (see https://www.swift.org/install/linux/)" >&2
        exit 1
    fi
}

# Release builds of the three programs. The agent is built as it ships: size-optimised, the Swift runtime linked
# in, position-dependent and without exported symbols. Its resident memory is mostly its own code mapped from
# disk, so a smaller binary with fewer relocations is a smaller process (docs/benchmarks.md). It has its own build
# directory because these flags apply to every module it links.
AGENT_RELEASE=.build-agent/release/netpulse-agent
build_release() { # [agent|daemon|all]: the agent, the daemon and the CLI, or all three (the default)
    local only=${1:-all}
    # Package.swift links the Swift runtime into each program, as the packages ship them.
    if [ "$only" != agent ]; then
        swift build -c release --product netpulsed >/dev/null
        swift build -c release --product netpulse >/dev/null
    fi
    if [ "$only" != daemon ]; then
        swift build -c release --scratch-path .build-agent --product netpulse-agent \
            -Xswiftc -Osize -Xlinker --no-export-dynamic -Xlinker --no-pie -Xlinker --icf=all >/dev/null
    fi
    # Test-only switches (TestEnvironment in Sources/PulseCore/Support: the stepping clock, the fault points) are
    # compiled out of release builds.
    local binary
    for binary in .build/release/netpulsed .build-agent/release/netpulse-agent; do
        [ -e "$binary" ] || continue
        if grep -q NETPULSE_TEST_ "$binary"; then
            echo "error: $binary contains a test-only switch (NETPULSE_TEST_…)" >&2
            return 1
        fi
    done
}

# Debian's PostgreSQL 15 for the tests of the shared store: the tests start throwaway clusters of their own
# (Tests/TestSupport/PostgresServer.swift), so the package's own cluster must not start. A policy-rc.d that refuses
# every service start keeps the install from starting it; it is removed after.
ensure_postgresql() {
    [ -x /usr/lib/postgresql/15/bin/initdb ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    local guard=/usr/sbin/policy-rc.d
    local placed=""
    if [ ! -e "$guard" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$guard" >/dev/null
        $sudo chmod 755 "$guard"
        placed=1
    fi
    echo "==> installing postgresql-15"
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
    [ -n "$placed" ] && $sudo rm -f "$guard"
    return 0
}

# Debian's Prometheus 2.42 for the tests that scrape netpulsed, unpacked into .build/tools/prometheus rather than
# installed: installing the package starts its system service, and a test must start its own server on loopback.
PROMETHEUS_TOOLS=.build/tools/prometheus
ensure_prometheus() {
    [ -x "$PROMETHEUS_TOOLS/usr/bin/prometheus" ] && return 0
    local download
    download=$(mktemp -d)
    chmod 755 "$download"  # apt's _apt user writes the download here
    if ! (cd "$download" && apt-get download -qq prometheus >/dev/null 2>&1); then
        apt-get update -qq
        (cd "$download" && apt-get download -qq prometheus >/dev/null 2>&1)
    fi
    rm -rf "$PROMETHEUS_TOOLS.partial"
    mkdir -p "$PROMETHEUS_TOOLS.partial"
    dpkg -x "$download"/prometheus_*.deb "$PROMETHEUS_TOOLS.partial"
    rm -rf "$download" "$PROMETHEUS_TOOLS"
    mv "$PROMETHEUS_TOOLS.partial" "$PROMETHEUS_TOOLS"
}
