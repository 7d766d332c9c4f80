#!/usr/bin/env bash
# Removes what scripts/install.sh installed: stops and disables the services and the report timer, removes units,
# binaries and docs. Configs, certificates (/etc/netpulse) and data (/var/lib/netpulsed, /var/lib/netpulse-agent,
# the reports in /var/lib/netpulse-reports, dashboards and snapshots in /var/lib/netpulse-published) stay unless
# --purge.
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

units=(netpulse-agent.service netpulsed.socket netpulsed.service netpulse-report.timer netpulse-report.service)
systemctl disable --now "${units[@]}" 2>/dev/null || true
for unit in "${units[@]}"; do rm -f "/etc/systemd/system/$unit"; done
systemctl daemon-reload
rm -f "$PREFIX/bin/netpulse" "$PREFIX/bin/netpulse-agent" "$PREFIX/bin/netpulsed"
rm -rf "$PREFIX/share/doc/netpulse"
if [ "$PURGE" = yes ]; then
    # StateDirectory= with DynamicUser= keeps data under /var/lib/private.
    rm -rf /etc/netpulse /var/lib/netpulsed /var/lib/netpulse-agent /var/lib/private/netpulsed \
        /var/lib/private/netpulse-agent /var/log/netpulsed /var/log/netpulse-agent /var/lib/netpulse-reports /var/lib/netpulse-published
    for group in netpulse netpulse-daemon netpulse-agents; do
        getent group $group >/dev/null && groupdel $group || true
    done
    echo "removed Netpulse, its configuration, certificates and data"
else
    echo "removed Netpulse; kept /etc/netpulse and the data in /var/lib (use --purge to remove them)"
fi
