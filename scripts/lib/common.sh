# Shared by the scripts: Swift on PATH, and the Debian packages Netpulse needs, installed when missing.
# shellcheck shell=bash

export PATH="/opt/swift/usr/bin:$PATH"
export DEBIAN_FRONTEND=noninteractive

# Packages for building (SQLite headers for GRDB), for the tests (iproute2 for network namespaces, openssl for
# certificate checks, librsvg2-bin and libxml2-utils to render and parse chart SVGs) and for the demo.
NETPULSE_PACKAGES=(libsqlite3-dev iproute2 openssl librsvg2-bin libxml2-utils procps python3 ca-certificates)

ensure_packages() {
    local missing=()
    local package
    for package in "${NETPULSE_PACKAGES[@]}" "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "==> installing ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    if ! command -v swift >/dev/null; then
        echo "error: swift not found; install Swift 6.3 at /opt/swift (see https://www.swift.org/install/linux/)" >&2
        exit 1
    fi
}
