import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// Netpulse as systemd services, under a real systemd booted in a sandbox (see scripts/systemd-sandbox.sh),
    /// installed by scripts/install.sh.
    @Suite(.serialized, .enabled(if: Sandbox.isAvailable, "needs root and /lib/systemd/systemd to boot a sandbox"))
    struct SystemdTests {
        @Test(.timeLimit(.minutes(2)))
        func servicesBecomeReadyReportStatusAndDeliver() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            #expect(try sandbox.property("netpulsed", "ActiveState") == "active")
            #expect(try sandbox.property("netpulse-agent", "ActiveState") == "active")
            try eventually("the agent's status line says it is connected", timeout: 20) {
                try sandbox.property("netpulse-agent", "StatusText").contains(
                    "connected to netpulsed; 0 batch(es) spooled; last ack")
            }
            #expect(try sandbox.property("netpulse-agent", "StatusText").hasPrefix("1 interface(s) every 1s"))
            try eventually("the daemon's status line counts the agent and the ingest rate", timeout: 20) {
                let status = try sandbox.property("netpulsed", "StatusText")
                return status.hasPrefix("1 agent(s) connected;") && status.contains(" values/s; store ")
            }
            try eventually("points flow") { try sandbox.storedSamples() >= 3 }
            // Each role's key in its role's group: what runs as netpulse-agent.service does (a dynamic user with
            // the agents' group) reads the agent's key and cannot read the daemon's.
            #expect(
                try sandbox.must(
                    "stat -c '%a %U %G' /etc/netpulse/netpulsed-key.pem /etc/netpulse/sandbox-agent-key.pem")
                    == "640 root netpulse-daemon\n640 root netpulse-agents\n")
            let asAgent =
                "systemd-run --wait --collect --pipe -q -p DynamicUser=yes -p SupplementaryGroups=netpulse-agents"
            let daemonKey = try sandbox.shell("\(asAgent) cat /etc/netpulse/netpulsed-key.pem 2>&1")
            #expect(daemonKey.status != 0 && daemonKey.output.contains("Permission denied"), "\(daemonKey.output)")
            let agentKey = try sandbox.shell("\(asAgent) head -c 27 /etc/netpulse/sandbox-agent-key.pem 2>&1")
            #expect(agentKey.status == 0 && agentKey.output == "-----BEGIN PRIVATE KEY-----", "\(agentKey.output)")
            // Structured journal entries: the daemon's lines about an agent carry its id as a field.
            let entries = try sandbox.must("journalctl -u netpulsed AGENT_ID=sandbox-agent -o cat --no-pager")
            #expect(entries.contains("agent sandbox-agent connected"))
            let verbose = try sandbox.must("journalctl -u netpulsed AGENT_ID=sandbox-agent -o verbose --no-pager -n 1")
            #expect(
                verbose.contains("PEER=") && verbose.contains("CODE_FILE=") && verbose.contains("_TRANSPORT=journal"))
            // Under the unit's hardening (LimitNICE=-5) the daemon's event loops (the agents' connections) run
            // raised, ahead of drawing and billing (docs/operations.md). A service manager without CAP_SYS_RESOURCE (this machine is such a
            // container) cannot apply the limit: the daemon then says it runs everything at one priority.
            let pid = try sandbox.property("netpulsed", "MainPID")
            let threads = try sandbox.must("ps -L -o ni=,comm= -p \(pid)")
            let limit = try sandbox.must("grep 'Max nice priority' /proc/\(pid)/limits")
            let refusal = try sandbox.must(
                "journalctl -q -u netpulsed -o cat --no-pager --grep 'ingest runs at' || true")
            let loops = threads.split(separator: "\n").filter { $0.contains("NIO-ELT") }
            if limit.split(separator: " ").contains("25") {
                #expect(loops.allSatisfy { $0.split(separator: " ").first == "-5" } && !loops.isEmpty, "\(threads)")
                #expect(refusal.isEmpty, "\(refusal)")
            } else {
                #expect(loops.allSatisfy { $0.split(separator: " ").first == "0" } && !loops.isEmpty, "\(threads)")
                #expect(refusal.contains("its threads cannot be raised (Permission denied)"), "\(refusal) \(limit)")
            }
            // Either way the event loops run with short scheduling slices, which need no privilege (Linux 6.12 and
            // later): the kernel's own per-thread figure, se.slice in nanoseconds (where its debug file shows it).
            let slices = try sandbox.must(
                "for t in /proc/\(pid)/task/*; do echo \"$(cat $t/comm) $(grep '^se.slice ' $t/sched)\"; done")
            if Kernel.isAtLeast(6, 12) && slices.contains("se.slice") {
                let loopSlices = slices.split(separator: "\n").filter { $0.hasPrefix("NIO-ELT") }
                #expect(!loopSlices.isEmpty && loopSlices.allSatisfy { $0.hasSuffix(" 100000") }, "\(slices)")
            }

            // Drawing reads the kernel's CPU pressure under the unit's hardening (to rest only while the CPUs are
            // contended), wherever the kernel has it: the daemon does not say it is missing.
            if (try? String(contentsOfFile: "/proc/pressure/cpu", encoding: .utf8)) != nil {
                let missing = try sandbox.must(
                    "journalctl -q -u netpulsed -o cat --no-pager --grep 'reports no CPU pressure' || true")
                #expect(missing.isEmpty, "\(missing)")
            }

            // A clean stop: the agent closes its open batch into the spool and says so.
            try sandbox.must("systemctl stop netpulse-agent.service")
            #expect(try sandbox.property("netpulse-agent", "Result") == "success")
            #expect(
                try sandbox.must("journalctl -u netpulse-agent -o cat --no-pager").contains(
                    "stopping: closing the open batch into the spool"))
        }

        @Test(.timeLimit(.minutes(2)))
        func reloadAppliesNewSettingsAndCertificatesWithoutDroppingAnything() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            try eventually("points flow") { try sandbox.storedSamples() >= 2 }
            let agentPID = try sandbox.property("netpulse-agent", "MainPID")
            let daemonPID = try sandbox.property("netpulsed", "MainPID")

            // New certificates for both and a new batch interval for the agent, then reload both.
            try sandbox.must(
                """
                netpulse ca issue --dir /etc/netpulse/ca --daemon netpulsed --out /etc/netpulse --group netpulse-daemon --overwrite
                netpulse ca issue --dir /etc/netpulse/ca --agent sandbox-agent --out /etc/netpulse --group netpulse-agents --overwrite
                """)
            try sandbox.writeAgentConfig(batch: "3s")
            try sandbox.must("systemctl reload netpulsed.service netpulse-agent.service")
            #expect(try sandbox.property("netpulse-agent", "ActiveState") == "active")
            #expect(try sandbox.property("netpulse-agent", "MainPID") == agentPID)
            #expect(try sandbox.property("netpulsed", "MainPID") == daemonPID)
            let journal = try sandbox.must("journalctl -u netpulse-agent -u netpulsed -o cat --no-pager")
            #expect(
                journal.contains(
                    "reloaded /etc/netpulse/agent.toml; new connections use the new settings and certificates"))
            #expect(journal.contains("reloaded: new connections use the certificates in /etc/netpulse/netpulsed.pem"))

            // New connections use the new certificates: restart the daemon, the agent reconnects with its new ones.
            let before = try sandbox.storedSamples()
            try sandbox.must("systemctl restart netpulsed.service")
            try eventually("points keep flowing after the reload", timeout: 30) {
                try sandbox.storedSamples() >= before + 3
            }

            // A broken config on reload keeps the running one and says so.
            try sandbox.must(
                "echo 'interval = ' >> /etc/netpulse/agent.toml && systemctl reload netpulse-agent.service")
            // `systemctl reload` returns once SIGHUP is sent (ExecReload=kill -HUP): wait for the agent to say it.
            try eventually("the agent reports the failed reload in its status", timeout: 15) {
                try sandbox.property("netpulse-agent", "StatusText").hasPrefix(
                    "reload failed, running the previous configuration")
            }
            #expect(try sandbox.property("netpulse-agent", "ActiveState") == "active")
        }

        @Test(.timeLimit(.minutes(2)))
        func watchdogRestartsAServiceWhoseLoopStalls() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            // Test-only fault: the sampling loop blocks after 4 s; the watchdog is shortened to 6 s.
            try sandbox.must(
                """
                mkdir -p /etc/systemd/system/netpulse-agent.service.d
                printf '[Service]\\nEnvironment=NETPULSE_TEST_FAULT=stall-sampling-after-4\\nWatchdogSec=6s\\n' \
                    > /etc/systemd/system/netpulse-agent.service.d/stall.conf
                systemctl daemon-reload
                systemctl start netpulsed.service netpulse-agent.service
                """)
            try eventually("systemd restarts the stalled agent", timeout: 60) {
                Int(try sandbox.property("netpulse-agent", "NRestarts")) ?? 0 >= 1
            }
            let journal = try sandbox.must("journalctl -o cat --no-pager")
            #expect(
                journal.contains("loop stalled: sampling; no more watchdog pings, systemd will restart the service"))
            #expect(journal.contains("netpulse-agent.service: Watchdog timeout (limit 6s)!"))
            // The daemon, whose loops are fine, was never restarted.
            #expect(try sandbox.property("netpulsed", "NRestarts") == "0")
        }

        @Test(.timeLimit(.minutes(2)))
        func socketActivationStartsTheDaemonOnTheFirstConnection() throws {
            let sandbox = try Sandbox()
            try sandbox.install(socketActivation: true)
            try sandbox.must("systemctl start netpulsed.socket")
            #expect(try sandbox.property("netpulsed.service", "ActiveState") == "inactive")
            try sandbox.must("systemctl start netpulse-agent.service")
            try eventually("the first connection starts netpulsed", timeout: 30) {
                try sandbox.property("netpulsed.service", "ActiveState") == "active"
            }
            try eventually("points flow through the activated socket") { try sandbox.storedSamples() >= 2 }
            #expect(try sandbox.must("journalctl -u netpulsed -o cat --no-pager").contains("(socket from systemd)"))
        }

        @Test(.timeLimit(.minutes(2)))
        func unitsVerifyAndRateWellForSecurity() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            for unit in [
                "netpulse-agent.service", "netpulsed.service", "netpulsed.socket", "netpulse-report.service",
                "netpulse-report.timer", "netpulse-certificates.service", "netpulse-certificates.timer",
            ] {
                let (status, output) = try sandbox.shell("systemd-analyze verify /etc/systemd/system/\(unit) 2>&1")
                #expect(status == 0 && output.isEmpty, "\(unit): \(output)")
            }
            for unit in [
                "netpulse-agent.service", "netpulsed.service", "netpulse-report.service",
                "netpulse-certificates.service",
            ] {
                let report = try sandbox.must("systemd-analyze security \(unit) --no-pager")
                let line = try #require(report.split(separator: "\n").first { $0.contains("Overall exposure level") })
                let score = Double(line.split(separator: ":").last!.split(separator: " ").first!) ?? 99
                #expect(score <= 2.0, "\(unit): \(line)")
            }
        }

        /// The report service, as its timer starts it: the daemon's dynamic user with the unit's hardening, reading
        /// the running daemon's store read-only and writing the day, week and month reports that are due into
        /// /var/lib/netpulse-reports, readable by the netpulse group; again with the daemon stopped; and a run with
        /// nothing due changes nothing.
        @Test(.timeLimit(.minutes(3)))
        func theReportServiceWritesTheDueReportsFromTheDaemonsStore() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            try eventually("points flow") { try sandbox.storedSamples() >= 3 }
            #expect(try sandbox.property("netpulse-report.timer", "UnitFileState") == "disabled")
            try sandbox.must("systemctl start netpulse-report.service")
            #expect(try sandbox.property("netpulse-report.service", "Result") == "success")
            let listing = try sandbox.must("ls /var/lib/netpulse-reports")
            for kind in ["day", "week", "month"] {
                #expect(listing.contains("\(kind)-latest"), "\(listing)")
                try sandbox.must(
                    "cd /var/lib/netpulse-reports/\(kind)-latest && sha256sum --check --strict --quiet SHA256SUMS")
            }
            let owner = try sandbox.must("stat -L -c '%G %a' /var/lib/netpulse-reports/day-latest/report.html")
            #expect(owner.trimmingCharacters(in: .whitespacesAndNewlines) == "netpulse 640", "\(owner)")
            // The directory belongs to the job's user (the daemon's) and its readers' group, which may not write
            // it: a reader (an unprivileged user of group netpulse) reads a report and cannot plant anything.
            let directory = try sandbox.must(
                "stat -c '%a %G %u' /var/lib/netpulse-reports; stat -c %u /var/lib/private/netpulsed")
            let uid = directory.split(separator: "\n").last.map(String.init) ?? "?"
            #expect(directory == "2750 netpulse \(uid)\n\(uid)\n", "\(directory)")
            let reader = "setpriv --reuid=65534 --regid=$(getent group netpulse | cut -d: -f3) --clear-groups"
            #expect(
                try sandbox.shell("\(reader) cat /var/lib/netpulse-reports/day-latest/report.html >/dev/null").status
                    == 0)
            let planted = try sandbox.shell(
                "\(reader) ln -s /var/lib/private/netpulsed/netpulse.db /var/lib/netpulse-reports/ledger.json.tmp 2>&1")
            #expect(planted.status != 0 && planted.output.contains("Permission denied"), "\(planted.output)")
            let html = try sandbox.must("cat /var/lib/netpulse-reports/day-latest/report.html")
            #expect(html.contains("Netpulse report: Day ") && html.contains("</html>"))
            let journal = try sandbox.must("journalctl -u netpulse-report -o cat --no-pager")
            #expect(journal.contains("report day-") && journal.contains("written to"), "\(journal)")

            // Nothing due: the same reports, untouched.
            let state =
                "ls -l --time-style=+%s.%N /var/lib/netpulse-reports /var/lib/netpulse-reports/issues && sha256sum /var/lib/netpulse-reports/ledger.json"
            let before = try sandbox.must(state)
            try sandbox.must("systemctl start netpulse-report.service")
            #expect(try sandbox.must(state) == before)
            #expect(
                try sandbox.must("journalctl -u netpulse-report -o cat --no-pager").contains("nothing due"))

            // By hand, as root: into the same directory and ledger as the timer (the config's [reports] directory);
            // what it wrote is handed to the job's user, whose next run reads and replaces it as its own.
            let range = "--from \"$(date -u -d '-1 hour' +%Y-%m-%dT%H:00:00Z)\" --to \"$(date -u +%Y-%m-%dT%H:%M:00Z)\""
            #expect(try sandbox.must("netpulse report \(range)").contains("/var/lib/netpulse-reports/"))
            #expect(try sandbox.must("find /var/lib/netpulse-reports -user root").isEmpty)
            #expect(try sandbox.must("find /var/lib/netpulse-reports ! -group netpulse").isEmpty)
            try sandbox.must("systemctl start netpulse-report.service")
            #expect(try sandbox.property("netpulse-report.service", "Result") == "success")
            #expect(try sandbox.must("ls /var/lib/netpulse-reports").contains("range-"))

            // With the daemon stopped (its WAL gone), a report of a range still reads the store.
            try sandbox.must("systemctl stop netpulse-agent.service netpulsed.service")
            try sandbox.must(
                "systemd-run --wait --collect -p User=netpulsed -p DynamicUser=yes -p StateDirectory=netpulsed -p SupplementaryGroups=netpulse-daemon -p ReadWritePaths=/var/lib/netpulse-reports -p ProtectSystem=strict netpulse report --config /etc/netpulse/netpulsed.toml --output /var/lib/netpulse-reports --from \"$(date -u -d '-1 hour' +%Y-%m-%dT%H:00:00Z)\" --to \"$(date -u +%Y-%m-%dT%H:%M:00Z)\""
            )
            let ranges = try sandbox.must("ls /var/lib/netpulse-reports")
            #expect(ranges.contains("range-"), "\(ranges)")
        }

        /// The report service, as its timer starts it, on a daemon whose store is a PostgreSQL database (a throwaway
        /// cluster started in the sandbox as a service of its own, on loopback): under the unit's hardening it reaches the database and writes
        /// the due reports.
        @Test(
            .enabled(
                if: FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/15/bin/initdb"),
                "needs Debian's postgresql-15 (scripts/test.sh installs it)"),
            .timeLimit(.minutes(3)))
        func theReportServiceReadsAPostgreSQLStore() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            let bin = "/usr/lib/postgresql/15/bin"
            try sandbox.must(
                """
                set -e
                install -d -o postgres -g postgres -m 0700 /var/tmp/pg
                runuser -u postgres -- \(bin)/initdb -D /var/tmp/pg/data -A trust -U netpulse -E UTF8 --no-sync >/dev/null
                systemd-run -q --unit=test-postgresql -p User=postgres \(bin)/postgres -D /var/tmp/pg/data -h 127.0.0.1 -p 5433 -k /var/tmp/pg
                for _ in $(seq 1 100); do \(bin)/pg_isready -q -h 127.0.0.1 -p 5433 && break; sleep 0.1; done
                \(bin)/createdb -h 127.0.0.1 -p 5433 -U netpulse netpulse
                printf '[store]\\npostgresql = "postgresql://netpulse@127.0.0.1:5433/netpulse?sslmode=disable"\\n' >> /etc/netpulse/netpulsed.toml
                """)
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            try eventually("points flow into the database", timeout: 30) {
                let csv = try sandbox.shell(
                    "netpulse export --level raw --format csv --agent sandbox-agent --interface lo --last 1h"
                ).output
                return csv.split(separator: "\r\n").dropFirst().filter { $0.hasPrefix("sandbox-agent,lo,") }.count >= 3
            }
            try sandbox.must("systemctl start netpulse-report.service")
            let journal = try sandbox.must("journalctl -u netpulse-report -o cat --no-pager")
            #expect(try sandbox.property("netpulse-report.service", "Result") == "success", "\(journal)")
            let listing = try sandbox.must("ls /var/lib/netpulse-reports")
            #expect(listing.contains("day-latest"), "\(listing)\n\(journal)")
            try sandbox.must("cd /var/lib/netpulse-reports/day-latest && sha256sum --check --strict --quiet SHA256SUMS")
        }

        /// What the daemon publishes and its HTTP API, under the shipped unit: a user in the group netpulse reads the
        /// dashboards (also through a static web server of their own) and the API over the Unix socket; a user outside
        /// it can do neither; over TCP an unauthenticated request gets 401.
        @Test(.timeLimit(.minutes(3)))
        func theGroupNetpulseReadsTheDashboardsAndTheAPIAndNoOneElseDoes() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            try sandbox.must(
                """
                cat >> /etc/netpulse/netpulsed.toml <<'CONF'
                [daemon]
                publish_directory = "/var/lib/netpulse-published"
                [http]
                listen = "127.0.0.1:9470"
                CONF
                """)
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            try eventually("points flow") { try sandbox.storedSamples() >= 3 }
            let dashboards = "/var/lib/netpulse-published/dashboards"
            try eventually("the dashboards are drawn", timeout: 60) {
                try sandbox.shell("test -f \(dashboards)/index.html && ls \(dashboards) | grep -q '\\.svg$'").status
                    == 0
            }
            let svg = try sandbox.must("ls \(dashboards) | grep '\\.svg$' | head -n 1")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let modes = try sandbox.must(
                "stat -c '%a %G' /var/lib/netpulse-published \(dashboards) \(dashboards)/index.html \(dashboards)/\(svg) /run/netpulsed /run/netpulsed/http.sock"
            )
            #expect(
                modes == "2750 netpulse\n750 netpulse\n640 netpulse\n640 netpulse\n750 netpulse\n660 netpulse\n",
                "\(modes)")
            // The store stays the daemon's own.
            #expect(try sandbox.must("stat -c %a /var/lib/private/netpulsed/netpulse.db") == "600\n")

            let group = "$(getent group netpulse | cut -d: -f3)"
            let reader = "setpriv --reuid=65534 --regid=\(group) --clear-groups"
            let outsider = "setpriv --reuid=65534 --regid=65534 --clear-groups"
            let page = try sandbox.shell("\(reader) cat \(dashboards)/index.html \(dashboards)/\(svg) 2>&1")
            #expect(page.status == 0 && page.output.contains("</html>") && page.output.contains("</svg>"))
            let refused = try sandbox.shell("\(outsider) cat \(dashboards)/index.html 2>&1")
            #expect(refused.status != 0 && refused.output.contains("Permission denied"), "\(refused.output)")

            // A static web server whose user is in the group (a transient service: a dynamic user with the group
            // netpulse beside its own) serves the pages as they are.
            try sandbox.must(
                "systemd-run --unit static-web -p DynamicUser=yes -p SupplementaryGroups=netpulse /usr/bin/python3 -m http.server 8088 --bind 127.0.0.1 --directory \(dashboards)"
            )
            do {
                try eventually("the static server answers", timeout: 20) {
                    try sandbox.shell("curl -sf http://127.0.0.1:8088/index.html | grep -q '</html>'").status == 0
                }
            } catch {
                let status = try sandbox.shell(
                    "systemctl status static-web --no-pager -l; journalctl -u static-web --no-pager -n 20")
                Issue.record("\(error)\n\(status.output)")
            }
            #expect(try sandbox.must("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8088/\(svg)") == "200")

            let api = "curl -s -w ' %{http_code}' --unix-socket /run/netpulsed/http.sock http://netpulse/api/v1/rates"
            let answer = try sandbox.shell("\(reader) \(api)")
            #expect(
                answer.status == 0 && answer.output.contains("sandbox-agent") && answer.output.hasSuffix(" 200"),
                "\(answer.output)")
            let table = try sandbox.shell(
                "\(reader) netpulse --daemon unix:/run/netpulsed/http.sock rates")
            #expect(table.status == 0 && table.output.contains("sandbox-agent"), "\(table.output)")
            // Without --daemon too: the config is not theirs to read, so the CLI asks the daemon's socket, and
            // answers as it does for root.
            let plain = try sandbox.shell("\(reader) netpulse rates --format csv 2>&1")
            let asRoot = try sandbox.shell("netpulse --daemon unix:/run/netpulsed/http.sock rates --format csv 2>&1")
            #expect(plain.status == 0 && plain.output.contains("sandbox-agent"), "\(plain.output)")
            // The same interfaces, each by agent and name (the rates themselves move between the two reads).
            func interfaces(_ csv: String) -> [String] {
                csv.split(whereSeparator: \.isNewline).map { $0.split(separator: ",").prefix(2).joined(separator: ",") }
            }
            #expect(interfaces(plain.output) == interfaces(asRoot.output) && interfaces(plain.output).count > 1)
            let shut = try sandbox.shell("\(outsider) \(api) 2>&1")
            #expect(shut.status != 0 && !shut.output.contains("sandbox-agent"), "\(shut.output)")
            // Someone outside the group is told what is missing.
            let denied = try sandbox.shell("\(outsider) netpulse rates 2>&1")
            #expect(
                denied.status != 0
                    && denied.output.contains(
                        "cannot read /etc/netpulse/netpulsed.toml (it is for root and the group netpulse-daemon) and may not use the daemon's socket /run/netpulsed/http.sock either: add yourself to its group, netpulse"
                    ), "\(denied.output)")
            #expect(
                try sandbox.must("curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:9470/api/v1/rates") == "401"
            )
        }

        @Test(.timeLimit(.minutes(2)))
        func aBadConfigShowsInSystemctlStatus() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            try sandbox.must("printf '[listen]\\naddress = \"nowhere\"\\n' > /etc/netpulse/netpulsed.toml")
            let (status, _) = try sandbox.shell("systemctl start netpulsed.service")
            #expect(status != 0)
            // Not restarted over and over: a config error (exit status 2) will not fix itself.
            #expect(try sandbox.property("netpulsed", "ActiveState") == "failed")
            let expected =
                "/etc/netpulse/netpulsed.toml:2: 'listen.address' \"nowhere\" is not host:port (for IPv6: [::]:7420)"
            try eventually("systemctl status shows the config error") {
                try sandbox.shell("systemctl status netpulsed.service --no-pager -l").output.contains(expected)
            }
        }

        /// The steps scripts/install.sh prints at its end, run as printed on a host with no certificates yet: the
        /// services start and the agent delivers (its config as shipped, but for the loopback it samples here).
        @Test(.timeLimit(.minutes(2)))
        func theNextStepsInstallPrintsWorkAsPrinted() throws {
            let sandbox = try Sandbox()
            let output = try sandbox.must("cd \(Build.root) && scripts/install.sh --binaries .build/debug")
            let steps = output.components(separatedBy: "==> installed. Next:\n").last ?? ""
            let commands = steps.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") && !$0.hasPrefix("systemctl status") }
            #expect(commands.contains { $0.hasPrefix("netpulse-agent request") }, "\(steps)")
            #expect(commands.last?.hasPrefix("systemctl start") == true, "\(steps)")
            try sandbox.must(
                #"sed -i -e 's/^exclude = \["lo"\]/exclude = []/' -e 's/^address = "0.0.0.0:7420"/address = "127.0.0.1:7420"/' /etc/netpulse/agent.toml /etc/netpulse/netpulsed.toml"#
            )
            for command in commands {
                try sandbox.must(
                    "set -e; " + command.replacingOccurrences(of: #"\s+# .*$"#, with: "", options: .regularExpression))
            }
            try eventually("the agent connects with the certificate the steps made", timeout: 30) {
                try sandbox.property("netpulsed", "StatusText").hasPrefix("1 agent(s) connected;")
            }
        }

        @Test(.timeLimit(.minutes(2)))
        func uninstallRemovesTheServicesAndKeepsTheData() throws {
            let sandbox = try Sandbox()
            try sandbox.install()
            try sandbox.must("systemctl start netpulsed.service netpulse-agent.service")
            try eventually("points flow") { try sandbox.storedSamples() >= 1 }
            try sandbox.must("cd \(Build.root) && scripts/uninstall.sh")
            #expect(
                try sandbox.shell("test -e /usr/local/bin/netpulsed || test -e /etc/systemd/system/netpulsed.service")
                    .status != 0)
            #expect(
                try sandbox.shell(
                    "test -e /etc/netpulse/netpulsed.toml && test -e /var/lib/private/netpulsed/netpulse.db"
                ).status == 0)
            // --purge removes the configs and the data, never the keys, certificates or the CA.
            try sandbox.must("cd \(Build.root) && scripts/uninstall.sh --purge")
            #expect(
                try sandbox.shell(
                    "test -e /etc/netpulse/netpulsed.toml || test -e /etc/netpulse/agent.toml || test -e /var/lib/private/netpulsed"
                ).status != 0)
            try sandbox.must(
                "test -s /etc/netpulse/ca/ca-key.pem && test -s /etc/netpulse/netpulsed-key.pem && test -s /etc/netpulse/ca.pem"
            )
            #expect(try sandbox.must("stat -c %G /etc/netpulse/sandbox-agent-key.pem") == "netpulse-agents\n")
        }
    }
}
