import Foundation
import PulseAnalytics
import PulseCore
import Testing

extension EndToEnd {
    /// Alerts from real traffic, through the real agent, daemon, CLI and a webhook receiver the test runs
    /// (`Tests/Tools/webhook_receiver.py`, which checks each body against Alertmanager's version-4 payload on its
    /// own): pending, firing and resolved, charts and event files, a restart mid-alert, retries, silences.
    @Suite(.serialized) struct AlertTests {
        static let receiverScript = Build.root + "/Tests/Tools/webhook_receiver.py"
        static let checker = Build.root + "/Tests/Tools/check_outputs.py"
        static let browser = Build.root + "/Tests/Tools/browser_check.py"

        /// A webhook receiver on 127.0.0.1 (in `netns` when given) answering with `statuses` first, then 200.
        final class Receiver {
            let process: Daemonized
            let log: String
            let port: Int

            init(directory: String, netns: String?, statuses: [Int]) throws {
                log = directory + "/webhook.jsonl"
                let portFile = directory + "/webhook.port"
                process = try Daemonized(
                    [
                        "/usr/bin/python3", AlertTests.receiverScript, "--port-file", portFile, "--log", log,
                        "--statuses", statuses.map(String.init).joined(separator: ","),
                    ], log: directory + "/webhook.out", netns: netns)
                try eventually("the webhook receiver listens") { FileManager.default.fileExists(atPath: portFile) }
                port = Int(try String(contentsOfFile: portFile, encoding: .utf8))!
            }

            /// Every request received so far, in order.
            func requests() throws -> [[String: Any]] {
                guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
                return try text.split(separator: "\n").map {
                    try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
                }
            }

            deinit { process.killHard() }
        }

        /// `netpulse alerts --format json`.
        static func listing(_ fleet: Fleet) throws -> [String: Any] {
            let text = try run([
                Build.cli, "alerts", "--format", "json", "--since", "1h", "--config",
                fleet.directory + "/netpulsed.toml",
            ])
            return try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        }

        static func statuses(_ listing: [String: Any], rule: String) -> [String] {
            (listing["alerts"] as! [[String: Any]]).filter { $0["rule"] as? String == rule }.map {
                $0["status"] as! String
            }
        }

        static func events(_ listing: [String: Any], rule: String) -> [[String: Any]] {
            (listing["events"] as! [[String: Any]]).filter { $0["rule"] as? String == rule }.reversed()
        }

        /// 40 Mbit/s between two namespaces crosses a 20 Mbit/s rule: pending, firing (through a daemon restart,
        /// without firing again), resolved once the traffic stops and the rate falls below the clear threshold.
        /// Each firing and resolving leaves a chart that shows the thresholds and the firing span and the event as
        /// JSON; the webhook gets Alertmanager's payload with the chart, after a 500 it is retried; idle
        /// interfaces named `a<b&c` and `p"q>` fire a second rule whose label holds quotes and a newline, and every
        /// output keeps them intact.
        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(4)))
        func trafficCrossingAThresholdFiresAndResolvesWithChartsAndWebhook() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host)
            let receiver = try Receiver(directory: fleet.directory, netns: network.host, statuses: [500])
            try "s3cret-token\n".write(toFile: fleet.directory + "/token", atomically: true, encoding: .utf8)
            try fleet.editDaemonConfig {
                $0 + #"""

                    [rollups]
                    levels = ["10s", "5m", "1h", "1d"]
                    [aggregation]
                    count = ["physical", "veth", "unknown"]
                    [alerts]
                    evaluation_interval = "1s"
                    [alerts.notify]
                    webhook = "http://127.0.0.1:\#(receiver.port)/hook"
                    bearer_token_file = "\#(fleet.directory)/token"
                    allow_insecure_credentials = true
                    group_by = ["alertname"]
                    group_wait = "1s"
                    group_interval = "2s"
                    [alert.hot]
                    expr = "rate_in > 20Mbit/s"
                    clear = "5Mbit/s"
                    window = "10s"
                    for = "4s"
                    scope = "interface"
                    interfaces = ["npv0"]
                    severity = "warning"
                    [alert.hot.annotations]
                    summary = "{{ $labels.interface }} receives {{ $value }} (over {{ $threshold }})"
                    [alert.quiet]
                    expr = "rate_in < 1kbit/s"
                    window = "10s"
                    scope = "interface"
                    interfaces = ["a<b&c", "p\"q>"]
                    [alert.quiet.labels]
                    note = "say \"hi\"\nbye"
                    [alert.quiet.annotations]
                    summary = "{{ $labels.interface }} is quiet: {{ $value }}"

                    """#
            }
            try fleet.startDaemon()
            // The token goes to a plain http:// receiver, as allowed: said at start.
            #expect(
                fleet.daemon!.output.contains(
                    "[alerts.notify] sends the token of bearer_token_file in clear text to http://127.0.0.1:\(receiver.port)/hook"
                ), "\(fleet.daemon!.output)")
            let config = try fleet.writeAgentConfig("agent-1", interval: "500ms", batch: "1s", exclude: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            try eventually("the idle interfaces fire at once", timeout: 30) {
                Self.statuses(try Self.listing(fleet), rule: "quiet") == ["firing", "firing"]
            }
            #expect(Self.statuses(try Self.listing(fleet), rule: "hot").isEmpty, "idle npv0 does not breach")

            try network.limitRate(megabits: 40)
            var sawPending = false
            var restarted = false
            // About 30 seconds of traffic: 150 MiB at 5 MB/s.
            try network.sendTraffic(bytes: 150 << 20) {
                try eventually("hot goes pending, then fires", timeout: 25) {
                    let status = Self.statuses(try Self.listing(fleet), rule: "hot")
                    if status == ["pending"] { sawPending = true }
                    return status == ["firing"]
                }
                // A restart mid-alert: the firing alert is still firing afterwards and does not fire again.
                #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
                let restartedAt = RFC3339.text(Int64(Date().timeIntervalSince1970 * 1_000))
                try fleet.startDaemon()
                restarted = true
                // Wait for the restarted daemon's first evaluation of the alert (RFC 3339 UTC texts sort as times).
                try eventually("an evaluation after the restart", timeout: 30) {
                    let alerts = try Self.listing(fleet)["alerts"] as! [[String: Any]]
                    return alerts.contains {
                        $0["rule"] as? String == "hot" && ($0["evaluatedAt"] as? String ?? "") > restartedAt
                    }
                }
                #expect(Self.statuses(try Self.listing(fleet), rule: "hot") == ["firing"])
            }
            #expect(sawPending && restarted)
            network.removeRateLimit()
            try eventually("hot resolves once the traffic has stopped", timeout: 40) {
                Self.events(try Self.listing(fleet), rule: "hot").last?["status"] as? String == "resolved"
            }

            // History: pending, firing, resolved, once each.
            let listing = try Self.listing(fleet)
            let hot = Self.events(listing, rule: "hot")
            #expect(hot.map { $0["status"] as! String } == ["pending", "firing", "resolved"], "\(hot)")
            let firing = hot[1]
            let resolved = hot[2]
            #expect((firing["value"] as! Double) > 20e6 && (resolved["value"] as! Double) < 5e6)
            #expect((firing["labels"] as! [String: String])["interface"] == "npv0")
            #expect((firing["annotations"] as! [String: String])["summary"]!.hasPrefix("npv0 receives "))
            #expect(Self.statuses(listing, rule: "hot").isEmpty)

            // The files: a chart and an event JSON for firing and for resolving, none for pending.
            let alerts = fleet.directory + "/netpulsed/alerts"
            let files = try FileManager.default.contentsOfDirectory(atPath: alerts).sorted()
            let hotFiles = files.filter { $0.hasPrefix("hot-") }
            #expect(hotFiles.count == 4, "\(hotFiles)")
            for event in [firing, resolved] {
                let chart = event["chart"] as! String
                #expect(FileManager.default.fileExists(atPath: chart))
                try run(["python3", Self.checker, "alert-chart", chart, "Fire threshold 20.0 Mbit/s"])
                let json = chart.replacingOccurrences(of: ".svg", with: ".json")
                let saved =
                    try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
                    as! [String: Any]
                #expect(saved["status"] as? String == event["status"] as? String)
                #expect(saved["fingerprint"] as? String == event["fingerprint"] as? String)
                #expect(saved["chart"] as? String == chart)
            }

            try run(["python3", Self.browser, firing["chart"] as! String, resolved["chart"] as! String])

            // The quiet rule's alerts carry the odd names and the label with quotes and a newline intact.
            let quiet = Self.events(listing, rule: "quiet").filter { $0["status"] as? String == "firing" }
            #expect(
                Set(quiet.map { ($0["labels"] as! [String: String])["interface"]! }) == Set(TestNetwork.oddNames))
            for event in quiet {
                #expect((event["labels"] as! [String: String])["note"] == "say \"hi\"\nbye")
                let chart = event["chart"] as! String
                try run(["python3", Self.checker, "alert-chart", chart, "Fire threshold 1.00 kbit/s"])
                let svg = try String(contentsOfFile: chart, encoding: .utf8)
                #expect(!svg.contains("a<b&c") && !svg.contains("p\"q>"))
                #expect(svg.contains("a&lt;b&amp;c") || svg.contains("p&quot;q&gt;") || svg.contains("p\"q&gt;"))
            }

            // The webhook: the first notification was refused (500) and delivered again; firing and resolved
            // notifications for hot, with the chart; the token; every body an Alertmanager payload.
            try eventually("the resolution is delivered", timeout: 20) {
                try receiver.requests().contains {
                    ($0["body"] as? [String: Any])?["status"] as? String == "resolved"
                }
            }
            let requests = try receiver.requests()
            for request in requests {
                #expect((request["problems"] as! [String]).isEmpty, "\(request["problems"]!)")
                #expect(request["authorization"] as? String == "Bearer s3cret-token")
                #expect(request["content_type"] as? String == "application/json")
                #expect(request["path"] as? String == "/hook")
            }
            #expect(requests.first?["answered"] as? Int == 500)
            let bodies = requests.map { $0["body"] as! [String: Any] }
            #expect(
                bodies.dropFirst().contains { $0["groupKey"] as? String == bodies.first?["groupKey"] as? String },
                "the refused notification is sent again")
            let hotBodies = bodies.filter { ($0["groupLabels"] as? [String: String])?["alertname"] == "hot" }
            #expect(Set(hotBodies.map { $0["status"] as! String }) == ["firing", "resolved"], "\(hotBodies)")
            #expect(
                hotBodies.filter { $0["status"] as? String == "firing" }.count == 1,
                "the restart sent no second firing notification")
            for body in hotBodies {
                let alert = (body["alerts"] as! [[String: Any]])[0]
                let netpulse = alert["netpulse"] as! [String: Any]
                #expect(
                    (netpulse["chartSVG"] as! String).hasPrefix("<?xml")
                        || (netpulse["chartSVG"] as! String).hasPrefix("<svg"))
                #expect(FileManager.default.fileExists(atPath: netpulse["chart"] as! String))
                #expect(alert["fingerprint"] as? String == firing["fingerprint"] as? String)
            }
            let quietBody = bodies.first { ($0["groupLabels"] as? [String: String])?["alertname"] == "quiet" }!
            let quietAlerts = quietBody["alerts"] as! [[String: Any]]
            #expect(quietAlerts.count == 2, "one notification for the group, not one per alert")
            #expect(
                Set(quietAlerts.map { ($0["labels"] as! [String: String])["interface"]! }) == Set(TestNetwork.oddNames))
            #expect((quietBody["commonLabels"] as! [String: String])["note"] == "say \"hi\"\nbye")

            // The journal fields, in the (restarted) daemon's log.
            let log = fleet.daemon!.output
            #expect(
                log.contains("alert=hot ") && log.contains("alert_status=resolved")
                    && log.contains("alert hot resolved on agent-1/npv0"), "\(log)")
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
            #expect(agent.stop() == 0)
        }

        /// On loopback: a silence made with `netpulse alerts silence` keeps a firing alert out of notifications
        /// (the listing says it is silenced); `expire` ends it and the notification goes out; a receiver that
        /// answers 400 is not asked again. Mistakes on the command line are one line each.
        @Test(.timeLimit(.minutes(2)))
        func silencesHoldNotificationsAndARefusalIsNotRetried() throws {
            let fleet = try Fleet()
            let receiver = try Receiver(directory: fleet.directory, netns: nil, statuses: [400])
            try fleet.editDaemonConfig {
                $0 + """

                    [rollups]
                    levels = ["10s", "5m", "1h", "1d"]
                    [alerts]
                    evaluation_interval = "1s"
                    [alerts.notify]
                    webhook = "http://127.0.0.1:\(receiver.port)/"
                    group_wait = "0s"
                    group_interval = "1s"
                    [alert.busy]
                    expr = "rate > 1bit/s"
                    window = "10s"
                    for = "3s"
                    scope = "interface"
                    interfaces = ["lo"]

                    """
            }
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("the store is there") { FileManager.default.fileExists(atPath: fleet.storePath) }
            let config = ["--config", fleet.directory + "/netpulsed.toml"]
            let id = try run(
                [
                    Build.cli, "alerts", "silence", "--match", "alertname=bu*", "--match", "host=agent-1", "--for",
                    "1h",
                    "--comment", "maintenance \"window\"",
                ] + config
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(id.count == 36, "a silence id: \(id)")

            try eventually("busy fires") { Self.statuses(try Self.listing(fleet), rule: "busy") == ["firing"] }
            let listing = try Self.listing(fleet)
            let alert = (listing["alerts"] as! [[String: Any]])[0]
            #expect(alert["silencedBy"] as? [String] == [id])
            #expect((listing["silences"] as! [[String: Any]]).first?["comment"] as? String == "maintenance \"window\"")
            let table = try run([Build.cli, "alerts"] + config)
            #expect(table.contains("firing") && table.contains("busy") && table.contains("yes"), "\(table)")
            Thread.sleep(forTimeInterval: 3)
            #expect(try receiver.requests().isEmpty, "a silenced alert is not notified")

            try run([Build.cli, "alerts", "expire", id] + config)
            try eventually("notified once the silence ends") { try receiver.requests().count == 1 }
            #expect(try receiver.requests()[0]["answered"] as? Int == 400)
            Thread.sleep(forTimeInterval: 4)
            #expect(try receiver.requests().count == 1, "a 400 is not retried")
            #expect(
                fleet.daemon!.output.split(separator: "\n").contains {
                    $0.contains("notification to webhook dropped, not retried") && $0.contains("400")
                }, "\(fleet.daemon!.output)")

            for (arguments, message) in [
                (["alerts", "silence", "--for", "1h"], "--match is missing: name at least one label"),
                (["alerts", "silence", "--match", "host", "--for", "1h"], "--match host: use name=glob"),
                (["alerts", "silence", "--match", "host=a", "--for", "soon"], "--for soon: not a duration"),
                (["alerts", "expire", "nope"], "no silence nope"),
                (["alerts", "--format", "csv"], "--format csv: alerts writes table or json"),
            ] {
                let process = try Daemonized([Build.cli] + arguments + config, log: fleet.directory + "/cli.log")
                process.process.waitUntilExit()
                #expect(process.process.terminationStatus != 0, "\(arguments)")
                #expect(process.output.contains(message), "\(arguments): \(process.output)")
                try? FileManager.default.removeItem(atPath: fleet.directory + "/cli.log")
            }
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
            #expect(agent.stop() == 0)
        }
    }
}
