import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// A host switched off for a while and booted again, as the real agent and daemon see it: the agent runs in a
    /// mount namespace of its own where the kernel's boot id (`/proc/sys/kernel/random/boot_id`) and boot time
    /// (`btime` in `/proc/stat`) are files the test writes, and the "reboot" makes the veth again (its counters start
    /// from zero under a new ifindex) with a new boot id and a boot time of that moment (docs/windows.md, "A new
    /// epoch's counts begin with it").
    @Suite(.serialized) struct RebootTests {
        @Test(.enabled(if: isRoot, "needs root for network and mount namespaces"), .timeLimit(.minutes(3)))
        func aHostBootedAfterALongPausePlacesItsBytesAfterTheBoot() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host)
            try fleet.editDaemonConfig {
                $0 + """

                    [rollups]
                    levels = ["10s", "5m", "1h", "1d"]
                    [aggregation]
                    count = ["physical", "veth"]

                    """
            }
            try fleet.startDaemon()
            let world = fleet.directory + "/boot"
            try FileManager.default.createDirectory(atPath: world, withIntermediateDirectories: true)
            func boot(id: String, at milliseconds: Int64) throws {
                try "\(id)\n".write(toFile: world + "/boot_id", atomically: true, encoding: .utf8)
                try "cpu  1 2 3 4 5 6 7 8 9 10\nbtime \(milliseconds / 1_000)\nprocesses 1\n".write(
                    toFile: world + "/stat", atomically: true, encoding: .utf8)
            }
            let wrapper = [
                "unshare", "--mount", "--propagation", "private", "sh", "-c",
                "mount --bind \(world)/boot_id /proc/sys/kernel/random/boot_id"
                    + " && mount --bind \(world)/stat /proc/stat && exec \"$@\"",
                "sh",
            ]
            let config = try fleet.writeAgentConfig("agent-1", interval: "1s", batch: "2s", include: #"["npv0"]"#)
            let now = { Int64(Date().timeIntervalSince1970 * 1_000) }
            try boot(id: "6f1c39a2-5d7e-4b8a-9c3d-1e2f3a4b5c6d", at: now() - 3_600_000)
            var agent = try fleet.startAgent("agent-1", config: config, wrapper: wrapper)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            try network.sendTraffic(bytes: 4 << 20)
            var oldEpoch = try network.kernelCounters()["npv0"]!
            try eventually("the first boot's traffic is stored", timeout: 30) {
                oldEpoch = try network.kernelCounters()["npv0"]!
                return try fleet.samples("agent-1", "npv0").last?.counters.values == oldEpoch
            }
            // The host goes off: its agent stops (what it had not sent is spooled), and stays off for a while.
            #expect(agent.stop() == 0)
            Thread.sleep(forTimeInterval: 30)
            // It boots: the link is made again (counters from zero), bytes cross it before the agent's first read.
            try network.recreateVeth()
            let bootedAt = now()
            try boot(id: "0b7e4d21-8a3f-4c6e-b1d2-9f8e7d6c5b4a", at: bootedAt)
            try network.sendTraffic(bytes: 3 << 20)
            Thread.sleep(forTimeInterval: 2)
            agent = try fleet.startAgent("agent-1", config: config, wrapper: wrapper)
            try eventually("agent connected again") { agent.output.contains("connected to netpulsed") }
            try network.sendTraffic(bytes: 2 << 20)
            var newEpoch = try network.kernelCounters()["npv0"]!
            try eventually("the second boot's traffic is stored", timeout: 30) {
                newEpoch = try network.kernelCounters()["npv0"]!
                return try fleet.samples("agent-1", "npv0").last?.counters.values == newEpoch
            }
            // What the agent read in its first boot (what it spooled when it stopped is in the store by now).
            let samples = try fleet.samples("agent-1", "npv0").sorted {
                ($0.order, $0.timestamp) < ($1.order, $1.timestamp)
            }
            let firstBoot = samples.filter { $0.epoch.bootID == samples[0].epoch.bootID }
            #expect(firstBoot.count < samples.count, "two boots")
            let first = try #require(firstBoot.first)
            let last = try #require(firstBoot.last)
            let offAt = last.timestamp

            // Totals: the first boot's counter delta from the first sample, and everything the second boot counted.
            let store = ["--store", fleet.storePath, "--config", fleet.directory + "/netpulsed.toml"]
            let rows = try JSONSerialization.jsonObject(
                with: Data(
                    try run(
                        [
                            Build.cli, "traffic", "--by", "hour", "--agent", "agent-1", "--interface", "npv0",
                            "--format", "json",
                        ] + store
                    ).utf8)) as! [[String: Any]]
            let hours = rows[0]["rows"] as! [[String: Any]]
            let total = hours.map { ($0["rx_bytes"] as! NSNumber).uint64Value }.reduce(0, +)
            #expect(total == last.counters.values[0] - first.counters.values[0] + newEpoch[0])
            #expect(last.counters.values[0] >= oldEpoch[0])
            #expect(newEpoch[0] >= 5 << 20)

            // Placement: the 10-second buckets of the pause hold nothing and cover nothing; every byte of the new
            // boot lies at or after its boot time.
            let bootBucket = bootedAt / 1_000 * 1_000 / 10_000 * 10_000
            let buckets = try csvRows(
                try run(
                    [
                        Build.cli, "export", "--level", "10s", "--agent", "agent-1", "--interface", "npv0", "--format",
                        "csv", "--from", RFC3339.text(offAt - 60_000), "--to", RFC3339.text(now() + 10_000),
                    ] + store))
            let pause = buckets.filter {
                let start = Int64($0["start_ms"]!)!
                return start >= offAt + 10_000 && start + 10_000 <= bootBucket
            }
            // (A bucket with nothing in it is no bucket: the pause may have none at all.)
            for bucket in pause {
                #expect(
                    bucket["rx_bytes"] == "0" && bucket["measured_ms"] == "0" && bucket["interpolated_ms"] == "0",
                    "a bucket of the pause: \(bucket)")
            }
            let afterBoot = buckets.filter { Int64($0["start_ms"]!)! >= bootBucket }
            #expect(afterBoot.map { UInt64($0["rx_bytes"]!)! }.reduce(0, +) == newEpoch[0])
            #expect(fleet.daemon!.stop() == 0)
            #expect(agent.stop() == 0)
        }

        /// A CSV text as rows keyed by its header (Python's csv module, not our own writer).
        func csvRows(_ text: String) throws -> [[String: String]] {
            try AnalyticsTests().csvRows(text)
        }
    }
}
