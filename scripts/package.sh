#!/usr/bin/env bash
# Builds the Debian packages: netpulse-agent (the agent alone, for every host) and netpulse-server (the daemon, the
# CLI and the report timer), each with its units, sysusers.d and tmpfiles.d files, its config as a conffile, man
# pages and bash, zsh and fish completions; then checks them with lintian (no errors, or it fails).
#
#   scripts/package.sh [--out DIR] [--revision N] [--debug]
#
#   --out DIR        where to write the .deb files (default: .build/packages)
#   --revision N     the Debian revision, VERSION-N (default: 1); a rebuilt package of the same code takes a higher
#                    one; repeat it for packages of several revisions from one build
#   --debug          package the debug build (.build/debug, linked as the release one is), not release programs:
#                    for the tests (scripts/test.sh), which would otherwise wait for a release build; never to ship
#
# The version is Netpulse's own, from one place (Sources/PulseCore/Support/NetpulseVersion.swift), which is what
# `netpulse --version` prints.
#
# Why dpkg-deb and not debhelper: the three programs are built by SwiftPM with flags only it takes (the agent's own
# scratch path and linker options, see build_release), so a debian/rules would only call this build and copy its
# output; the rest (a file tree, maintainer scripts written after dh_installsystemd's, md5sums, a changelog) is a
# short script, and building needs nothing beyond dpkg-dev (dpkg-shlibdeps computes Depends from what the binaries
# link, as debhelper would).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.build/packages
REVISIONS=()
DEBUG=no
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT=$2; shift 2 ;;
        --revision) REVISIONS+=("$2"); shift 2 ;;
        --debug) DEBUG=yes; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "package.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done
source scripts/lib/common.sh
ensure_packages dpkg-dev lintian

UPSTREAM=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/PulseCore/Support/NetpulseVersion.swift)
[ -n "$UPSTREAM" ] || { echo "package.sh: no version in Sources/PulseCore/Support/NetpulseVersion.swift" >&2; exit 1; }
[ ${#REVISIONS[@]} -gt 0 ] || REVISIONS=(1)
ARCH=$(dpkg --print-architecture)
# Who answers for these packages: set NETPULSE_MAINTAINER to your team's address for a fleet's own builds.
MAINTAINER=${NETPULSE_MAINTAINER:-Netpulse developers <netpulse@example.org>}

if [ "$DEBUG" = yes ]; then
    echo "==> building debug binaries"
    for product in netpulsed netpulse netpulse-agent; do
        swift build --product "$product" >/dev/null
    done
    DAEMON_BINARY=.build/debug/netpulsed CLI_BINARY=.build/debug/netpulse AGENT_BINARY=.build/debug/netpulse-agent
    # Debug programs are large and these packages are only for a test: compressed fast.
    COMPRESSION=(-Zgzip -z1)
else
    echo "==> building release binaries"
    build_release
    DAEMON_BINARY=.build/release/netpulsed CLI_BINARY=.build/release/netpulse AGENT_BINARY=$AGENT_RELEASE
    COMPRESSION=(-Zxz)
fi
for binary in "$DAEMON_BINARY" "$CLI_BINARY" "$AGENT_BINARY"; do
    if ldd "$binary" | grep -q /opt/swift; then
        echo "package.sh: $binary links a library from /opt/swift; it must carry the Swift runtime itself" >&2
        exit 1
    fi
done
for binary in "$DAEMON_BINARY" "$CLI_BINARY" "$AGENT_BINARY"; do
    if [ "$("$binary" --version)" != "$UPSTREAM" ]; then
        echo "package.sh: $binary --version says $("$binary" --version), not $UPSTREAM" >&2
        exit 1
    fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
umask 022
mkdir -p "$OUT"

# Man pages of the programs that use swift-argument-parser, made from their own command descriptions by its
# generate-manual tool (built once by its package plugin); the agent's is written by hand (packaging/).
# The plugin builds the tool as generate-manual-tool (older SwiftPM: generate-manual) beside the debug build.
find_generate_manual() {
    local bin
    bin=$(swift build --show-bin-path)
    for GENERATE_MANUAL in "$bin/generate-manual-tool" "$bin/generate-manual"; do
        [ -x "$GENERATE_MANUAL" ] && return 0
    done
    return 1
}
if ! find_generate_manual; then
    swift package --disable-sandbox generate-manual --help >/dev/null
    find_generate_manual || { echo "package.sh: swift-argument-parser's generate-manual was not built" >&2; exit 1; }
fi
# The date in the man pages: the last commit's, so that the same tree makes the same pages.
MAN_DATE=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)

# The files of one package under $STAGE/NAME: binaries stripped, units with the packaged paths, docs.
stage_common() { # package
    local root=$STAGE/$1
    install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/usr/lib/sysusers.d" \
        "$root/etc/netpulse" "$root/usr/share/doc/$1" "$root/usr/share/bash-completion/completions" \
        "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d"
}
install_unit() { # package unit documentation
    sed -e 's|/usr/local/bin/|/usr/bin/|g' \
        -e "s|^Documentation=.*|Documentation=$3|" \
        "systemd/$2" >"$STAGE/$1/lib/systemd/system/$2"
    chmod 0644 "$STAGE/$1/lib/systemd/system/$2"
}
install_binary() { # package source name
    install -m 0755 "$2" "$STAGE/$1/usr/bin/$3"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$STAGE/$1/usr/bin/$3"
}
install_man() { # package file section
    local dir=$STAGE/$1/usr/share/man/man$3
    install -d "$dir"
    gzip -9n <"$2" >"$dir/$(basename "$2").gz"
    chmod 0644 "$dir/$(basename "$2").gz"
}
install_completions() { # package program (ArgumentParser's own scripts)
    local root=$STAGE/$1 binary=$STAGE/$1/usr/bin/$2
    # bash-completion sources its files: a #! line would only mislead.
    "$binary" --generate-completion-script bash | sed '1{/^#!/d}' >"$root/usr/share/bash-completion/completions/$2"
    "$binary" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_$2"
    "$binary" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/$2.fish"
}
# The licences of what a package's programs carry: the Swift runtime's, then each Swift package's (a reference for
# the Apache License 2.0, which Debian has, and the text of any other, with the package's notices).
write_copyright() { # package swift-package…
    local file=$STAGE/$1/usr/share/doc/$1/copyright dependency licence url
    shift
    {
        cat packaging/copyright.head
        printf '\nThe Swift runtime and standard library (https://www.swift.org): Apache License 2.0 with the Runtime\n'
        printf 'Library Exception, %s.\n' "$(swift --version 2>/dev/null | head -n 1)"
        for dependency in "$@"; do
            licence=$(ls .build/checkouts/"$dependency"/LICENSE* 2>/dev/null | head -n 1)
            [ -n "$licence" ] || { echo "package.sh: no licence file in .build/checkouts/$dependency" >&2; exit 1; }
            # Its address as Package.resolved records it.
            url=$(sed -n "s|.*\"location\" : \"\(.*/$dependency\)\(\.git\)\?\".*|\1|p" Package.resolved | head -n 1)
            printf '\n%s (%s):\n' "$dependency" "${url:-$dependency}"
            if grep -q "Apache License" "$licence" && grep -q "Version 2.0" "$licence"; then
                echo "  Apache License 2.0, /usr/share/common-licenses/Apache-2.0"
            else
                sed 's/^/  /' "$licence"
            fi
            for notice in .build/checkouts/"$dependency"/NOTICE*; do
                if [ -f "$notice" ]; then sed 's/^/  /' "$notice"; fi
            done
        done
    } >"$file"
}
write_changelog() { # package
    local file=$STAGE/$1/usr/share/doc/$1/changelog.Debian.gz
    {
        printf 'netpulse (%s) unstable; urgency=medium\n\n' "$VERSION"
        printf '  * Netpulse %s, built from %s.\n\n' "$UPSTREAM" "$(git rev-parse --short HEAD 2>/dev/null || echo "a source tree")"
        printf ' -- %s  %s\n' "$MAINTAINER" "$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")"
    } | gzip -9n >"$file"
}
write_control() { # package section depends description-file
    local root=$STAGE/$1 shlibs
    # dpkg-shlibdeps reads a debian/control of the source package; a minimal one does.
    mkdir -p "$STAGE/shlibs/debian"
    printf 'Source: netpulse\n\nPackage: %s\nArchitecture: any\n' "$1" >"$STAGE/shlibs/debian/control"
    shlibs=$(cd "$STAGE/shlibs" && dpkg-shlibdeps -O "$root"/usr/bin/* | sed -n 's/^shlibs:Depends=//p')
    [ -n "$shlibs" ] || { echo "package.sh: dpkg-shlibdeps found no dependencies for $1" >&2; exit 1; }
    {
        printf 'Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: %s\n' "$1" "$VERSION" "$ARCH" "$MAINTAINER"
        printf 'Installed-Size: %s\n' "$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
        printf 'Depends: %s, %s\n' "$shlibs" "$3"
        printf 'Section: %s\nPriority: optional\n' "$2"
        cat "packaging/$4"
    } >"$root/DEBIAN/control"
    (cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
        xargs -0 md5sum >DEBIAN/md5sums)
    find "$root/etc" -type f -printf '/etc/%P\n' | LC_ALL=C sort >"$root/DEBIAN/conffiles"
    chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums" "$root/DEBIAN/conffiles"
    for script in postinst prerm postrm; do
        install -m 0755 "packaging/$1.$script" "$root/DEBIAN/$script"
    done
}

built=()
for REVISION in "${REVISIONS[@]}"; do
    VERSION=$UPSTREAM-$REVISION
    STAGE=$WORK/$REVISION
    mkdir "$STAGE"
    echo "==> staging netpulse-agent $VERSION"
    stage_common netpulse-agent
    install_binary netpulse-agent "$AGENT_BINARY" netpulse-agent
    install_unit netpulse-agent netpulse-agent.service "man:netpulse-agent(8)"
    install -m 0644 packaging/netpulse-agent.sysusers "$STAGE/netpulse-agent/usr/lib/sysusers.d/netpulse-agent.conf"
    install -m 0644 config/agent.toml "$STAGE/netpulse-agent/etc/netpulse/agent.toml"
    sed "s/@VERSION@/$UPSTREAM/" packaging/netpulse-agent.8 >"$STAGE/netpulse-agent.8"
    install_man netpulse-agent "$STAGE/netpulse-agent.8" 8
    install -m 0644 packaging/netpulse-agent.bash "$STAGE/netpulse-agent/usr/share/bash-completion/completions/netpulse-agent"
    install -m 0644 packaging/netpulse-agent.zsh "$STAGE/netpulse-agent/usr/share/zsh/vendor-completions/_netpulse-agent"
    install -m 0644 packaging/netpulse-agent.fish "$STAGE/netpulse-agent/usr/share/fish/vendor_completions.d/netpulse-agent.fish"
    install -m 0644 docs/configuration.md docs/operations.md docs/protocol.md "$STAGE/netpulse-agent/usr/share/doc/netpulse-agent/"
    gzip -9n "$STAGE"/netpulse-agent/usr/share/doc/netpulse-agent/*.md
    write_copyright netpulse-agent swift-nio swift-nio-ssl swift-log swift-atomics swift-collections swift-system
    write_changelog netpulse-agent
    write_control netpulse-agent net "systemd, init-system-helpers (>= 1.54~)" netpulse-agent.description

    echo "==> staging netpulse-server $VERSION"
    stage_common netpulse-server
    install_binary netpulse-server "$DAEMON_BINARY" netpulsed
    install_binary netpulse-server "$CLI_BINARY" netpulse
    for unit in netpulsed.service netpulsed.socket netpulse-report.service netpulse-report.timer \
        netpulse-certificates.service netpulse-certificates.timer; do
        install_unit netpulse-server "$unit" "man:netpulsed(8) man:netpulse(1)"
    done
    install -d "$STAGE/netpulse-server/usr/lib/tmpfiles.d"
    install -m 0644 packaging/netpulse-server.sysusers "$STAGE/netpulse-server/usr/lib/sysusers.d/netpulse-server.conf"
    install -m 0644 packaging/netpulse-server.tmpfiles "$STAGE/netpulse-server/usr/lib/tmpfiles.d/netpulse-server.conf"
    install -m 0644 config/netpulsed.toml "$STAGE/netpulse-server/etc/netpulse/netpulsed.toml"
    "$GENERATE_MANUAL" "$CLI_BINARY" --section 1 --date "$MAN_DATE" -o "$STAGE" >/dev/null
    "$GENERATE_MANUAL" "$DAEMON_BINARY" --section 8 --date "$MAN_DATE" -o "$STAGE" >/dev/null
    install_man netpulse-server "$STAGE/netpulse.1" 1
    install_man netpulse-server "$STAGE/netpulsed.8" 8
    install_completions netpulse-server netpulse
    install_completions netpulse-server netpulsed
    install -m 0644 docs/*.md docs/snapshot.schema.json "$STAGE/netpulse-server/usr/share/doc/netpulse-server/"
    gzip -9n "$STAGE"/netpulse-server/usr/share/doc/netpulse-server/*.md
    write_copyright netpulse-server $(ls .build/checkouts)
    write_changelog netpulse-server
    install -d "$STAGE/netpulse-server/usr/share/lintian/overrides"
    install -m 0644 packaging/netpulse-server.lintian-overrides "$STAGE/netpulse-server/usr/share/lintian/overrides/netpulse-server"
    write_control netpulse-server net "systemd, init-system-helpers (>= 1.54~)" netpulse-server.description

    for package in netpulse-agent netpulse-server; do
        find "$STAGE/$package" -type d -exec chmod 0755 {} +
        dpkg-deb --root-owner-group "${COMPRESSION[@]}" --build "$STAGE/$package" "$OUT/${package}_${VERSION}_$ARCH.deb" >/dev/null
        built+=("$OUT/${package}_${VERSION}_$ARCH.deb")
        echo "    $OUT/${package}_${VERSION}_$ARCH.deb ($(du -h "$OUT/${package}_${VERSION}_$ARCH.deb" | cut -f1))"
    done
done

echo "==> lintian"
lintian --fail-on error "${built[@]}"
