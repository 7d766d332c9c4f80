#!/usr/bin/env bash
# Installs Netpulse as systemd services: release binaries, units, example configs (an operator's edited config is
# never overwritten), the `netpulse` group that may read the certificates, and enables the services (and, with the
# daemon, the daily report timer).
#
#   scripts/install.sh [--prefix /usr/local] [--binaries DIR] [--no-enable] [--start]
#                      [--only agent|daemon] [--socket-activation]
#
#   --binaries DIR        install these binaries instead of building release ones (the tests use their build)
#   --only agent|daemon   install one side only (agents need only netpulse-agent)
#   --socket-activation   enable netpulsed.socket (netpulsed starts on the first connection) instead of the service
#   --start               start what was enabled (do this once the certificates are in /etc/netpulse)
set -euo pipefail

PREFIX=/usr/local
BINARIES=""
ENABLE=yes
START=no
ONLY=all
SOCKET=no
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX=$2; shift 2 ;;
        --binaries) BINARIES=$(realpath "$2"); shift 2 ;;
        --no-enable) ENABLE=no; shift ;;
        --start) START=yes; shift ;;
        --only) ONLY=$2; shift 2 ;;
        --socket-activation) SOCKET=yes; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root (it writes $PREFIX/bin, /etc and the systemd units)" >&2; exit 1; }

if [ -z "$BINARIES" ]; then
    source scripts/lib/common.sh
    ensure_packages
    echo "==> building release binaries"
    build_release
    BINARIES=.build/release
    AGENT_BINARY=$AGENT_RELEASE
else
    AGENT_BINARY=$BINARIES/netpulse-agent
fi

UNITS=/etc/systemd/system
CONF=/etc/netpulse
install -d -m 0755 "$PREFIX/bin" "$PREFIX/share/doc/netpulse"
echo "==> binaries in $PREFIX/bin"
install -m 0755 "$BINARIES/netpulse" "$PREFIX/bin/netpulse"
[ "$ONLY" = daemon ] || install -m 0755 "$AGENT_BINARY" "$PREFIX/bin/netpulse-agent"
[ "$ONLY" = agent ] || install -m 0755 "$BINARIES/netpulsed" "$PREFIX/bin/netpulsed"
install -m 0644 docs/*.md "$PREFIX/share/doc/netpulse/"

# Services run as a dynamic user with the supplementary group `netpulse`, which may read /etc/netpulse.
getent group netpulse >/dev/null || groupadd --system netpulse
install -d -m 0750 -g netpulse "$CONF"
install_config() { # never overwrite an operator's file
    if [ -e "$CONF/$2" ]; then
        if ! cmp -s "config/$1" "$CONF/$2"; then echo "    keeping your $CONF/$2 (the example is config/$1)"; fi
    else
        install -m 0640 -g netpulse "config/$1" "$CONF/$2"
        echo "    $CONF/$2 (example; edit it)"
    fi
}
echo "==> configs in $CONF"
[ "$ONLY" = daemon ] || install_config agent.toml agent.toml
[ "$ONLY" = agent ] || install_config netpulsed.toml netpulsed.toml
# Certificates and keys already there become readable by the services (group netpulse, not by others).
for file in "$CONF"/*.pem; do
    [ -e "$file" ] || continue
    chgrp netpulse "$file"
    chmod g+r,o-rwx "$file"
done
if [ "$ONLY" != agent ]; then
    # netpulse-report.service writes here; new files get group netpulse (setgid), whose members may read them.
    install -d -m 2775 -o root -g netpulse /var/lib/netpulse-reports
fi

echo "==> units in $UNITS"
sed_prefix() { sed "s|/usr/local/|$PREFIX/|g" "$1"; }
units=()
[ "$ONLY" = daemon ] || units+=(netpulse-agent.service)
[ "$ONLY" = agent ] || units+=(netpulsed.service netpulsed.socket netpulse-report.service netpulse-report.timer)
for unit in "${units[@]}"; do
    sed_prefix "systemd/$unit" >"$UNITS/$unit.tmp" && mv "$UNITS/$unit.tmp" "$UNITS/$unit"
    chmod 0644 "$UNITS/$unit"
done
systemctl daemon-reload

enabled=()
[ "$ONLY" = daemon ] || enabled+=(netpulse-agent.service)
if [ "$ONLY" != agent ]; then
    if [ "$SOCKET" = yes ]; then enabled+=(netpulsed.socket); else enabled+=(netpulsed.service); fi
    enabled+=(netpulse-report.timer)
fi
if [ "$ENABLE" = yes ]; then
    systemctl enable "${enabled[@]}"
fi
# An upgrade: services already running get the new binaries now.
systemctl try-restart "${units[@]}" 2>/dev/null || true
if [ "$START" = yes ]; then
    systemctl start "${enabled[@]}"
fi
cat <<TEXT
==> installed. Next:
    netpulse ca init --dir /etc/netpulse/ca
    netpulse ca issue --dir /etc/netpulse/ca --daemon netpulsed --out $CONF --group netpulse
    netpulse ca issue --dir /etc/netpulse/ca --agent \$(hostname) --out $CONF --group netpulse
    systemctl start ${enabled[*]}
    systemctl status ${enabled[*]}
TEXT
