import Foundation
import PulseAnalytics
import PulseCore
import PulseStore

/// The store alone, in this process: `interfaces` distinct interfaces (16 per agent, every counter varying, no two
/// agents alike) at 1 Hz in 10-second batches, each agent's batches a tenth of a period apart like a real fleet's,
/// committed the way the daemon groups them (everything that arrived during the previous commit). Measures the
/// counting, rollups and durable commits, without TLS and decoding.
enum StoreBench {
    static func run(interfaces: Int, seconds: Int) async throws {
        let directory = NSTemporaryDirectory() + "netpulse-store-bench-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/netpulse.db")
        let agents = max(1, interfaces / 16)
        let start = WallClock.milliseconds() / 1_000 * 1_000 - Int64(seconds) * 1_000
        var random = SplitMix64(seed: 42)
        var counters = (0..<agents * 16).map { _ in (0..<16).map { _ in UInt64.random(in: 0...1 << 40, using: &random) }
        }
        // Every agent's batches, prepared up front (the daemon gets them decoded from the connections' loops).
        var batches = [[IngestBatch]](repeating: [], count: seconds / 10)
        for agent in 0..<agents {
            let identity = AgentIdentity(name: "bench-\(agent)", hostname: "bench-\(agent)", version: "bench")
            let boot = BootID(high: UInt64(agent) + 1, low: 9)
            let descriptors = (0..<16).map {
                InterfaceDescriptor(
                    id: UInt32($0), name: InterfaceName("eth\($0)"),
                    epoch: CounterEpoch(bootID: boot, ifindex: UInt32($0 + 2), width: .bits64))
            }
            for batch in 0..<seconds / 10 {
                var sections = [BatchSection]()
                for interface in 0..<16 {
                    var values = [UInt64]()
                    for _ in 0..<10 {
                        let index = agent * 16 + interface
                        for counter in 0..<16 {
                            counters[index][counter] &+= UInt64.random(
                                in: 0...(counter < 2 ? 30_000_000 : 30_000), using: &random)
                        }
                        values += counters[index]
                    }
                    sections.append(BatchSection(descriptorID: UInt32(interface), ticks: Array(0..<10), values: values))
                }
                let first = start + Int64(batch * 10) * 1_000
                let wire = WireBatch(
                    stream: UInt64(agent) + 1, sequence: UInt64(batch + 1), order: UInt64(first + 9_000),
                    interval: 1_000, heartbeat: 60_000, timestamps: (0..<10).map { first + Int64($0) * 1_000 },
                    sections: sections,
                    linkStates: (0..<16).map {
                        LinkStateRecord(
                            descriptorID: UInt32($0), tick: 0,
                            state: LinkState(
                                speedMbps: 10_000, operState: .up, carrier: true, mtu: 1_500, kind: .physical))
                    })
                batches[batch].append(IngestBatch(agent: identity, batch: wire, descriptors: descriptors))
            }
        }
        // A tenth of the agents flush each second; commits take whatever has arrived.
        let all = batches.flatMap { $0 }
        let perSecond = max(1, agents / 10)
        var index = 0
        var commits = 0
        var latencies = [Double]()
        let began = ContinuousClock.now
        while index < all.count {
            let group = Array(all[index..<min(all.count, index + perSecond)])
            let commitStart = ContinuousClock.now
            _ = try await store.ingest(group, receivedAt: group.last!.lastTimestamp + 1_000)
            let elapsed = ContinuousClock.now - commitStart
            latencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1_000)
            index += group.count
            commits += 1
        }
        let total = ContinuousClock.now - began
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        let values = Double(all.count * 16 * 10 * Counter.count)
        latencies.sort()
        print(
            "store only (in process, synchronous=FULL), \(agents * 16) interfaces, \(all.count) batches in \(commits) commits:"
        )
        print("  counter values stored    \(Units.fixed(values / seconds, decimals: 0)) /s")
        print("  interface-samples stored \(Units.fixed(values / Double(Counter.count) / seconds, decimals: 0)) /s")
        print(
            "  commit p50 / p99         \(Units.fixed(latencies[latencies.count / 2], decimals: 1)) / \(Units.fixed(latencies[latencies.count * 99 / 100], decimals: 1)) ms"
        )
        print("  store size               \(Units.formatBytes(Double(store.sizeOnDisk)))")
    }
}
