import Foundation
import Testing

extension EndToEnd {
    /// The live dashboards in a real browser: Debian's chromium, driven by Selenium (`Tests/Tools/live_dashboard_check.py`)
    /// over TLS with basic auth, against a daemon fed by a real agent whose host has interfaces with hostile names and
    /// real traffic (ping across a veth pair).
    @Suite(.serialized) struct LiveDashboardTests {
        static let script = Build.root + "/Tests/Tools/live_dashboard_check.py"
        /// Sends a 1,200-byte UDP datagram to port 9 (discard) of `argv[1]` every `argv[2]` seconds, for ever.
        static let sender = """
            import socket, sys, time
            out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            while True:
                out.sendto(b"x" * 1200, (sys.argv[1], 9))
                time.sleep(float(sys.argv[2]))
            """

        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(6)))
        func aPersonAtADeskPicksBrushesHoversWatchesAndExports() throws {
            let network = try TestNetwork()
            // A third hostile name beside TestNetwork's two: a spreadsheet formula.
            try run(["ip", "-n", network.host, "link", "add", "=1+1", "type", "veth", "peer", "name", "np-odd-peer"])
            for name in ["=1+1", "np-odd-peer"] { try run(["ip", "-n", network.host, "link", "set", name, "up"]) }
            let fleet = try Fleet(netns: network.host, agents: ["web-1"])
            let password = "correct horse battery staple"
            try "# operators\nbob:\(try HTTPAPITests.bcrypt(password))\n".write(
                toFile: "\(fleet.directory)/users", atomically: true, encoding: .utf8)
            let port = try freePort()
            try fleet.editDaemonConfig {
                $0 + "\nlisten = \"127.0.0.1:\(port)\"\nusers_file = \"\(fleet.directory)/users\"\n"
                    + "[aggregation]\ncount = [\"veth\", \"virtual\"]\n"
            }
            try fleet.startDaemon()
            try fleet.startAgent(
                "web-1", config: try fleet.writeAgentConfig("web-1", interval: "500ms", batch: "1s"))
            // Traffic both ways on the veth the agent counts (UDP datagrams from each end to the other, about
            // 0.5 and 0.25 Mbit/s), so the charts have values to read.
            let senders = try [
                (network.host, network.peerAddress, "0.02"), (network.peer, network.hostAddress, "0.04"),
            ].map { namespace, address, pause in
                try Daemonized(
                    [
                        "/usr/bin/python3", "-c", Self.sender, address, pause,
                    ], log: "\(fleet.directory)/traffic-\(namespace).log", netns: namespace)
            }
            defer { for sender in senders { _ = sender.stop() } }
            // Two minute buckets with traffic: the older one is complete, so the export check has a settled value.
            nonisolated(unsafe) var exported = ""
            defer { if exported.isEmpty == false { print("last export:\n\(exported.prefix(4_000))") } }
            try eventually("two minutes of traffic are stored", timeout: 200) {
                let json = try run([
                    Build.cli, "export", "--config", "\(fleet.directory)/netpulsed.toml", "--level", "1m", "--scope",
                    "host", "--agent", "web-1", "--last", "10m", "--format", "json",
                ])
                exported = json
                let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
                return rows.filter { (($0["rx_bytes"] as? NSNumber)?.int64Value ?? 0) > 0 }.count >= 2
            }

            let downloads = "\(fleet.directory)/downloads"
            try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
            let environment = [
                "NP_URL=https://127.0.0.1:\(port)", "NP_USER=bob", "NP_PASSWORD=\(password)",
                "NP_CA=\(fleet.directory)/ca/ca.pem", "NP_CLI=\(Build.cli)",
                "NP_CONFIG=\(fleet.directory)/netpulsed.toml", "NP_AGENT=web-1",
                "NP_ODD=\((TestNetwork.oddNames + ["=1+1"]).joined(separator: "\n"))", "NP_DOWNLOADS=\(downloads)",
                "HOME=\(fleet.directory)",
            ]
            // The browser runs in the daemon's namespace, where its listener is.
            let result = try runCapturing(
                ["/usr/sbin/ip", "netns", "exec", network.host, "/usr/bin/env"] + environment + [
                    "/usr/bin/python3", Self.script,
                ])
            #expect(
                result.status == 0,
                "the browser check failed:\n\(result.output)\(result.errors)\ndaemon log:\n\(fleet.daemon?.output.suffix(3_000) ?? "")"
            )
            print(result.output)
        }
    }
}
