import Foundation
import Testing

extension EndToEnd {
    /// The daemon's HTTP API (`[http]`) as an operator uses it: the CLI against the daemon prints the bytes it prints
    /// on the daemon's host, over the Unix socket and over TLS (an operator's certificate, or basic auth), and only
    /// operators get in.
    @Suite(.serialized) struct HTTPAPITests {
        /// Every read subcommand in each of its formats, with windows given as ranges, lengths and names, and the
        /// options each takes.
        static func commands(from: String, to: String) -> [[String]] {
            var commands = [[String]]()
            for format in ["table", "csv", "json"] {
                commands += [
                    ["rates", "--format", format],
                    ["rates", "--interface", "l*", "--format", format],
                    ["traffic", "--by", "5min", "--last", "1h", "--format", format],
                    ["traffic", "--by", "hour", "--scope", "interface", "--format", format],
                    ["traffic", "--by", "day", "--scope", "host", "--format", format],
                    ["traffic", "--by", "month", "--from", from, "--to", to, "--format", format],
                    ["top", "--last", "1h", "--format", format],
                    ["top", "--by", "peak", "--scope", "host", "--from", from, "--to", to, "--format", format],
                    ["top", "--by", "p95", "--window", "today", "--top", "3", "--format", format],
                    ["top", "--by", "errors", "--scope", "group", "--last", "30m", "--format", format],
                    ["bill", "--format", format],
                    ["bill", "--scope", "interface", "--members", "--format", format],
                    ["bill", "--scope", "host", "--period", "previous", "--format", format],
                ]
            }
            for format in ["csv", "json"] {
                commands += [
                    ["export", "--last", "1h", "--format", format],
                    [
                        "export", "--level", "1m", "--scope", "interface", "--from", from, "--to", to, "--format",
                        format,
                    ],
                    ["export", "--level", "raw", "--interface", "lo", "--last", "10m", "--format", format],
                    ["snapshot", "--format", format],
                    ["alerts", "events", "--since", "7d", "--format", format],
                ]
            }
            commands += [
                ["alerts"], ["alerts", "--format", "json", "--since", "1h", "--limit", "5"],
                ["alerts", "events", "--limit", "1"],
            ]
            return commands
        }

        @Test(.timeLimit(.minutes(4)))
        func theCLIAgainstTheDaemonPrintsWhatItPrintsOnItsHost() throws {
            let fleet = try Fleet(agents: ["agent-1"])
            let ca = "\(fleet.directory)/ca"
            try run([Build.cli, "ca", "issue", "--dir", ca, "--operator", "alice"])
            let password = "correct horse battery staple"
            try "\(password)\n".write(toFile: "\(fleet.directory)/password", atomically: true, encoding: .utf8)
            try "# operators\nbob:\(try Self.bcrypt(password))\n".write(
                toFile: "\(fleet.directory)/users", atomically: true, encoding: .utf8)
            let port = try freePort()
            let socket = "\(fleet.directory)/http.sock"
            try fleet.editDaemonConfig {
                $0 + "\nlisten = \"127.0.0.1:\(port)\"\nusers_file = \"\(fleet.directory)/users\"\n"
                    + "[labels.agent-1]\nsite = \"fra1\"\n"
                    // An alert that fires at once on the agent's own traffic to the daemon, for the alert reads.
                    + "[alerts]\nevaluation_interval = \"1s\"\n"
                    + "[alert.LoopbackTalks]\nexpr = \"rate > 1bit/s\"\nfor = \"0s\"\nscope = \"interface\"\n"
                    + "interfaces = [\"lo\"]\n"
            }
            try fleet.startDaemon()
            try fleet.startAgent("agent-1", config: try fleet.writeAgentConfig("agent-1"))
            try eventually("the agent's counters are stored and its alert fires", timeout: 60) {
                try fleet.samples("agent-1", "lo").count >= 20
                    && (try run([Build.cli, "alerts", "--config", "\(fleet.directory)/netpulsed.toml"]))
                        .contains("firing")
            }
            fleet.agents["agent-1"]?.stop()
            fleet.daemon?.stop()

            // One frozen instant for the daemon and the local command, so `now` (rates' "last seen", windows
            // ending now) is the same on both sides.
            let instant = Date().addingTimeInterval(5)
            let frozen = Self.frozenClock(at: instant)
            let daemon = try Self.startDaemon(fleet, frozen: frozen)
            defer { _ = try? run(["pkill", "-TERM", "-P", "\(daemon.pid)"], allowFailure: true) }
            try eventually("the frozen daemon serves HTTPS", timeout: 30) {
                daemon.output.contains("serving the API on https://") && daemon.output.contains("unix:\(socket)")
            }

            let day = DateFormatter()
            day.locale = Locale(identifier: "en_US_POSIX")
            day.timeZone = TimeZone(identifier: "UTC")
            day.dateFormat = "yyyy-MM-dd"
            let from = day.string(from: instant.addingTimeInterval(-86_400))
            let to = day.string(from: instant.addingTimeInterval(86_400))
            let config = ["--config", "\(fleet.directory)/netpulsed.toml"]
            let home = "\(fleet.directory)/home"
            try FileManager.default.createDirectory(atPath: "\(home)/netpulse", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(ca)/ca.pem", toPath: "\(home)/netpulse/ca.pem")
            let https = "https://127.0.0.1:\(port)"
            let asOperator = [
                "XDG_CONFIG_HOME=\(home)", "NETPULSE_CERT=\(ca)/alice.pem", "NETPULSE_KEY=\(ca)/alice-key.pem",
            ]
            let asUser = [
                "XDG_CONFIG_HOME=\(home)", "NETPULSE_USER=bob", "NETPULSE_PASSWORD_FILE=\(fleet.directory)/password",
            ]
            var compared = 0
            for (index, command) in Self.commands(from: from, to: to).enumerated() {
                let local = try run(frozen + [Build.cli] + command + config)
                #expect(!local.isEmpty, "\(command) printed nothing")
                let overSocket = try run([Build.cli, "--daemon", "unix:\(socket)"] + command)
                #expect(overSocket == local, "\(command) over the socket differs:\n\(overSocket)\nlocally:\n\(local)")
                // Over TLS, in turn with the operator's certificate and with basic auth, the URL by the environment
                // or by the option after the command.
                let overTLS =
                    index % 2 == 0
                    ? try run(asOperator + [Build.cli, "--daemon", https] + command)
                    : try run(asUser + ["NETPULSE_DAEMON=\(https)", Build.cli] + command)
                #expect(overTLS == local, "\(command) over TLS differs:\n\(overTLS)\nlocally:\n\(local)")
                compared += 1
            }
            #expect(compared == 52)

            // A mistake reads as one line naming the parameter, before anything is read.
            let bad = try run(["curl", "-s", "--unix-socket", socket, "http://netpulse/api/v1/top?last=5x"])
            #expect(
                bad
                    == #"{"error":"last=5x: not a duration; use a number and a unit, such as 30m, 24h or 7d","parameter":"last"}"#
                    + "\n")
            let unknown = try run(["curl", "-s", "--unix-socket", socket, "http://netpulse/api/v1/rates?agnet=x"])
            #expect(unknown.contains(#""parameter":"agnet""#), "\(unknown)")
            let cli = try run(
                [Build.cli, "--daemon", "unix:\(socket)", "top", "--by", "p95", "--top", "0"], allowFailure: true)
            #expect(cli.isEmpty)

            // Over TCP only operators get in: no credentials, a wrong password, or an agent's certificate are refused.
            func status(_ arguments: [String]) throws -> String {
                try run(
                    ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", "\(ca)/ca.pem"] + arguments,
                    allowFailure: true)
            }
            #expect(try status(["\(https)/api/v1/rates"]) == "401")
            #expect(try status(["-u", "bob:wrong", "\(https)/api/v1/rates"]) == "401")
            #expect(try status(["-u", "mallory:\(password)", "\(https)/api/v1/rates"]) == "401")
            #expect(try status(["-u", "bob:\(password)", "\(https)/api/v1/rates"]) == "200")
            #expect(
                try status(["--cert", "\(ca)/agent-1.pem", "--key", "\(ca)/agent-1-key.pem", "\(https)/metrics"])
                    == "403")
            // HTTP/2 when the client offers it (a browser's live pages then share one connection), else HTTP/1.1;
            // the operator's certificate is found under both.
            for (option, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
                #expect(
                    try status([
                        option, "-w", "%{http_code} %{http_version}", "--cert", "\(ca)/alice.pem", "--key",
                        "\(ca)/alice-key.pem", "\(https)/metrics",
                    ]) == "200 \(version)")
                #expect(try status([option, "\(https)/api/v1/rates"]) == "401")
            }
            let metrics = try run(["curl", "-s", "--unix-socket", socket, "http://netpulse/metrics"])
            #expect(metrics.contains("netpulse_commit_duration_seconds"), "\(metrics.prefix(300))")
            // The OpenAPI document names every read and, for each, exactly the parameters it takes.
            let openAPI = try run(["curl", "-s", "--unix-socket", socket, "http://netpulse/api/v1/openapi.json"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(openAPI.utf8)) as? [String: Any])
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let common = ["format", "agent", "interface", "group", "last", "window", "from", "to"]
            let expected: [String: [String]] = [
                "rates": ["format", "agent", "interface", "group"], "traffic": common + ["by", "scope"],
                "top": common + ["by", "top", "scope"],
                "bill": ["format", "agent", "interface", "group", "period", "scope", "members"],
                "export": common + ["level", "scope"],
                "snapshot": ["format"], "alerts": ["format", "since", "limit"], "events": ["format", "since", "limit"],
            ]
            #expect(
                Set(paths.keys)
                    == Set(expected.keys.map { "/api/v1/\($0)" }).union(["/api/v1/silences", "/api/v1/silences/{id}"]))
            for (read, names) in expected {
                let operation = paths["/api/v1/\(read)"]?["get"] as? [String: Any]
                let parameters = (operation?["parameters"] as? [[String: Any]] ?? []).compactMap {
                    $0["name"] as? String
                }
                #expect(Set(parameters) == Set(names), "\(read): \(parameters)")
            }
            #expect(document["openapi"] as? String == "3.1.0")
            // Plain HTTP to the TLS port gets nothing.
            #expect(try status(["http://127.0.0.1:\(port)/api/v1/rates"]) == "000")
            // Nothing writes without [http] allow_silences.
            let refused = try run([
                "curl", "-s", "-w", " %{http_code}", "--unix-socket", socket, "-X", "POST",
                "http://netpulse/api/v1/silences", "-d", #"{"match": {"host": "*"}, "for": "1h"}"#,
            ])
            #expect(refused.hasSuffix(" 403") && refused.contains("allow_silences"), "\(refused)")
            let notEnded = try run([
                "curl", "-s", "-w", " %{http_code}", "--unix-socket", socket, "-X", "DELETE",
                "http://netpulse/api/v1/silences/x",
            ])
            #expect(notEnded.hasSuffix(" 403") && notEnded.contains("allow_silences"), "\(notEnded)")

            // Alice's certificate revoked (`netpulse ca revoke`, the list named in [tls] revoked, a reload): refused
            // from then on, and said in the log; bob's password still lets him in.
            let alice = ["--cert", "\(ca)/alice.pem", "--key", "\(ca)/alice-key.pem", "\(https)/api/v1/rates"]
            #expect(try status(alice) == "200")
            try run([Build.cli, "ca", "revoke", "alice", "--dir", ca])
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "[tls]\n", with: "[tls]\nrevoked = \"\(ca)/revoked.txt\"\n")
            }
            // The frozen daemon runs under faketime, as its child.
            _ = try run(["pkill", "-HUP", "-P", "\(daemon.pid)"])
            try eventually("alice's certificate is refused") { try status(alice) == "403" }
            #expect(daemon.output.contains("http: refused the operator certificate alice (serial "))
            #expect(try status(["-u", "bob:\(password)", "\(https)/api/v1/rates"]) == "200")
        }

        /// With `[http] allow_silences`, operators make and end silences over HTTP: the author is who logged in, and
        /// what a silence may hold is bounded.
        @Test(.timeLimit(.minutes(3)))
        func silencesOverHTTPWhenAllowed() throws {
            let fleet = try Fleet(agents: [])
            let password = "tr0ub4dor"
            try "\(password)\n".write(toFile: "\(fleet.directory)/password", atomically: true, encoding: .utf8)
            try "bob:\(try Self.bcrypt(password))\n".write(
                toFile: "\(fleet.directory)/users", atomically: true, encoding: .utf8)
            let port = try freePort()
            let socket = "\(fleet.directory)/http.sock"
            try fleet.editDaemonConfig {
                $0
                    + "\nlisten = \"127.0.0.1:\(port)\"\nusers_file = \"\(fleet.directory)/users\"\nallow_silences = true\n"
            }
            try fleet.startDaemon()
            try eventually("the daemon serves HTTPS", timeout: 30) {
                fleet.daemon!.output.contains("serving the API on https://")
            }
            let home = "\(fleet.directory)/home"
            try FileManager.default.createDirectory(atPath: "\(home)/netpulse", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(fleet.directory)/ca/ca.pem", toPath: "\(home)/netpulse/ca.pem")
            let asBob = [
                "XDG_CONFIG_HOME=\(home)", "NETPULSE_USER=bob", "NETPULSE_PASSWORD_FILE=\(fleet.directory)/password",
            ]
            let config = ["--config", "\(fleet.directory)/netpulsed.toml"]

            // Made over TLS by bob, who claims to be mallory: the listing says bob.
            let said = "\(fleet.directory)/said"
            let id = try run(
                ["sh", "-c", "\"$@\" 2>\"\(said)\"", "sh", "env"] + asBob + [
                    Build.cli, "--daemon", "https://127.0.0.1:\(port)", "alerts", "silence", "--match", "host=web-*",
                    "--for", "2h", "--comment", "kernel update", "--author", "mallory",
                ]
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            let message = try String(contentsOfFile: said, encoding: .utf8)
            #expect(message.hasPrefix("silenced host=\"web-*\" until "), "\(message)")
            let listing = try run([Build.cli, "alerts", "--format", "json"] + config)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [String: Any])
            let silences = try #require(object["silences"] as? [[String: Any]])
            #expect(silences.count == 1)
            #expect(silences.first?["id"] as? String == id)
            #expect(silences.first?["createdBy"] as? String == "bob")
            #expect(silences.first?["comment"] as? String == "kernel update")
            #expect(fleet.daemon!.output.contains("silence \(id) made over HTTP by bob"))

            // Mistakes and excess are a 4xx naming the field, and store nothing.
            func post(_ body: String, _ headers: [String] = ["Content-Type: application/json"]) throws -> String {
                try run(
                    [
                        "curl", "-s", "-w", " %{http_code}", "--unix-socket", socket, "-X", "POST",
                        "http://netpulse/api/v1/silences", "--data-binary", body,
                    ] + headers.flatMap { ["-H", $0] })
            }
            // What a page on another site could send with the operator's browser: a form or plain text (no
            // preflight), or anything the browser marks as cross-site.
            let valid = #"{"match": {"alertname": "*"}, "for": "1h"}"#
            #expect(try post(valid, ["Content-Type: text/plain"]).hasSuffix(" 415"))
            #expect(try post(valid, ["Content-Type: application/x-www-form-urlencoded"]).hasSuffix(" 415"))
            #expect(
                try post(valid, ["Content-Type: application/json", "Sec-Fetch-Site: cross-site"]).hasSuffix(" 403"))
            #expect(
                try post(valid, ["Content-Type: application/json", "Origin: https://evil.example"]).hasSuffix(" 403"))
            #expect(try post(#"{"match": {}, "for": "1h"}"#).hasSuffix(#""parameter":"match"}"# + "\n 400"))
            #expect(try post(#"{"match": {"host": "a"}, "for": "2x"}"#).hasSuffix(#""parameter":"for"}"# + "\n 400"))
            #expect(try post(#"{"match": {"host": "a"}, "for": "400d"}"#).hasSuffix(" 400"))
            #expect(
                try post(#"{"match": {"host": "a"}, "for": "1h", "until": "x"}"#).hasSuffix(
                    #""parameter":"until"}"# + "\n 400"))
            #expect(try post(#"{"match": {"host": 1}, "for": "1h"}"#).hasSuffix(" 400"))
            #expect(try post("not json").hasSuffix(" 400"))
            let many = (0..<40).map { #""l\#($0)": "x""# }.joined(separator: ", ")
            #expect(try post(#"{"match": {\#(many)}, "for": "1h"}"#).hasSuffix(" 400"))
            let huge = String(repeating: "x", count: 70_000)
            #expect(try post(#"{"match": {"host": "a"}, "for": "1h", "comment": "\#(huge)"}"#).hasSuffix(" 413"))
            let still = try run([Build.cli, "alerts", "--format", "json"] + config)
            #expect(still.components(separatedBy: "\"createdBy\"").count == 2, "\(still)")

            // Ended over the socket (again is harmless); one that never was is a 404.
            for _ in 0..<2 {
                let ended = try run(
                    ["sh", "-c", "\"$@\" 2>&1", "sh", Build.cli, "--daemon", "unix:\(socket)", "alerts", "expire", id])
                #expect(ended == "silence \(id) ended\n")
            }
            #expect(!(try run([Build.cli, "alerts"] + config)).contains(id))
            let never = try run(
                ["sh", "-c", "\"$@\" 2>&1", "sh", Build.cli, "--daemon", "unix:\(socket)", "alerts", "expire", "x<y"],
                allowFailure: true)
            #expect(never.contains("the daemon answered 404: no silence x<y"), "\(never)")
        }

        /// Live pages share reads (`LiveReads`): requests for one dashboard and range in the same second, while nothing
        /// was stored, get one answer. What was stored since is never hidden: a redraw after a commit shows it, even
        /// within the same second. The daemon's clock stands still (libfaketime), ten minutes ahead of the agent's,
        /// so every request below falls in one second and the agent's samples in buckets the last hour draws.
        @Test(.timeLimit(.minutes(2)))
        func aPanelAskedForAgainShowsWhatWasStoredSinceEvenInTheSameSecond() throws {
            let fleet = try Fleet(agents: ["agent-1"])
            let socket = "\(fleet.directory)/http.sock"
            // The agent's own uploads cross `lo`: counted, the fleet's totals move with every batch stored.
            try fleet.editDaemonConfig { $0 + "\n[aggregation]\ncount = [\"loopback\"]\n" }
            let daemon = try Self.startDaemon(fleet, frozen: Self.frozenClock(at: Date().addingTimeInterval(600)))
            defer { _ = try? run(["pkill", "-TERM", "-P", "\(daemon.pid)"], allowFailure: true) }
            try eventually("the frozen daemon listens", timeout: 30) {
                daemon.output.contains("listening on") && daemon.output.contains("unix:\(socket)")
            }
            let config = try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#)
            /// The fleet's top hosts by bytes over the last hour, as a page's redraw asks for it: its entity tag, and the
            /// sum of every value drawn (more samples stored, more bytes).
            func panel() throws -> (tag: String, sum: Double, json: String) {
                let headers = try run([
                    "curl", "-s", "-D", "-", "-o", "/dev/null", "--unix-socket", socket,
                    "http://netpulse/dashboards/fleet/panels/1.svg?range=hour&inline=1",
                ])
                let tag = try #require(
                    headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }.map {
                        String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces)
                    })
                let json = try run([
                    "curl", "-s", "--fail", "--unix-socket", socket,
                    "http://netpulse/dashboards/fleet/panels/1.json?range=hour",
                ])
                let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
                let rows = try #require(object["rows"] as? [[Any]])
                return (tag, rows.flatMap { $0 }.compactMap { ($0 as? NSNumber)?.doubleValue }.reduce(0, +), json)
            }
            /// Stops the agent and waits until its last batch is stored.
            func stop(_ agent: Daemonized) throws -> Int {
                _ = agent.stop()
                var last = -1
                try eventually("the agent's last batch is stored", timeout: 30) {
                    let count = try fleet.samples("agent-1", "lo").count
                    defer { last = count }
                    usleep(500_000)
                    return count == last
                }
                return last
            }

            var agent = try fleet.startAgent("agent-1", config: config)
            try eventually("the agent's first samples are stored", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= 10
            }
            let count = try stop(agent)
            let before = try panel()
            #expect(before.sum > 0, "the samples stored are drawn: \(before.json)")
            #expect(try panel() == before, "nothing stored in between: the same answer")

            agent = try fleet.startAgent("agent-1", config: config)
            try eventually("more samples are stored", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= count + 10
            }
            _ = try stop(agent)
            let after = try panel()
            #expect(after.sum > before.sum, "what was stored since is drawn (\(before.sum) before, \(after.sum) after)")
            #expect(after.tag != before.tag)

            // A redraw asks with the data generation its announcement carried: any read at least that new answers
            // it; one from before a daemon restart (above today's count) is answered with what there is.
            let told = try run([
                "curl", "-s", "--fail", "--unix-socket", socket,
                "http://netpulse/dashboards/fleet/panels/1.json?range=hour&since=999999999",
            ])
            #expect(told == after.json)
            let refused = try run([
                "curl", "-s", "-w", " %{http_code}", "--unix-socket", socket,
                "http://netpulse/dashboards/fleet/panels/1.json?range=hour&since=soon",
            ])
            #expect(refused.hasSuffix(" 400") && refused.contains("since"), "\(refused)")
        }

        /// A live page's event carries the page's panels as drawn for it: every panel's entity tag, with the picture
        /// only where the tag differs from what the stream was told the page shows (`shown`, from the page's events
        /// link). The daemon's clock stands still ten minutes ahead of the agent's (libfaketime), so the window does
        /// not move and each batch is announced (its samples are in buckets the page draws); the agent sends only
        /// `lo`, which the fleet overview does not count, so nothing it draws changes while the events come.
        @Test(.timeLimit(.minutes(2)))
        func anEventCarriesThePicturesOfThePanelsThatChangedAndOnlyThose() throws {
            let fleet = try Fleet(agents: ["agent-1"])
            let socket = "\(fleet.directory)/http.sock"
            let daemon = try Self.startDaemon(fleet, frozen: Self.frozenClock(at: Date().addingTimeInterval(600)))
            defer { _ = try? run(["pkill", "-TERM", "-P", "\(daemon.pid)"], allowFailure: true) }
            try eventually("the frozen daemon listens", timeout: 30) {
                daemon.output.contains("listening on") && daemon.output.contains("unix:\(socket)")
            }
            let agent = try fleet.startAgent(
                "agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            defer { _ = agent.stop() }
            try eventually("the agent's first samples are stored", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= 2
            }
            func get(_ path: String) throws -> String {
                try run(["curl", "-s", "--fail", "--unix-socket", socket, "http://netpulse\(path)"])
            }
            func unescaped(_ text: Substring) -> String {
                text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
            }
            let page = try get("/dashboards/fleet?range=hour")
            let tags = page.matches(of: /data-tag="([^"]*)"/).map { unescaped($0.output.1) }
            let link = try #require(page.firstMatch(of: /data-events="([^"]*)"/).map { unescaped($0.output.1) })
            #expect(tags.count >= 2 && tags.allSatisfy { $0.hasPrefix("\"") }, "\(tags)")
            #expect(link.hasSuffix("&shown=" + tags.map { $0.filter(\.isHexDigit) }.joined(separator: ",")), "\(link)")

            // The page's own stream, and one told nothing (a page of before, or a client that does not care).
            let told = try Daemonized(
                ["/usr/bin/curl", "-sN", "--max-time", "60", "--unix-socket", socket, "http://netpulse\(link)"],
                log: "\(fleet.directory)/told.events")
            let untold = try Daemonized(
                [
                    "/usr/bin/curl", "-sN", "--max-time", "60", "--unix-socket", socket,
                    "http://netpulse/dashboards/fleet/events?range=hour",
                ], log: "\(fleet.directory)/untold.events")
            // Killed: a curl reading a stream is not waited for (it took SIGTERM's 15 s grace here).
            defer {
                for stream in [told, untold] where stream.isRunning { stream.killHard() }
            }
            /// The panels of the stream's events so far, each event's as (tag, picture or nil).
            func events(_ stream: Daemonized) throws -> [[(tag: String, svg: String?)]] {
                try stream.output.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { line in
                    let object = try #require(
                        try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any])
                    #expect(object["generation"] is Int, "\(object)")
                    let panels = try #require(object["panels"] as? [[String: Any]], "\(object)")
                    return try panels.map { (try #require($0["tag"] as? String), $0["svg"] as? String) }
                }
            }
            try eventually("both streams have had two events", timeout: 40) {
                try events(told).count >= 2 && events(untold).count >= 2
            }
            for event in try events(told) {
                #expect(event.map(\.tag) == tags, "the same pictures as the page's")
                #expect(event.allSatisfy { $0.svg == nil }, "nothing sent again that the page shows")
            }
            let first = try events(untold)[0]
            #expect(first.map(\.tag) == tags)
            for (index, panel) in first.enumerated() {
                // The picture the tag names, as the page's fallback would fetch it.
                #expect(panel.svg == (try get("/dashboards/fleet/panels/\(index).svg?range=hour&inline=1")))
            }
            #expect(try events(untold).dropFirst().allSatisfy { $0.allSatisfy { $0.svg == nil } })
        }

        /// An open page of the fleet is read as of its next boundary half a second before the daemon's clock reaches
        /// it, so the redraw the first batches after the boundary cause finds the moved window's sums kept. The
        /// daemon's clock starts twenty seconds before a five-minute boundary and runs (libfaketime); the test sees the
        /// read ahead in the daemon's log before that clock reaches the boundary, as well as the daemon saying so.
        @Test(.timeLimit(.minutes(2)))
        func anOpenFleetPageIsReadAheadOfItsNextBoundary() throws {
            let fleet = try Fleet(agents: ["agent-1"])
            let socket = "\(fleet.directory)/http.sock"
            let boundary = (Date().timeIntervalSince1970 / 300).rounded(.down) * 300 + 600
            let started = Date()
            // The daemon's clock, from its start: the boundary less twenty seconds, and running.
            let daemon = try Self.startDaemon(
                fleet, frozen: Self.frozenClock(at: Date(timeIntervalSince1970: boundary - 20), running: true),
                arguments: ["--log-level", "debug"])
            defer { _ = try? run(["pkill", "-TERM", "-P", "\(daemon.pid)"], allowFailure: true) }
            try eventually("the daemon listens", timeout: 15) {
                daemon.output.contains("listening on") && daemon.output.contains("unix:\(socket)")
            }
            let stream = try Daemonized(
                [
                    "/usr/bin/curl", "-sN", "--max-time", "30", "--unix-socket", socket,
                    "http://netpulse/dashboards/fleet/events?range=hour",
                ], log: "\(fleet.directory)/fleet.events")
            defer { if stream.isRunning { stream.killHard() } }
            let line = /live page fleet \(range=hour\) read ahead at (\S+) as of its boundary (\S+)/
            try eventually("the fleet's page is read ahead", timeout: 40, interval: 0.02) {
                daemon.output.contains(line)
            }
            // When the line was seen, by the daemon's clock (started no earlier than `started`, so no later than this).
            let seen = boundary - 20 + Date().timeIntervalSince(started)
            #expect(seen < boundary, "read ahead \(boundary - seen) s before the boundary")
            let match = try #require(daemon.output.firstMatch(of: line))
            let parse = ISO8601DateFormatter()
            parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            func time(_ text: Substring) -> Date? {
                parse.date(from: String(text)) ?? ISO8601DateFormatter().date(from: String(text))
            }
            let at = try #require(time(match.output.1)), asOf = try #require(time(match.output.2))
            #expect(asOf.timeIntervalSince1970 == boundary, "as of the boundary: \(match.output.0)")
            #expect(at < asOf && asOf.timeIntervalSince(at) <= 0.6, "half a second before it: \(match.output.0)")
        }

        /// The start of a command line (for `/usr/bin/env`) on which the clock stands still at `instant` (libfaketime),
        /// in UTC, or starts there and runs (`running`); the monotonic clock runs on, so timers still fire.
        static func frozenClock(at instant: Date, running: Bool = false) -> [String] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            return [
                "FAKETIME_DONT_FAKE_MONOTONIC=1", "TZ=UTC", "/usr/bin/faketime", "-f",
                (running ? "@" : "") + formatter.string(from: instant),
            ]
        }

        /// The fleet's daemon under `frozen` (``frozenClock(at:running:)``), with `arguments` after its config; stop it
        /// with `pkill -P` on its pid (faketime's).
        static func startDaemon(_ fleet: Fleet, frozen: [String], arguments: [String] = []) throws -> Daemonized {
            try Daemonized(
                ["/usr/bin/env"] + frozen + [Build.netpulsed, "--config", "\(fleet.directory)/netpulsed.toml"]
                    + arguments,
                log: "\(fleet.directory)/netpulsed-frozen.log")
        }

        /// An operator's key cannot send data as an agent: the agents' listener refuses its certificate.
        @Test(.timeLimit(.minutes(2)))
        func anOperatorsCertificateCannotSendAsAnAgent() throws {
            let fleet = try Fleet(agents: [])
            try run([Build.cli, "ca", "issue", "--dir", "\(fleet.directory)/ca", "--operator", "mallory"])
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "mallory", config: try fleet.writeAgentConfig("mallory", certificate: "mallory"))
            // The daemon says why in its error frame, and the agent logs it.
            try eventually("the daemon refuses the operator's certificate", timeout: 20) {
                agent.output.contains("this is an operator's certificate, for the HTTP API")
            }
            #expect(try fleet.storedAgents().isEmpty)
        }

        /// The issuing CA's key, which the daemon's host holds to renew agents, cannot make an operator: a certificate
        /// of the operator's usage it signed (by hand: `netpulse ca` refuses to) chains to the fleet's root, and TLS
        /// takes it, but the API refuses it; one the root signed is served.
        @Test(.timeLimit(.minutes(2)))
        func anOperatorCertificateFromTheIssuingCAIsRefused() throws {
            let fleet = try Fleet(agents: [])
            defer { fleet.shutdown() }
            let directory = fleet.directory
            let port = try freePort()
            try fleet.editDaemonConfig { $0 + "\nlisten = \"127.0.0.1:\(port)\"\n" }
            try run([Build.cli, "ca", "issue", "--dir", "\(directory)/ca", "--operator", "alice"])
            try """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = clientAuth, 2.25.277939900980301044039430868934078263260
            """.write(toFile: "\(directory)/eve.ext", atomically: true, encoding: .utf8)
            try run([
                "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                "\(directory)/eve-key.pem", "-subj", "/CN=eve", "-out", "\(directory)/eve.csr",
            ])
            try run([
                "openssl", "x509", "-req", "-in", "\(directory)/eve.csr", "-CA", "\(directory)/enrollment/ca.pem",
                "-CAkey",
                "\(directory)/enrollment/ca-key.pem", "-set_serial", "4242", "-days", "30", "-extfile",
                "\(directory)/eve.ext",
                "-out", "\(directory)/eve-leaf.pem",
            ])
            try
                (String(contentsOfFile: "\(directory)/eve-leaf.pem", encoding: .utf8)
                + String(contentsOfFile: "\(directory)/enrollment/ca.pem", encoding: .utf8)).write(
                    toFile: "\(directory)/eve.pem", atomically: true, encoding: .utf8)
            try fleet.startDaemon()
            try eventually("the API listens") { fleet.daemon!.output.contains("https://127.0.0.1:\(port)") }
            func get(_ name: String) throws -> String {
                try run(
                    [
                        "curl", "-sS", "--cacert", "\(directory)/ca/ca.pem", "--cert", "\(directory)/ca/\(name).pem",
                        "--key",
                        "\(directory)/ca/\(name)-key.pem", "-w", "\\n%{http_code}",
                        "https://127.0.0.1:\(port)/api/v1/rates",
                    ], allowFailure: true)
            }
            try FileManager.default.copyItem(atPath: "\(directory)/eve.pem", toPath: "\(directory)/ca/eve.pem")
            try FileManager.default.copyItem(atPath: "\(directory)/eve-key.pem", toPath: "\(directory)/ca/eve-key.pem")
            let eve = try get("eve")
            #expect(eve.hasSuffix("\n403"), "\(eve)")
            #expect(eve.contains("not issued by the fleet's root CA"), "\(eve)")
            #expect(try get("alice").hasSuffix("\n200"))
        }

        /// A bcrypt hash of `password` at cost 10 from libxcrypt (Python's `crypt`, as `htpasswd -B` makes them).
        static func bcrypt(_ password: String) throws -> String {
            try run([
                "/usr/bin/python3", "-W", "ignore", "-c",
                "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))",
                password,
            ]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
