#!/usr/bin/env bash
# Removes what scripts/install.sh installed: stops and disables the services and the report timer, removes units,
# binaries and docs. Configs (/etc/netpulse) and data (/var/lib/netpulsed, /var/lib/netpulse-agent, the reports in
# /var/lib/netpulse-reports, dashboards and snapshots in /var/lib/netpulse-published) stay unless --purge. Keys,
# certificates and CA directories stay even then: they are the operator's, and a fleet's CA cannot be made again.
#   scripts/uninstall.sh [--prefix /usr/local] [--purge]
set -euo pipefail
PREFIX=/usr/local
PURGE=no
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX=$2; shift 2 ;;
        --purge) PURGE=yes; shift ;;
        -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
        *) echo "uninstall.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "uninstall.sh: run as root" >&2; exit 1; }

units=(netpulse-agent.service netpulsed.socket netpulsed.service netpulse-report.timer netpulse-report.service
    netpulse-certificates.timer netpulse-certificates.service)
systemctl disable --now "${units[@]}" 2>/dev/null || true
for unit in "${units[@]}"; do rm -f "/etc/systemd/system/$unit"; done
systemctl daemon-reload
rm -f "$PREFIX/bin/netpulse" "$PREFIX/bin/netpulse-agent" "$PREFIX/bin/netpulsed"
rm -rf "$PREFIX/share/doc/netpulse"
if [ "$PURGE" = yes ]; then
    # StateDirectory= with DynamicUser= keeps data under /var/lib/private.
    rm -f /etc/netpulse/agent.toml /etc/netpulse/netpulsed.toml
    rmdir /etc/netpulse 2>/dev/null || true
    # A data directory where someone keeps a key (a CA's, say) is left, and said.
    for dir in /var/lib/netpulsed /var/lib/netpulse-agent /var/lib/private/netpulsed /var/lib/private/netpulse-agent \
        /var/log/netpulsed /var/log/netpulse-agent /var/lib/netpulse-reports /var/lib/netpulse-published; do
        if [ -d "$dir" ] && [ ! -L "$dir" ] && [ -n "$(find "$dir" -name '*key.pem' -print -quit)" ]; then
            echo "keeping $dir: it holds a key (*key.pem); remove it yourself" >&2
            continue
        fi
        rm -rf "$dir"
    done
    # The groups go with the last file of theirs: kept keys stay in their role's group (a group made later would
    # otherwise inherit its number, and the keys).
    if [ ! -d /etc/netpulse ]; then
        for group in netpulse netpulse-daemon netpulse-agents; do
            getent group $group >/dev/null && groupdel $group || true
        done
    fi
    if [ -d /etc/netpulse ]; then
        echo "removed Netpulse, its configuration and data; kept the keys, certificates and CA in /etc/netpulse"
    else
        echo "removed Netpulse, its configuration and data"
    fi
else
    echo "removed Netpulse; kept /etc/netpulse and the data in /var/lib (use --purge to remove them)"
fi
