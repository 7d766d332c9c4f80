import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// The Debian packages of scripts/package.sh, as an operator uses them: installed on a clean root under a real
    /// systemd, an agent enrolled by request and signature, upgraded, an agent revoked, removed and purged.
    ///
    /// scripts/test.sh builds the packages before the tests run (`scripts/package.sh --debug`, revisions 1 and 2,
    /// from the debug build the tests use, linked as the release one is): packaging takes a minute or two, and two
    /// revisions of one build are enough to upgrade.
    @Suite(.serialized, .enabled(if: Sandbox.isAvailable, "needs root and /lib/systemd/systemd to boot a sandbox"))
    struct PackageTests {
        static let directory = Build.root + "/.build/packages/test"

        /// The package of that name and Debian revision in `directory`.
        static func package(_ name: String, revision: Int) throws -> String {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard let file = files.first(where: { $0.hasPrefix("\(name)_") && $0.contains("-\(revision)_") }) else {
                throw CommandFailure(
                    description:
                        "no \(name) package of revision \(revision) in \(directory): run scripts/package.sh --debug "
                        + "--out .build/packages/test --revision \(revision) (scripts/test.sh does)")
            }
            return directory + "/" + file
        }

        // 15 minutes, not 8: in one full run (beside the first process) it passed every check in 806 s, where alone it
        // takes about 210 s; the steps after the certificates' wait took most of that, which the phases it prints
        // are to find.
        @Test(.timeLimit(.minutes(15)))
        func installEnrollUpgradeRenewRevokeRemoveAndPurge() throws {
            let began = Date()
            func phase(_ name: String) { print("package test: \(name) at \(Int(Date().timeIntervalSince(began))) s") }
            let first = try (Self.package("netpulse-server", revision: 1), Self.package("netpulse-agent", revision: 1))
            let second = try (Self.package("netpulse-server", revision: 2), Self.package("netpulse-agent", revision: 2))
            let sandbox = try Sandbox()
            // A host without Swift: the packaged programs carry the runtime they need. And a host that lets
            // packages restart their services: this machine's image has a policy-rc.d that forbids it (as container
            // images do), which the sandbox's root (this machine's, overlaid) would otherwise inherit.
            try sandbox.must("mount -t tmpfs tmpfs /opt/swift && rm -f /usr/sbin/policy-rc.d")

            // Install on a clean root. Both units are enabled and neither is started: there is no certificate yet.
            try sandbox.must("dpkg -i \(first.0) \(first.1)")
            let version = try sandbox.must("dpkg-query -W -f '${Version}' netpulse-server").trimmed
            #expect(version.hasSuffix("-1"))
            #expect(try sandbox.must("netpulse --version").trimmed + "-1" == version)
            #expect(try sandbox.must("netpulse-agent --version").trimmed + "-1" == version)
            #expect(
                try sandbox.shell(
                    "systemctl is-enabled netpulsed.service netpulse-agent.service netpulse-report.timer netpulse-certificates.timer"
                ).output == "enabled\nenabled\nenabled\nenabled\n")
            #expect(try sandbox.property("netpulsed", "ActiveState") == "inactive")
            // The agent links Debian's libc family and libsystemd (which brings its own), nothing else.
            let libraries = try sandbox.must("ldd /usr/bin/netpulse-agent | awk '{print $1}'")
                .split(separator: "\n").map { String($0.split(separator: "/").last ?? $0) }
            let allowed: Set = [
                "linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
                "libsystemd.so.0", "libcap.so.2", "libgcrypt.so.20", "liblzma.so.5", "libzstd.so.1", "liblz4.so.1",
                "libgpg-error.so.0",
            ]
            #expect(Set(libraries).isSubset(of: allowed), "\(libraries)")
            // Users and groups from sysusers.d, directories from tmpfiles.d, configs readable by their role only.
            #expect(try sandbox.must("id -nG netpulsed").contains("netpulse-daemon"))
            #expect(try sandbox.must("id -nG netpulse-agent").contains("netpulse-agents"))
            #expect(
                try sandbox.must(
                    "stat -c '%a %U %G' /etc/netpulse/agent.toml /etc/netpulse/netpulsed.toml /var/lib/netpulse-published"
                ) == "640 root netpulse-agents\n640 root netpulse-daemon\n2750 netpulsed netpulse\n")
            // Man pages and completions.
            try sandbox.must(
                """
                test -s /usr/share/man/man1/netpulse.1.gz && test -s /usr/share/man/man8/netpulsed.8.gz
                test -s /usr/share/man/man8/netpulse-agent.8.gz
                bash -c 'source /usr/share/bash-completion/completions/netpulse && complete -p netpulse'
                bash -c 'source /usr/share/bash-completion/completions/netpulse-agent && complete -p netpulse-agent'
                test -s /usr/share/zsh/vendor-completions/_netpulse && test -s /usr/share/fish/vendor_completions.d/netpulse-agent.fish
                """)

            // Enroll as docs/operations.md says: a CA and the daemon's certificate on the daemon's host; the agent's
            // key and request on its host, signed on the CA's host. The operator edits the shipped configs.
            try sandbox.must(
                """
                set -e
                netpulse ca init --dir /etc/netpulse/ca >/dev/null
                install -m 0644 /etc/netpulse/ca/ca.pem /etc/netpulse/ca.pem
                netpulse ca issue --dir /etc/netpulse/ca --daemon netpulsed --out /etc/netpulse --group netpulse-daemon --validity 4m >/dev/null
                sed -i -e 's/^# id = .*/id = "pkg-agent"/' -e 's/^exclude = \\["lo"\\]/exclude = []/' \
                    -e 's/^interval = "10s"/interval = "1s"/' /etc/netpulse/agent.toml
                sed -i 's/^address = "0.0.0.0:7420"/address = "127.0.0.1:7420"/' /etc/netpulse/netpulsed.toml
                netpulse-agent request
                netpulse ca sign /etc/netpulse/pkg-agent.csr --dir /etc/netpulse/ca --validity 3m
                install -m 0644 /etc/netpulse/pkg-agent.pem /etc/netpulse/agent.pem
                """)
            // Signed for three minutes: the agent must renew it through the daemon, which holds the issuing CA that
            // `ca init` made (readable by the daemon's group) and the shipped config names.
            let firstEnd =
                Int(
                    try sandbox.must(
                        "date -u -d \"$(openssl x509 -noout -enddate -in /etc/netpulse/agent.pem | cut -d= -f2)\" +%s"
                    ).trimmed) ?? 0
            #expect(try sandbox.must("stat -c '%a %G' /etc/netpulse/enrollment/ca-key.pem") == "640 netpulse-daemon\n")
            #expect(try sandbox.must("stat -c '%a %G' /etc/netpulse/agent-key.pem") == "640 netpulse-agents\n")
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            // Named with --interface: the loopback is not one of the fleet's counted interfaces, which `top` ranks
            // by default.
            try eventually("the agent's loopback shows in netpulse top", timeout: 40) {
                try sandbox.shell("netpulse top --last 1h --interface '*'").output.contains("pkg-agent/lo")
            }
            let samples = try Self.samples(sandbox)

            // Upgrade both to a higher revision: each service restarts once, on the new package, and keeps its
            // data and the edited configs.
            let started = try Self.starts(sandbox)
            try sandbox.must("dpkg -i \(second.0) \(second.1)")
            #expect(try sandbox.must("dpkg-query -W -f '${Version}' netpulse-agent").hasSuffix("-2"))
            // Once each: both have started again (the journal may lag a moment), and no more than once.
            try eventually("both services started again after the upgrade", timeout: 20) {
                let now = try Self.starts(sandbox)
                return now.daemon > started.daemon && now.agent > started.agent
            }
            let restarted = try Self.starts(sandbox)
            #expect(restarted == (started.daemon + 1, started.agent + 1), "\(started) → \(restarted)")
            #expect(try sandbox.property("netpulsed", "ActiveState") == "active")
            #expect(try sandbox.property("netpulse-agent", "ActiveState") == "active")
            #expect(try sandbox.must("grep -c '^id = \"pkg-agent\"' /etc/netpulse/agent.toml").trimmed == "1")
            #expect(
                try sandbox.must("grep -c '^address = \"127.0.0.1:7420\"' /etc/netpulse/netpulsed.toml").trimmed == "1")
            #expect(try sandbox.must("stat -c '%a %G' /etc/netpulse/agent.toml") == "640 netpulse-agents\n")
            try eventually("points keep arriving after the upgrade", timeout: 40) {
                try Self.samples(sandbox) >= samples + 3
            }
            let afterUpgrade = Int64(Date().timeIntervalSince1970 * 1000)

            // The three-minute certificate renews itself, and the agent delivers past its end without a gap.
            try eventually("the agent renews its certificate through the daemon", timeout: 170) {
                try sandbox.must("journalctl -u netpulse-agent -o cat --no-pager").contains(
                    "the daemon accepted the renewed certificate")
            }
            #expect(
                try sandbox.must("journalctl -u netpulsed -o cat --no-pager").contains(
                    "renewed the certificate of agent pkg-agent: serial "))
            let wait = Double(firstEnd + 5) - Date().timeIntervalSince1970
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            let end = Int64(firstEnd) * 1_000
            try eventually("points arrive after the first certificate's end", timeout: 30) {
                (try Self.timestamps(sandbox).last ?? 0) > end + 3_000
            }
            // Every second's sample from the upgrade on, across the first certificate's end. (Not a count of them:
            // where the steps before take longer, fewer seconds are left between the upgrade and that end.)
            let delivered = try Self.timestamps(sandbox).filter { $0 >= afterUpgrade }
            let gaps = zip(delivered, delivered.dropFirst()).map { $1 - $0 }
            print("package test: upgraded \(end - afterUpgrade) ms before the first certificate's end")
            #expect(
                (delivered.first ?? .max) < end - 10_000 && (delivered.last ?? 0) > end + 3_000
                    && gaps.allSatisfy { $0 < 2_000 },
                "\(delivered.count) samples from \(delivered.first ?? 0) to \(delivered.last ?? 0), the certificate ending at \(end), the upgrade done at \(afterUpgrade); largest gap \(gaps.max() ?? 0) ms"
            )

            // The daemon's own certificate (four minutes, now past two thirds) is renewed by the service its timer
            // starts, under the unit's hardening: a new key keeping its group, and the daemon reloaded; an agent
            // connecting afresh gets the new certificate.
            phase("certificates' wait over")
            let daemonEnd = try sandbox.must("openssl x509 -noout -enddate -in /etc/netpulse/netpulsed.pem").trimmed
            try sandbox.must("systemctl start netpulse-certificates.service")
            #expect(try sandbox.property("netpulse-certificates.service", "Result") == "success")
            #expect(
                try sandbox.must("journalctl -u netpulse-certificates -o cat --no-pager").contains(
                    "renewed daemon certificate 'netpulsed' until"))
            #expect(
                try sandbox.must("openssl x509 -noout -enddate -in /etc/netpulse/netpulsed.pem").trimmed != daemonEnd)
            #expect(try sandbox.must("stat -c '%a %G' /etc/netpulse/netpulsed-key.pem") == "640 netpulse-daemon\n")
            try eventually("the daemon reloads its certificate") {
                try sandbox.must("journalctl -u netpulsed -o cat --no-pager").contains("reloaded: new connections use")
            }
            phase("the daemon's certificate renewed")
            let connections = try sandbox.must(
                "journalctl -u netpulse-agent -o cat --no-pager | grep -c 'connected to netpulsed' || true"
            ).trimmed
            try sandbox.must("systemctl restart netpulse-agent.service")
            try eventually("the agent connects to the daemon's renewed certificate", timeout: 30) {
                try sandbox.must(
                    "journalctl -u netpulse-agent -o cat --no-pager | grep -c 'connected to netpulsed' || true"
                ).trimmed != connections
            }

            phase("the agent reconnected")
            // Revoke the agent: after the daemon's reload its connection is closed and its handshakes refused.
            try sandbox.must(
                """
                set -e
                netpulse ca revoke --certificate /var/lib/netpulse-agent/certificate/current.pem --dir /etc/netpulse/ca
                install -m 0644 /etc/netpulse/ca/revoked.txt /etc/netpulse/revoked.txt
                sed -i 's|^# revoked = |revoked = |' /etc/netpulse/netpulsed.toml
                systemctl reload netpulsed.service
                """)
            try eventually("the daemon refuses the revoked agent", timeout: 30) {
                try sandbox.must("journalctl -u netpulsed -o cat --no-pager").contains("pkg-agent")
                    && sandbox.must("journalctl -u netpulsed -o cat --no-pager").contains("revoked")
            }
            try sandbox.must("systemctl stop netpulse-agent.service")

            phase("the agent revoked and stopped")
            // remove: the programs and units go; the store, the configs, the keys and the CA stay.
            try sandbox.must("dpkg -r netpulse-agent netpulse-server")
            #expect(try sandbox.shell("test -e /usr/bin/netpulsed || test -e /usr/bin/netpulse-agent").status != 0)
            #expect(try sandbox.shell("test -e /lib/systemd/system/netpulsed.service").status != 0)
            try sandbox.must(
                """
                test -s /var/lib/private/netpulsed/netpulse.db && test -d /var/lib/private/netpulse-agent
                test -s /etc/netpulse/netpulsed.toml && test -s /etc/netpulse/agent.toml
                test -s /etc/netpulse/ca/ca-key.pem && test -s /etc/netpulse/agent-key.pem
                """)

            phase("removed")
            // purge: the packages' own state and configs go; the CA, the keys and the certificates stay.
            try sandbox.must("dpkg -P netpulse-agent netpulse-server")
            for gone in [
                "/var/lib/private/netpulsed", "/var/lib/netpulsed", "/var/lib/private/netpulse-agent",
                "/var/lib/netpulse-published", "/var/lib/netpulse-reports", "/etc/netpulse/netpulsed.toml",
                "/etc/netpulse/agent.toml",
            ] {
                #expect(try sandbox.shell("test -e \(gone) || test -L \(gone)").status != 0, "\(gone) is still there")
            }
            try sandbox.must(
                """
                test -s /etc/netpulse/ca/ca-key.pem && test -s /etc/netpulse/ca/ca.pem && test -s /etc/netpulse/ca/revoked.txt
                test -s /etc/netpulse/agent-key.pem && test -s /etc/netpulse/netpulsed-key.pem && test -s /etc/netpulse/agent.pem
                """)
            #expect(try sandbox.shell("dpkg-statoverride --list /etc/netpulse/agent.toml").status != 0)
        }

        /// A fleet of two, set up by following docs/operations.md ("Installing the packages") step by step: a
        /// daemon host, `collector` (10.0.0.5), and an agent host, `web-01`, each a systemd sandbox with its own host
        /// name, joined by a veth pair. `scp` is a copy through a directory both see.
        @Test(.timeLimit(.minutes(5)))
        func aFleetOfTwoSetUpAsTheOperationsGuideSays() throws {
            let server = try Self.package("netpulse-server", revision: 1)
            let agent = try Self.package("netpulse-agent", revision: 1)
            let collector = try Sandbox()
            let web = try Sandbox()
            let transfer = Build.root + "/.build/packages/transfer-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: transfer, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: transfer) }
            let suffix = String(UUID().uuidString.prefix(6)).lowercased()
            try run(["ip", "link", "add", "npc\(suffix)", "type", "veth", "peer", "name", "npw\(suffix)"])
            try run(["ip", "link", "set", "npc\(suffix)", "netns", collector.pid])
            try run(["ip", "link", "set", "npw\(suffix)", "netns", web.pid])
            for (sandbox, name, address, link) in [
                (collector, "collector", "10.0.0.5", "npc\(suffix)"), (web, "web-01", "10.0.0.6", "npw\(suffix)"),
            ] {
                try sandbox.must(
                    """
                    set -e
                    hostname \(name)
                    ip addr add \(address)/24 dev \(link) && ip link set \(link) up
                    mount -t tmpfs tmpfs /opt/swift && rm -f /usr/sbin/policy-rc.d
                    """)
            }

            // On collector.
            try collector.must(
                """
                set -e
                apt-get install -y -q \(server) >/dev/null 2>&1
                netpulse ca init --dir /etc/netpulse/ca
                install -m 0644 /etc/netpulse/ca/ca.pem /etc/netpulse/ca.pem
                netpulse ca issue --dir /etc/netpulse/ca --daemon netpulsed --ip 10.0.0.5 --out /etc/netpulse --group netpulse-daemon
                systemctl start netpulsed.service netpulse-report.timer
                """)
            // On web-01: the agent's config edited as the guide says, its key made there, its request sent.
            try web.must(
                """
                set -e
                apt-get install -y -q \(agent) >/dev/null 2>&1
                sed -i 's/^endpoints = .*/endpoints = ["10.0.0.5:7420"]/' /etc/netpulse/agent.toml
                netpulse-agent request
                cp /etc/netpulse/web-01.csr \(transfer)/
                """)
            // On collector: sign what came; web-01 fetches its certificate and the CA's.
            try collector.must("netpulse ca sign \(transfer) && cp /etc/netpulse/ca.pem \(transfer)/ca.pem")
            // On web-01: both in place, then start.
            try web.must(
                """
                set -e
                cp \(transfer)/web-01.pem /etc/netpulse/agent.pem
                cp \(transfer)/ca.pem /etc/netpulse/ca.pem
                systemctl start netpulse-agent.service
                """)
            // On collector, a few seconds later: web-01's interfaces.
            try eventually("web-01's interfaces show in netpulse rates on collector", timeout: 60) {
                try collector.shell("netpulse rates --agent web-01").output.contains("npw\(suffix)")
            }
            #expect(try web.property("netpulse-agent", "ActiveState") == "active")
            // The daemon holds the issuing CA `ca init` made, so web-01's certificate renews itself.
            #expect(
                try collector.must("journalctl -u netpulsed -o cat --no-pager").contains(
                    "renewing agents' certificates for 90 days with the issuing CA 'Netpulse Agent CA' in /etc/netpulse/enrollment"
                ))
            #expect(try web.shell("test -e /etc/netpulse/ca/ca-key.pem").status != 0, "no CA key on the agent's host")
        }

        /// Raw samples of the agent's loopback in the daemon's store, read with the packaged CLI.
        static func samples(_ sandbox: Sandbox) throws -> Int {
            let csv = try sandbox.shell(
                "netpulse export --level raw --format csv --agent pkg-agent --interface lo --last 1h"
            ).output
            return csv.split(separator: "\r\n").dropFirst().filter { $0.hasPrefix("pkg-agent,lo,") }.count
        }

        /// The times of the agent's loopback samples in the daemon's store, in order (Unix milliseconds).
        static func timestamps(_ sandbox: Sandbox) throws -> [Int64] {
            let csv = try sandbox.shell(
                "netpulse export --level raw --format csv --agent pkg-agent --interface lo --last 1h"
            ).output
            let header = csv.split(separator: "\r\n").first.map { $0.split(separator: ",").map(String.init) } ?? []
            guard let column = header.firstIndex(of: "timestamp_ms") else { return [] }
            return csv.split(separator: "\r\n").dropFirst().compactMap { line -> Int64? in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                return fields.count > column ? Int64(fields[column]) : nil
            }.sorted()
        }

        /// How many times each service has started: the line each program logs once at its start.
        static func starts(_ sandbox: Sandbox) throws -> (daemon: Int, agent: Int) {
            func count(_ unit: String, _ line: String) throws -> Int {
                Int(
                    try sandbox.must("journalctl -q -u \(unit) -o cat --no-pager | grep -c '^\(line)' || true").trimmed)
                    ?? -1
            }
            return (try count("netpulsed", "listening on "), try count("netpulse-agent", "sampling "))
        }
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
