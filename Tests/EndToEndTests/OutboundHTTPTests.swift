import Foundation
import Testing

extension EndToEnd {
    /// The daemon's outgoing HTTP (alert webhooks, remote write) against receivers and a forward proxy that the tests
    /// run on loopback (`Tests/Tools`): posts to one receiver share one kept-alive connection, a redirect is neither
    /// followed nor retried and the log says so, and the proxy that `HTTP_PROXY` names carries what `NO_PROXY` does
    /// not list.
    @Suite(.serialized) struct OutboundHTTPTests {
        /// A script of Tests/Tools listening on 127.0.0.1, its port in `NAME.port` and its log in `NAME.jsonl` in the
        /// fleet's directory.
        final class Script {
            let process: Daemonized
            let log: String
            let port: Int

            init(_ script: String, name: String, in fleet: Fleet, arguments: [String] = []) throws {
                log = "\(fleet.directory)/\(name).jsonl"
                let portFile = "\(fleet.directory)/\(name).port"
                process = try Daemonized(
                    ["/usr/bin/python3", Build.root + "/Tests/Tools/" + script, "--port-file", portFile, "--log", log]
                        + arguments, log: "\(fleet.directory)/\(name).out")
                try eventually("\(name) listens") { FileManager.default.fileExists(atPath: portFile) }
                port = Int(try String(contentsOfFile: portFile, encoding: .utf8))!
            }

            /// The log's lines so far.
            var lines: [String] {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            }

            /// A receiver's log: one JSON object per request, in order.
            func requests() throws -> [[String: Any]] {
                try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            }

            deinit { process.killHard() }
        }

        /// A webhook receiver (its log's `answered` is the status it gave); a 3xx says `Location: location`.
        static func webhookReceiver(
            _ name: String, in fleet: Fleet, statuses: [Int] = [], location: String? = nil
        ) throws -> Script {
            try Script(
                "webhook_receiver.py", name: name, in: fleet,
                arguments: ["--statuses", statuses.map(String.init).joined(separator: ",")]
                    + (location.map { ["--location", $0] } ?? []))
        }

        /// A remote-write receiver (its log's `status` is the status it gave); a 3xx says `Location: location`.
        static func remoteWriteReceiver(
            _ name: String, in fleet: Fleet, statuses: [Int] = [], location: String? = nil
        ) throws -> Script {
            try Script(
                "remote_write_receiver.py", name: name, in: fleet,
                arguments: ["--statuses", statuses.map(String.init).joined(separator: ",")]
                    + (location.map { ["--location", $0] } ?? []))
        }

        /// Rules that fire as soon as `lo` carries the agent's traffic, each its own group, and a webhook.
        static func alerting(webhook: String, rules: [String] = ["busy"]) -> String {
            """

            [rollups]
            levels = ["10s", "1m", "5m", "1h", "1d"]
            [alerts]
            evaluation_interval = "1s"
            [alerts.notify]
            webhook = "\(webhook)"
            group_by = ["alertname"]
            group_wait = "0s"
            group_interval = "1s"

            """
                + rules.map {
                    """
                    [alert.\($0)]
                    expr = "rate > 1bit/s"
                    window = "10s"
                    scope = "interface"
                    interfaces = ["lo"]

                    """
                }.joined()
        }

        static func remoteWrite(_ url: String) -> String {
            "[remote_write]\nurl = \"\(url)\"\ninterval = \"1s\"\ndelay = \"2s\"\nbackfill = \"1m\"\n"
        }

        static func startAgent(_ fleet: Fleet) throws -> Daemonized {
            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "500ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            return agent
        }

        /// Three notifications and a retry to one receiver: every request came on the same connection.
        @Test(.timeLimit(.minutes(2)))
        func postsToOneReceiverShareOneConnection() throws {
            let fleet = try Fleet()
            let receiver = try Self.webhookReceiver("webhook", in: fleet, statuses: [500])
            try fleet.editDaemonConfig {
                $0
                    + Self.alerting(
                        webhook: "http://127.0.0.1:\(receiver.port)/hook", rules: ["busy1", "busy2", "busy3"])
            }
            try fleet.startDaemon()
            let agent = try Self.startAgent(fleet)
            try eventually("three notifications delivered, the first after a 500", timeout: 60) {
                try receiver.requests().filter { $0["answered"] as? Int == 200 }.count >= 3
            }
            let requests = try receiver.requests()
            #expect(requests.first?["answered"] as? Int == 500)
            let groups = Set(requests.compactMap { ($0["body"] as? [String: Any])?["groupKey"] as? String })
            #expect(groups.count == 3, "\(groups)")
            let connections = Set(requests.compactMap { $0["client_port"] as? Int })
            #expect(connections.count == 1, "\(requests.count) requests came on \(connections.count) connections")
            #expect(agent.stop() == 0)
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
        }

        /// A webhook that answers 307 and a remote-write receiver that answers 308, each pointing at another
        /// receiver: nothing reaches the receivers pointed at, the notification is dropped and the samples refused
        /// (neither is sent again), and the log names the redirect and the setting to change.
        @Test(.timeLimit(.minutes(2)))
        func redirectsAreNotFollowedAndTheLogSaysSo() throws {
            let fleet = try Fleet()
            let target = try Self.webhookReceiver("target", in: fleet)
            let targetURL = "http://127.0.0.1:\(target.port)/hook"
            let redirector = try Self.webhookReceiver("redirector", in: fleet, statuses: [307], location: targetURL)
            let writeTarget = try Self.remoteWriteReceiver("write-target", in: fleet)
            let writeTargetURL = "http://127.0.0.1:\(writeTarget.port)/api/v1/write"
            let writeRedirector = try Self.remoteWriteReceiver(
                "write-redirector", in: fleet, statuses: [308], location: writeTargetURL)
            try fleet.editDaemonConfig {
                $0 + Self.alerting(webhook: "http://127.0.0.1:\(redirector.port)/hook")
                    + Self.remoteWrite("http://127.0.0.1:\(writeRedirector.port)/api/v1/write")
            }
            try fleet.startDaemon()
            let agent = try Self.startAgent(fleet)
            func logged(_ parts: [String]) -> Bool {
                fleet.daemon!.output.split(separator: "\n").contains { line in parts.allSatisfy { line.contains($0) } }
            }
            try eventually("the webhook's redirect is logged", timeout: 60) {
                logged([
                    "notification to webhook dropped, not retried",
                    "answered 307: a redirect to \(targetURL), which netpulsed does not follow: set [alerts.notify] webhook to the URL meant",
                ])
            }
            try eventually("remote write's redirect is logged", timeout: 60) {
                logged([
                    "remote write: the receiver refused", "(HTTP 308): 308 a redirect to \(writeTargetURL)",
                    "which netpulsed does not follow: set [remote_write] url to the URL meant",
                ])
            }
            // The next passes go on (to the redirector, which now answers 200); the refused request is not sent again.
            try eventually("remote write goes on", timeout: 30) {
                try writeRedirector.requests().filter { $0["status"] as? Int == 200 }.count >= 2
            }
            let written = try writeRedirector.requests()
            #expect(written.first?["status"] as? Int == 308)
            #expect(written.allSatisfy { $0["error"] == nil }, "every request a valid WriteRequest")
            #expect(try redirector.requests().count == 1, "a redirected notification is not retried")
            #expect(try target.requests().isEmpty, "the webhook's redirect was followed")
            #expect(try writeTarget.requests().isEmpty, "remote write's redirect was followed")
            #expect(agent.stop() == 0)
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
        }

        /// `HTTP_PROXY` names a forward proxy on loopback and `NO_PROXY` lists 127.0.0.0/8: the webhook, addressed
        /// as `localhost`, is reached through the proxy's CONNECT tunnel, and remote write to 127.0.0.1 directly. A
        /// proxy variable that the daemon cannot use stops its start, naming the variable.
        @Test(.timeLimit(.minutes(2)))
        func theEnvironmentsProxyCarriesWhatNoProxyDoesNotList() throws {
            let fleet = try Fleet()
            let proxy = try Script("forward_proxy.py", name: "proxy", in: fleet)
            let webhook = try Self.webhookReceiver("webhook", in: fleet)
            let writer = try Self.remoteWriteReceiver("remote-write", in: fleet)
            try fleet.editDaemonConfig {
                $0 + Self.alerting(webhook: "http://localhost:\(webhook.port)/hook")
                    + Self.remoteWrite("http://127.0.0.1:\(writer.port)/api/v1/write")
            }
            // The lowercase spellings, which win, set empty (not set) whatever the tests' own environment holds.
            let unset = ["http_proxy": "", "no_proxy": ""]

            try fleet.startDaemon(
                environment: unset.merging(["HTTP_PROXY": "socks5://127.0.0.1:1"]) { $1 }, waitUntilListening: false)
            try eventually("netpulsed refuses the proxy and exits", timeout: 20) { !fleet.daemon!.isRunning }
            #expect(fleet.daemon!.stop() == 1)
            #expect(
                fleet.daemon!.output.contains(
                    #"remote write cannot start: HTTP_PROXY is "socks5://127.0.0.1:1": netpulsed goes through HTTP proxies only; give it as http://HOST:PORT, not socks5://"#
                ), "\(fleet.daemon!.output)")

            try fleet.startDaemon(
                environment: unset.merging(["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)", "NO_PROXY": "127.0.0.0/8"])
                {
                    $1
                })
            let agent = try Self.startAgent(fleet)
            try eventually("the notification arrives through the proxy", timeout: 60) {
                try webhook.requests().contains { $0["answered"] as? Int == 200 }
            }
            try eventually("remote write arrives", timeout: 30) {
                try writer.requests().contains { $0["status"] as? Int == 200 }
            }
            #expect(try webhook.requests().allSatisfy { $0["path"] as? String == "/hook" })
            // Only the webhook's connection went through the proxy, as a tunnel.
            #expect(!proxy.lines.isEmpty)
            #expect(proxy.lines.allSatisfy { $0 == "CONNECT localhost:\(webhook.port) HTTP/1.1" }, "\(proxy.lines)")
            let log = fleet.daemon!.output
            #expect(
                log.contains(
                    "alert notifications: localhost:\(webhook.port) is reached through the proxy 127.0.0.1:\(proxy.port) (HTTP_PROXY)"
                ), "\(log)")
            #expect(
                log.contains(
                    "remote write: 127.0.0.1:\(writer.port) is reached directly, not through HTTP_PROXY: NO_PROXY lists 127.0.0.0/8"
                ), "\(log)")
            #expect(agent.stop() == 0)
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
        }
    }
}
