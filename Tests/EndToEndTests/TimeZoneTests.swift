import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// The zone of calendar windows and bills: unset, the store's recorded one, else the system's, which the daemon
    /// records; set, it wins and is recorded; `netpulse` reads the same, and its tables say which.
    @Suite struct TimeZoneTests {
        /// This machine's zone as `netpulsed` names it: what /etc/localtime links to, UTC by any of its names.
        static var systemZone: String {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/localtime")) ?? ""
            let name = target.components(separatedBy: "zoneinfo/").last ?? "UTC"
            return ["Etc/UTC", "UTC", "Etc/UCT", "UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu", ""]
                .contains(name) ? "UTC" : name
        }

        @Test(.timeLimit(.minutes(2)))
        func theDaemonRecordsItsZoneAndKeepsItWhenTheSettingGoes() throws {
            let fleet = try Fleet()
            defer { fleet.shutdown() }
            let config = "\(fleet.directory)/netpulsed.toml"
            func bill() throws -> String { try run([Build.cli, "bill", "--config", config, "--scope", "interface"]) }
            func restart() throws {
                if let daemon = fleet.daemon { #expect(daemon.stop() == 0, "netpulsed:\n\(daemon.output)") }
                try fleet.startDaemon()
            }

            // A new store: the system's zone, recorded.
            try fleet.startDaemon()
            try fleet.startAgent("agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("the agent's loopback is stored") { try fleet.samples("agent-1", "lo").count >= 2 }
            #expect(
                fleet.daemon!.output.contains("time zone \(Self.systemZone): the system's (/etc/localtime)"),
                "\(fleet.daemon!.output)")
            #expect(try bill().hasPrefix("95th-percentile bills (periods and dates in \(Self.systemZone))\n"))

            // Set in the file: it wins, and the daemon says what the bills were cut in before.
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "[daemon]\n", with: "[daemon]\ntime_zone = \"Pacific/Chatham\"\n")
            }
            try restart()
            #expect(
                fleet.daemon!.output.contains(
                    "time zone Pacific/Chatham: [daemon] time_zone, where the store's bills were cut in \(Self.systemZone) until now"
                ), "\(fleet.daemon!.output)")
            #expect(try bill().hasPrefix("95th-percentile bills (periods and dates in Pacific/Chatham)\n"))

            // The setting removed: the store's zone stays, for the daemon and for `netpulse`.
            try fleet.editDaemonConfig { $0.replacingOccurrences(of: "time_zone = \"Pacific/Chatham\"\n", with: "") }
            try restart()
            #expect(
                fleet.daemon!.output.contains("time zone Pacific/Chatham: recorded in the store"),
                "\(fleet.daemon!.output)")
            #expect(try bill().hasPrefix("95th-percentile bills (periods and dates in Pacific/Chatham)\n"))
            let top = try run([Build.cli, "top", "--config", config, "--last", "1h"])
            #expect(
                top.hasPrefix("top 10 interfaces of the fleet by bytes, ") && top.contains("(Pacific/Chatham)\n"),
                "\(top)")
        }
    }
}
