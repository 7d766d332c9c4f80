import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// Times no bucket can hold, sent to the real daemon: by a hostile agent, and by an honest host whose clock read
    /// 1970 (`docs/windows.md`, "Time that cannot be placed").
    @Suite(.serialized) struct HostileTimeTests {
        /// The batch of the crash loop (one interface sampled only at the first tick of a batch spanning [0, 2⁶²), then
        /// an ordinary batch): before, the second trapped in counting, both were already journaled and acknowledged,
        /// and every start applied them and trapped again. Now the first is refused by name, a batch spanning [1970,
        /// 9999] is kept as unplaced counts, and the daemon, killed and started again, stays up and stores what
        /// follows.
        @Test(.timeLimit(.minutes(2)))
        func theBatchOfTheCrashLoopIsRefusedAndTheDaemonStaysUp() async throws {
            let fleet = try Fleet(agents: ["prober"])
            try fleet.startDaemon()
            let boot = BootID(high: 7, low: 7)
            let descriptors = (1...2).map {
                InterfaceDescriptor(
                    id: UInt32($0), name: InterfaceName("eth\($0)"),
                    epoch: CounterEpoch(bootID: boot, ifindex: UInt32($0), width: .bits64))
            }
            func batch(_ sequence: UInt64, _ timestamps: [Int64], rx: UInt64) -> [UInt8] {
                var counters = CounterValues()
                counters[.rxBytes] = rx
                let all = Array(repeating: counters.values, count: timestamps.count).flatMap { $0 }
                return WireCodec.encode(
                    .batch(
                        WireBatch(
                            stream: 42, sequence: sequence, order: sequence, timestamps: timestamps,
                            sections: [
                                BatchSection(descriptorID: 1, ticks: [0], values: counters.values),
                                BatchSection(
                                    descriptorID: 2, ticks: Array(timestamps.indices), values: all),
                            ])))
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let outcome = try await RawClient.exchange(
                port: fleet.port, ca: fleet.directory + "/ca/ca.pem", certificate: fleet.directory + "/ca/prober.pem",
                key: fleet.directory + "/ca/prober-key.pem",
                send: [
                    WireCodec.encode(.hello(Hello(agentID: "prober", hostname: "prober", agentVersion: "0"))),
                    WireCodec.encode(.labels(Labels([]))),
                    WireCodec.encode(.describe(Describe(stream: 42, interfaces: descriptors))),
                    batch(1, [0, (1 << 62) - 1], rx: 1_000),
                    batch(2, [0, BatchRules.latestTimestamp], rx: 2_000),
                    batch(3, [now - 2_000, now - 1_000], rx: 9_000),
                ], timeout: .seconds(3))
            let rejected = outcome.messages.compactMap { if case .reject(let reject) = $0 { reject } else { nil } }
            let acknowledged = outcome.messages.compactMap { if case .ack(let ack) = $0 { ack.sequence } else { nil } }
            #expect(rejected.map(\.sequence) == [1] && rejected.first?.code == .invalidBatch, "\(outcome.messages)")
            #expect(acknowledged.sorted() == [2, 3], "\(outcome.messages)")

            // Killed and started again: what it acknowledged is applied from its journal, and it stays up.
            fleet.daemon!.killHard()
            try fleet.startDaemon()
            try eventually("batch 3 is applied", timeout: 20) { try fleet.samples("prober", "eth2").count >= 2 }
            try await Task.sleep(for: .seconds(2))
            #expect(fleet.daemon!.isRunning, "netpulsed:\n\(fleet.daemon!.output.suffix(2_000))")
            let traffic = try run([
                Build.cli, "traffic", "--store", fleet.storePath, "--interface", "eth2", "--format", "json",
            ])
            let rows = try JSONSerialization.jsonObject(with: Data(traffic.utf8)) as? [[String: Any]]
            let unplaced = rows?.first?["unplaced"] as? [String: Any]
            // eth2's step from 1970 to 9999 (nothing counted), and from there to the ordinary batch: 7,000 bytes
            // counted, in no bucket.
            #expect((unplaced?["rx_bytes"] as? Int) == 7_000 && (unplaced?["steps"] as? Int) == 2, "\(traffic)")
            #expect(fleet.daemon!.stop() == 0)
        }

        /// A host without a real-time clock: its agent starts with a wall clock reading 1970-01-02 while the daemon
        /// cannot be reached, and spools; then NTP sets the clock (the same agent process, its clock stepped 56 years
        /// ahead) and the daemon can be reached: the agent sends its live batches and replays the 1970 spool behind
        /// them. The 1970 counts are unplaced (a row of their own in `netpulse traffic`), no bucket before today
        /// exists, and the daemon answers at once. Before, the step from 1970 to now was spread over 56 years: about
        /// 24 million bill changes, then out of memory or a watchdog kill.
        ///
        /// The agent's clock is the debug build's test seam (`NETPULSE_TEST_CLOCK_OFFSET_FILE`), not libfaketime:
        /// with libfaketime preloaded the Swift runtime does not see the program's arguments (checked with Debian's
        /// libfaketime 0.9.10: `netpulse-agent --version` reads the default config instead).
        @Test(.timeLimit(.minutes(3)))
        func aSpoolFrom1970IsReplayedWithoutHarm() throws {
            let fleet = try Fleet()
            let config = try fleet.writeAgentConfig("agent-1", interval: "200ms", batch: "600ms", include: #"["lo"]"#)
            let offsetFile = fleet.directory + "/clock-offset"
            let in1970: Int64 = 86_400_000  // 1970-01-02T00:00:00Z
            try "\(in1970 - Int64(Date().timeIntervalSince1970 * 1000))".write(
                toFile: offsetFile, atomically: true, encoding: .utf8)
            let agent = try fleet.startAgent(
                "agent-1", config: config, environment: ["NETPULSE_TEST_CLOCK_OFFSET_FILE": offsetFile])
            try eventually("batches spooled in 1970", timeout: 30) { fleet.spooledFiles("agent-1").count >= 5 }
            let spooledIn1970 = Set(fleet.spooledFiles("agent-1"))
            // What it spooled was sampled in 1970.
            let file = try #require(spooledIn1970.sorted().first)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(fleet.directory)/agent-1/spool/\(file)"))
            let spooledBatch = try WireCodec.frames(in: Array(bytes)).compactMap { frame -> WireBatch? in
                if case .batch(let batch) = try? WireCodec.decode(frame) { batch } else { nil }
            }.first
            #expect((spooledBatch?.timestamps.first ?? .max) < 2 * 86_400_000, "\(String(describing: spooledBatch))")
            // NTP sets the clock, and the daemon can be reached.
            try "0".write(toFile: offsetFile, atomically: true, encoding: .utf8)
            try fleet.startDaemon()
            try eventually("the spool is replayed", timeout: 60) {
                spooledIn1970.isDisjoint(with: fleet.spooledFiles("agent-1"))
            }
            let started = Date()
            let traffic = try run([
                Build.cli, "traffic", "--store", fleet.storePath, "--interface", "lo", "--by", "day", "--format",
                "json",
            ])
            #expect(Date().timeIntervalSince(started) < 10, "reading the traffic took long")
            let rows = try JSONSerialization.jsonObject(with: Data(traffic.utf8)) as? [[String: Any]]
            let unplaced = rows?.first?["unplaced"] as? [String: Any]
            #expect((unplaced?["steps"] as? Int ?? 0) >= 5, "\(traffic)")
            let table = try run([Build.cli, "traffic", "--store", fleet.storePath, "--interface", "lo"])
            #expect(table.contains("unplaced*"), "\(table)")
            // No bucket before the day the batches arrived.
            // The live batches were acknowledged (journaled) before the replay ended; the store applies behind that.
            let store = try fleet.store()
            func dayBuckets() throws -> [Bucket] {
                try blocking {
                    guard let lo = try await store.series().first(where: { $0.interface == "lo" }) else { return [] }
                    return try await store.buckets(level: .oneDay, series: [lo.id], from: .min, to: .max)[lo.id] ?? []
                }
            }
            try eventually("the live batches are applied", timeout: 20) { try !dayBuckets().isEmpty }
            let days = try dayBuckets()
            let today = Int64(Date().timeIntervalSince1970 * 1000) / 86_400_000 * 86_400_000
            #expect(!days.isEmpty && days.allSatisfy { $0.start >= today - 86_400_000 }, "\(days.map(\.start))")
            #expect(agent.stop() == 0)
            #expect(fleet.daemon!.stop() == 0)
        }
    }
}
