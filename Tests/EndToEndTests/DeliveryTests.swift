import Foundation
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// The real binaries, real certificates, real TLS and a real SQLite file, started as processes.
    @Suite(.serialized) struct DeliveryTests {
        /// Points arrive, and the counters stored for each interface equal the kernel's, names like `a<b&c` included.
        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(2)))
        func storedCountersEqualTheKernels() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host)
            try fleet.startDaemon()
            let config = try fleet.writeAgentConfig("agent-1", exclude: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            try network.sendTraffic(bytes: 8 << 20)

            let interfaces = ["npv0"] + TestNetwork.oddNames
            try eventually("stored counters equal /proc/net/dev", timeout: 20) {
                let kernel = try network.kernelCounters()
                return try interfaces.allSatisfy { name in
                    try fleet.samples("agent-1", name).last?.counters.values == kernel[name]
                }
            }
            let veth = try fleet.samples("agent-1", "npv0")
            #expect(veth.last!.counters[.rxBytes] - veth.first!.counters[.rxBytes] >= 8 << 20)
            // The CLI reads the same store and shows the odd names intact.
            let csv = try run([Build.cli, "rates", "--store", fleet.storePath, "--format", "csv"])
            #expect(csv.contains("agent-1,a<b&c,"))
            #expect(csv.contains("agent-1,\"p\"\"q>\","))
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
            #expect(agent.stop() == 0)
        }

        /// SIGKILL the daemon three times while an agent streams: afterwards every sampled tick is stored, and no
        /// sample is stored twice.
        @Test(.timeLimit(.minutes(2)))
        func daemonKilledMidStreamLosesNothingAndStoresNoDuplicate() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "400ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            for round in 0..<3 {
                Thread.sleep(forTimeInterval: 0.7 + 0.4 * Double(round))
                fleet.daemon!.killHard()
                Thread.sleep(forTimeInterval: 0.6)
                try fleet.startDaemon()
            }
            Thread.sleep(forTimeInterval: 1)
            // Stop the agent: it closes its open batch into the spool. Whatever is left is replayed by its next run.
            #expect(agent.stop() == 0)
            let stoppedAt = Int64(Date().timeIntervalSince1970 * 1000)
            let leftover = Set(fleet.spooledFiles("agent-1"))
            let second = try fleet.startAgent("agent-1", config: config)
            try eventually("second run connected") { second.output.contains("connected to netpulsed") }
            try eventually("first run's batches delivered", timeout: 30) {
                leftover.isDisjoint(with: fleet.spooledFiles("agent-1"))
            }
            #expect(second.stop() == 0)

            let samples = try fleet.samples("agent-1", "lo").filter { $0.timestamp <= stoppedAt }
            #expect(samples.count > 30)
            let gaps = zip(samples, samples.dropFirst()).map { $1.timestamp - $0.timestamp }
            // A lost batch would leave a gap of four ticks or more; a late tick under load leaves at most two.
            #expect(gaps.allSatisfy { $0 <= 350 }, "largest gap \(gaps.max() ?? 0) ms")

            // No sample stored twice, and the rollups counted every step once: their total is the counter delta.
            let all = try fleet.samples("agent-1", "lo")
            #expect(Set(all.map(\.timestamp)).count == all.count, "a sample stored twice")
            let store = try fleet.store()
            let total = try blocking {
                let series = try await store.series().first { $0.kind == .interface && $0.interface == "lo" }!
                return try await store.sums(level: .oneMinute, series: [series.id], from: 0, to: .max)[series.id]!
            }
            #expect(total.traffic[.rxBytes] == Int64(all.last!.counters[.rxBytes] - all.first!.counters[.rxBytes]))
            #expect(fleet.daemon!.output.contains("listening on"))
        }

        /// An agent whose daemon is down spools to disk, and delivers everything once the daemon is back.
        @Test(.timeLimit(.minutes(2)))
        func spooledBatchesAreDeliveredAfterAnOutage() throws {
            let fleet = try Fleet()
            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            let startedAt = Int64(Date().timeIntervalSince1970 * 1000)
            try eventually("batches spooled while the daemon is down") { fleet.spooledFiles("agent-1").count >= 8 }
            #expect(agent.output.contains("spooling"))
            try fleet.startDaemon()
            try eventually("spool drained", timeout: 30) { agent.output.contains("replay done") }
            try eventually("spool empty") { fleet.spooledFiles("agent-1").count <= 1 }
            let samples = try fleet.samples("agent-1", "lo")
            let first = try #require(samples.first)
            #expect(first.timestamp - startedAt < 1_500)
            let gaps = zip(samples, samples.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(gaps.allSatisfy { $0 <= 350 }, "largest gap \(gaps.max() ?? 0) ms")
            #expect(agent.stop() == 0)
        }
    }
}
