import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import PulseStoreSQLite

/// The store alone, in this process, fed the same agents as the ingest benchmark (``BenchAgent``): counting,
/// rollups and durable commits without TLS and decoding, to tell the store's share of the daemon's cost.
enum StoreBench {
    /// `interfaces` interfaces (16 per agent) for `seconds` of agent time, stamped at 1 Hz and ending a minute ago,
    /// committed the way the daemon groups them: a tenth of the agents' batches per commit, as a fleet whose agents
    /// are spread over the 10-second batch interval delivers them.
    static func run(interfaces: Int, seconds: Int) async throws {
        let directory = NSTemporaryDirectory() + "netpulse-store-bench-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/netpulse.db")
        let agentCount = max(1, interfaces / IngestBench.interfaces)
        let rounds = max(1, seconds / IngestBench.ticksPerBatch)
        let first = WallClock.system.now() / 1_000 * 1_000 - Int64(rounds * IngestBench.ticksPerBatch + 60) * 1_000
        // Every batch made up front (the daemon gets them decoded from the connections' event loops).
        var agents = (0..<agentCount).map { BenchAgent(index: $0, name: "bench-agent-\($0)") }
        var all = [IngestBatch]()
        for round in 0..<rounds {
            for index in agents.indices {
                all.append(batch(&agents[index], firstTick: first + Int64(round * IngestBench.ticksPerBatch) * 1_000))
            }
        }
        let perCommit = max(1, agentCount / 10)
        var index = 0
        var latencies = [Double]()
        let began = ContinuousClock.now
        while index < all.count {
            let group = Array(all[index..<min(all.count, index + perCommit)])
            let commitStart = ContinuousClock.now
            _ = try await store.ingest(group, receivedAt: group.last!.lastTimestamp + 1_000)
            latencies.append(milliseconds(ContinuousClock.now - commitStart))
            index += group.count
        }
        let elapsed = milliseconds(ContinuousClock.now - began) / 1_000
        let samples = Double(all.count * IngestBench.interfaces * IngestBench.ticksPerBatch)
        latencies.sort()
        print(
            "store only (in process, synchronous = FULL), \(agentCount * IngestBench.interfaces) interfaces, \(all.count) batches in \(latencies.count) commits:"
        )
        print("  counter values stored    \(Units.fixed(samples * Double(Counter.count) / elapsed, decimals: 0)) /s")
        print("  interface-samples stored \(Units.fixed(samples / elapsed, decimals: 0)) /s")
        print(
            "  commit p50 / p99         \(Units.fixed(latencies[latencies.count / 2], decimals: 1)) / \(Units.fixed(latencies[latencies.count * 99 / 100], decimals: 1)) ms"
        )
        print("  store size               \(Units.formatBytes(Double(store.sizeOnDisk)))")
    }

    /// Fills a store at `path` with the default settings with `hours` of `interfaces` interfaces (ending a minute
    /// ago), for `scripts/bench-size.py` to weigh table by table.
    static func fill(path: String, interfaces: Int, hours: Int) async throws {
        let store = try SQLiteStore(path: path, settings: StoreSettings(synchronous: .normal))
        let agentCount = max(1, interfaces / IngestBench.interfaces)
        let rounds = hours * 360
        let first = WallClock.system.now() / 1_000 * 1_000 - Int64(rounds * IngestBench.ticksPerBatch + 60) * 1_000
        var agents = (0..<agentCount).map { BenchAgent(index: $0, name: "bench-agent-\($0)") }
        for round in 0..<rounds {
            let tick = first + Int64(round * IngestBench.ticksPerBatch) * 1_000
            let batches = agents.indices.map { batch(&agents[$0], firstTick: tick) }
            _ = try await store.ingest(batches, receivedAt: tick + 10_000)
        }
        print("filled \(path): \(agentCount * IngestBench.interfaces) interfaces × \(hours) h")
    }

    static func batch(_ agent: inout BenchAgent, firstTick: Int64) -> IngestBatch {
        IngestBatch(
            agent: AgentIdentity(name: agent.name, hostname: agent.name, version: "bench", labels: agent.labels),
            batch: agent.nextWireBatch(firstTick: firstTick), descriptors: agent.descriptors)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }
}
