#!/usr/bin/env bash
# A real systemd, booted as PID 1 of throwaway PID, mount, network and host-name namespaces over an overlay of this
# machine's root with tmpfs on top: units can be installed, started, reloaded and watched without touching the host,
# and a sandbox may be given a host name of its own (`run PID hostname web-01`). It never boots systemd on the host's
# own root (systemd-tmpfiles would clean the real /tmp). Needs root.
#
#   scripts/systemd-sandbox.sh start [DIR…]     boots one; prints the PID of its systemd (give it to the others);
#                                               DIRs (for example the repository) are bound into it at the same
#                                               path, which matters for those under /tmp or /run
#   scripts/systemd-sandbox.sh run PID CMD…     runs CMD inside (its own /tmp, /run and loopback network)
#   scripts/systemd-sandbox.sh stop PID         kills it; its namespaces and mounts go with it
#
# Everything written inside lands in a tmpfs and disappears on stop; the host's files are visible read-through
# (the repository included, so `run PID scripts/install.sh --binaries …` installs from it).
set -euo pipefail

command=${1:-}
case "$command" in
start)
    [ "$(id -u)" -eq 0 ] || { echo "systemd-sandbox: needs root (namespaces, mounts)" >&2; exit 77; }
    [ -x /lib/systemd/systemd ] || { echo "systemd-sandbox: /lib/systemd/systemd not found (apt-get install systemd)" >&2; exit 77; }
    state=$(mktemp -d /var/tmp/netpulse-sandbox.XXXXXX)
    # The sandbox outlives this script: it must not keep any descriptor of our caller's open (a caller reading our
    # output through a pipe would otherwise wait for ever).
    for fd in /proc/$$/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
    done
    shift
    binds=()
    for dir in "$@"; do binds+=("$(realpath "$dir")"); done
    unshare --pid --fork --mount --net --uts --propagation private "$0" boot "$state" "${binds[@]}" </dev/null >"$state/console.log" 2>&1 &
    outer=$!
    pid=""
    for _ in $(seq 1 100); do
        pid=$(pgrep -P "$outer" || true)
        [ -n "$pid" ] && break
        sleep 0.05
    done
    [ -n "$pid" ] || { echo "systemd-sandbox: did not start" >&2; cat "$state/console.log" >&2; exit 1; }
    for _ in $(seq 1 200); do
        status=$(nsenter -t "$pid" -m -p -n -u systemctl is-system-running 2>/dev/null || true)
        case "$status" in running|degraded) echo "$pid"; exit 0 ;; esac
        sleep 0.1
    done
    echo "systemd-sandbox: systemd did not finish booting (state: ${status:-none})" >&2
    cat "$state/console.log" >&2
    kill -KILL "$pid" 2>/dev/null || true
    exit 1
    ;;
boot)
    # PID 1 of the new namespaces: build the root, then become systemd.
    S=$2
    mount -t tmpfs tmpfs "$S"
    mkdir -p "$S/upper" "$S/work" "$S/root"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$S/upper,workdir=$S/work" "$S/root"
    mount -t proc proc "$S/root/proc"
    mount --rbind /sys "$S/root/sys"
    mount --rbind /dev "$S/root/dev"
    mount -t tmpfs tmpfs "$S/root/run"
    mount -t tmpfs tmpfs "$S/root/tmp"
    # Directories the caller asked for, bound at their own path (over the fresh /tmp and /run too).
    for dir in "${@:3}"; do
        mkdir -p "$S/root$dir"
        mount --bind "$dir" "$S/root$dir"
    done
    # Start nothing we did not ask for.
    rm -f "$S/root/etc/systemd/system/multi-user.target.wants/"* "$S/root/etc/systemd/system/timers.target.wants/"*
    ip link set lo up
    cd "$S/root"
    mkdir -p oldroot
    pivot_root . oldroot
    umount -l /oldroot
    exec /lib/systemd/systemd --system --log-target=journal --log-level=notice
    ;;
run)
    pid=$2
    shift 2
    exec nsenter -t "$pid" -m -p -n -u -- "$@"
    ;;
stop)
    # The state directory is one of the arguments of the `unshare` that started this sandbox's systemd.
    outer=$(ps -o ppid= -p "$2" 2>/dev/null | tr -d ' ' || true)
    state=""
    if [ -n "$outer" ] && [ -r "/proc/$outer/cmdline" ]; then
        state=$(tr '\0' '\n' <"/proc/$outer/cmdline" | grep '^/var/tmp/netpulse-sandbox\.' | head -n 1 || true)
    fi
    kill -KILL "$2" 2>/dev/null || true
    for _ in $(seq 1 50); do
        [ -n "$outer" ] && kill -0 "$outer" 2>/dev/null || break
        sleep 0.05
    done
    if [ -n "$state" ]; then rm -rf "$state"; fi
    ;;
*)
    sed -n '2,14p' "$0"
    exit 64
    ;;
esac
