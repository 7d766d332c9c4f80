#!/usr/bin/env bash
# Installs Netpulse as systemd services: release binaries, units, example configs (an operator's edited config is
# never overwritten), a group per role (netpulse-daemon, netpulse-agents: each reads its own key and config; netpulse:
# the reports' readers), and enables the services (and, with the daemon, the daily report timer).
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
    ensure_build_packages
    echo "==> building release binaries"
    build_release "$ONLY"
    BINARIES=.build/release
    AGENT_BINARY=$AGENT_RELEASE
else
    AGENT_BINARY=$BINARIES/netpulse-agent
fi

UNITS=/etc/systemd/system
CONF=/etc/netpulse
install -d -m 0755 "$PREFIX/bin" "$PREFIX/share/doc/netpulse"
echo "==> binaries in $PREFIX/bin"
[ "$ONLY" = agent ] || install -m 0755 "$BINARIES/netpulse" "$PREFIX/bin/netpulse"
[ "$ONLY" = daemon ] || install -m 0755 "$AGENT_BINARY" "$PREFIX/bin/netpulse-agent"
[ "$ONLY" = agent ] || install -m 0755 "$BINARIES/netpulsed" "$PREFIX/bin/netpulsed"
install -m 0644 docs/*.md "$PREFIX/share/doc/netpulse/"

# One group per role, so that no service can read another role's key or config: netpulse-daemon (the daemon and the
# report job: the daemon's key and netpulsed.toml), netpulse-agents (the agent: its key and agent.toml), and
# netpulse (people and tools that read the reports; no service needs it). The services run as dynamic users with
# their role's group as a supplementary group.
[ "$ONLY" = agent ] || getent group netpulse-daemon >/dev/null || groupadd --system netpulse-daemon
[ "$ONLY" = daemon ] || getent group netpulse-agents >/dev/null || groupadd --system netpulse-agents
[ "$ONLY" = agent ] || getent group netpulse >/dev/null || groupadd --system netpulse
# Anyone may list it; each file guards itself (keys and configs 0640 in their role's group, certificates public).
install -d -m 0755 -o root -g root "$CONF"
install_config() { # never overwrite an operator's file
    if [ -e "$CONF/$2" ]; then
        if ! cmp -s "config/$1" "$CONF/$2"; then echo "    keeping your $CONF/$2 (the example is config/$1)"; fi
    else
        install -m 0640 -g "$3" "config/$1" "$CONF/$2"
        echo "    $CONF/$2 (example; edit it)"
    fi
}
echo "==> configs in $CONF"
[ "$ONLY" = daemon ] || install_config agent.toml agent.toml netpulse-agents
[ "$ONLY" = agent ] || install_config netpulsed.toml netpulsed.toml netpulse-daemon

# An upgrade from the one shared group `netpulse`: each config, and each key a config names (`key = "…"`), goes to
# its role's group; certificates, which are public, become readable by all. A key of group netpulse that no config
# names is left as it is, and said.
give_role() { # config group
    local config=$CONF/$1 group=$2 key
    [ -f "$config" ] || return 0
    [ "$(stat -c %G "$config")" = netpulse ] && chgrp "$group" "$config" && echo "    $config: group $group"
    sed -n 's/^[[:space:]]*key[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$config" | while read -r key; do
        [ -f "$key" ] && [ "$(stat -c %G "$key")" = netpulse ] || continue
        chgrp "$group" "$key" && chmod 0640 "$key" && echo "    $key: group $group"
    done
}
[ "$ONLY" = daemon ] || give_role agent.toml netpulse-agents
[ "$ONLY" = agent ] || give_role netpulsed.toml netpulse-daemon
for file in "$CONF"/*.pem; do
    [ -f "$file" ] && [ "$(stat -c %G "$file")" = netpulse ] || continue
    case "$file" in
        *-key.pem) echo "    warning: $file is readable by group netpulse (the reports' readers); give it to its role's group: chgrp netpulse-daemon or netpulse-agents" >&2 ;;
        *) chgrp root "$file" && chmod 0644 "$file" ;;
    esac
done
if [ "$ONLY" != agent ]; then
    # Reports: readable by group netpulse, writable by the report job only (netpulse-report.service makes its user
    # the owner at each start); the readers may not write it (they could plant links the job would follow).
    # The daemon's dashboards, snapshots and alert charts, alike (netpulsed.service owns it at each start).
    for published in /var/lib/netpulse-reports /var/lib/netpulse-published; do
        if [ -d $published ]; then
            chgrp netpulse $published && chmod 2750 $published
        else
            install -d -m 2750 -o root -g netpulse $published
        fi
    done
fi

echo "==> units in $UNITS"
sed_prefix() { sed "s|/usr/local/|$PREFIX/|g" "$1"; }
units=()
[ "$ONLY" = daemon ] || units+=(netpulse-agent.service)
[ "$ONLY" = agent ] || units+=(netpulsed.service netpulsed.socket netpulse-report.service netpulse-report.timer
    netpulse-certificates.service netpulse-certificates.timer)
for unit in "${units[@]}"; do
    sed_prefix "systemd/$unit" >"$UNITS/$unit.tmp" && mv "$UNITS/$unit.tmp" "$UNITS/$unit"
    chmod 0644 "$UNITS/$unit"
done
systemctl daemon-reload

enabled=()
[ "$ONLY" = daemon ] || enabled+=(netpulse-agent.service)
if [ "$ONLY" != agent ]; then
    if [ "$SOCKET" = yes ]; then enabled+=(netpulsed.socket); else enabled+=(netpulsed.service); fi
    enabled+=(netpulse-report.timer netpulse-certificates.timer)
fi
if [ "$ENABLE" = yes ]; then
    systemctl enable "${enabled[@]}"
fi
# An upgrade: services already running get the new binaries now.
systemctl try-restart "${units[@]}" 2>/dev/null || true
if [ "$START" = yes ]; then
    systemctl start "${enabled[@]}"
fi
# What to do next, as it is on this host: the CA, the daemon's certificate, and the agent's by request (its key is
# made here and never copied), each where the example configs look for it.
echo "==> installed. Next:"
if [ "$ONLY" != agent ]; then
    cat <<TEXT
    netpulse ca init --dir $CONF/ca
    install -m 0644 $CONF/ca/ca.pem $CONF/ca.pem
    netpulse ca issue --dir $CONF/ca --daemon netpulsed --out $CONF --group netpulse-daemon
TEXT
fi
if [ "$ONLY" != daemon ]; then
    agent_id=$(hostname)
    cat <<TEXT
    netpulse-agent request              # $CONF/agent-key.pem (stays on this host) and $CONF/$agent_id.csr
TEXT
    if [ "$ONLY" = agent ]; then
        cat <<TEXT
    # copy $CONF/$agent_id.csr to the CA's host, run \`netpulse ca sign --dir /etc/netpulse/ca $agent_id.csr\` there,
    # then bring $agent_id.pem back as $CONF/agent.pem and the CA's ca.pem as $CONF/ca.pem; set [daemon] endpoints
    # in $CONF/agent.toml to the daemon's address
TEXT
    else
        cat <<TEXT
    netpulse ca sign --dir $CONF/ca $CONF/$agent_id.csr && install -m 0644 $CONF/$agent_id.pem $CONF/agent.pem
TEXT
    fi
fi
cat <<TEXT
    systemctl start ${enabled[*]}
    systemctl status ${enabled[*]}
TEXT
