import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import TestSupport
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
        /// sample is stored twice. With the SQLite file, and with a PostgreSQL database (a throwaway server of the
        /// test's own), where a killed daemon's connection ends mid-transaction.
        @Test(.timeLimit(.minutes(2)), arguments: ["sqlite", "postgresql"])
        func daemonKilledMidStreamLosesNothingAndStoresNoDuplicate(store kind: String) throws {
            let fleet = try Fleet()
            let server = kind == "postgresql" ? try PostgresServer.start() : nil
            defer { server?.stop() }
            if let server { try fleet.useStore(postgresql: server.createDatabase("netpulse")) }
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
            try fleet.stopAndCheckEveryTickStoredOnce(agent, config: config, atLeast: 30)
            try fleet.checkWindowFiguresMatchSQLite(agent: "agent-1", interface: "lo", interval: 100)
            #expect(fleet.daemon!.output.contains("listening on"))
            if server != nil {
                // `netpulse` reads the daemon's database through the daemon's config.
                let csv = try run([
                    Build.cli, "rates", "--config", "\(fleet.directory)/netpulsed.toml", "--format", "csv",
                ])
                #expect(csv.contains("agent-1,lo,"), "\(csv)")
                #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
            }
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
            // Acknowledged means journaled: the daemon applies the batches to the store a moment later, in order (on
            // a loaded machine, after the spool was already empty).
            try eventually("the delivered batches are in the store") { try !fleet.samples("agent-1", "lo").isEmpty }
            let samples = try fleet.samples("agent-1", "lo")
            let first = try #require(samples.first)
            #expect(first.timestamp - startedAt < 1_500)
            let gaps = zip(samples, samples.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(gaps.allSatisfy { $0 <= 350 }, "largest gap \(gaps.max() ?? 0) ms")
            #expect(agent.stop() == 0)
        }

        /// After an outage, fresh batches go out ahead of the backlog: the daemon has the present within seconds of
        /// the agent starting, while the replay (slowed by a tight upload budget) is still under way, and the replay
        /// then fills in the past. Before, fresh batches waited behind the whole replay.
        ///
        /// The backlog is a previous run's spool of ten minutes (400 one-second batches of busy counters, about 40 KB
        /// on the wire), written before the agent starts: an outage long enough to outlast the budget's one-second
        /// burst (16 KiB) would make the test minutes long.
        @Test(.timeLimit(.minutes(2)))
        func freshPointsArriveAheadOfALongReplay() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            try fleet.writeBacklog("agent-1", batches: 400, from: Int64(Date().timeIntervalSince1970 * 1_000) - 600_000)

            let startedAt = Int64(Date().timeIntervalSince1970 * 1_000)
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig(
                    "agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#, budget: "2000"))
            try eventually("a fresh point arrives", timeout: 20) {
                try fleet.samples("agent-1", "lo").contains { $0.timestamp > startedAt + 500 }
            }
            // The present arrived while the past was still being replayed.
            #expect(!agent.output.contains("replay done"), "agent:\n\(agent.output)")
            #expect(fleet.spooledFiles("agent-1").count >= 100, "the backlog was already delivered")
            try eventually("the replay is done", timeout: 60) { agent.output.contains("replay done") }
            // "replay done" follows the last acknowledgement, which follows the journal; the store applies behind it.
            try eventually("every replayed sample is applied", timeout: 20) {
                try fleet.samples("agent-1", "lo").filter { $0.timestamp < startedAt }.count >= 4_000
            }
            let samples = try fleet.samples("agent-1", "lo")
            #expect(samples.filter { $0.timestamp < startedAt }.count == 4_000, "every replayed sample stored once")
            let fresh = samples.filter { $0.timestamp >= startedAt }
            let gaps = zip(fresh, fresh.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(gaps.allSatisfy { $0 <= 350 }, "largest gap \(gaps.max() ?? 0) ms")
            #expect(agent.stop() == 0)
        }

        /// An agent whose spool holds the backlogs of six earlier runs (six streams, each after a reboot) replays them
        /// all on one connection: with the stream window (`docs/protocol.md`, "References") both sides keep only four
        /// streams' descriptors and references and forget the same one at the same frame, so each run is described
        /// again when its turn comes and nothing is refused.
        @Test(.timeLimit(.minutes(2)))
        func sixRunsOfSpoolAreReplayedOnOneConnectionThroughTheStreamWindow() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let start = Int64(Date().timeIntervalSince1970 * 1_000) - 3_600_000
            for run in 0..<6 {
                try fleet.writeBacklog(
                    "agent-1", batches: 20, from: start + Int64(run) * 60_000, stream: UInt64(0xB0B0 + run),
                    firstOrdinal: 1 + run * 20)
            }
            let spooled = Set(fleet.spooledFiles("agent-1"))
            #expect(spooled.count == 120)
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#))
            try eventually("every run replayed", timeout: 60) {
                spooled.isDisjoint(with: fleet.spooledFiles("agent-1"))
            }
            // Acknowledged means journaled: the last batches may still be on their way from the journal to the store.
            let replayed = { try fleet.samples("agent-1", "lo").filter { $0.timestamp < start + 6 * 60_000 }.count }
            try eventually("every replayed sample applied to the store", timeout: 30) { try replayed() >= 6 * 20 * 10 }
            #expect(try replayed() == 6 * 20 * 10, "every replayed sample, once")
            #expect(!agent.output.contains("reject"), "agent:\n\(agent.output.suffix(2_000))")
            #expect(!FileManager.default.fileExists(atPath: fleet.directory + "/agent-1/spool/rejected"))
            #expect(agent.stop() == 0)
        }

        /// A thin, slow and lossy link between an agent and its daemon, in two network namespaces: the agent's
        /// uplink paced to 256 kbit/s (32,000 bytes/s) by `tc tbf`, 5 % of TCP packets dropped at random in each
        /// direction by nftables, and 50 ms of delay each way from a proxy (`Tests/Tools/delay_proxy.py`; this kernel
        /// has no netem). The agent replays a backlog of about 100 KB over it: delivery is complete and ordered (every
        /// backlog sample stored once, the fresh ones without a gap), and its upload budget of 6,000 bytes/s keeps it
        /// well under the link's capacity, headers and TLS included.
        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(3)))
        func aSlowLossyLinkDeliversEverythingInOrderWithinTheBudget() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host)
            try fleet.startDaemon()
            let proxyPort = 7_500
            let proxy = try Daemonized(
                [
                    "/usr/bin/python3", Build.root + "/Tests/Tools/delay_proxy.py", network.hostAddress, "\(proxyPort)",
                    "127.0.0.1", "\(fleet.port)", "0.05",
                ], log: fleet.directory + "/proxy.log", netns: network.host)
            defer { proxy.killHard() }
            try eventually("the proxy listens") { proxy.output.contains("listening on") }
            try network.limitPeerRate(kilobits: 256)
            try network.dropPackets(percent: 5)

            let startedAt = Int64(Date().timeIntervalSince1970 * 1_000)
            try fleet.writeBacklog("agent-1", batches: 1_000, from: startedAt - 1_200_000)
            var link = [(time: Date(), bytes: try network.peerSentBytes())]
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig(
                    "agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#, budget: "6000",
                    endpoint: "\(network.hostAddress):\(proxyPort)"),
                namespace: network.peer)
            try eventually("the replay is done", timeout: 150, interval: 0.5) {
                link.append((Date(), try network.peerSentBytes()))
                return agent.output.contains("replay done")
            }

            let samples = try fleet.samples("agent-1", "lo")
            #expect(Set(samples.map(\.timestamp)).count == samples.count, "a sample stored twice")
            #expect(samples.filter { $0.timestamp < startedAt }.count == 10_000, "every replayed sample stored")
            let fresh = samples.filter { $0.timestamp >= startedAt }
            let gaps = zip(fresh, fresh.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(fresh.count > 50 && gaps.allSatisfy { $0 <= 350 }, "largest gap \(gaps.max() ?? 0) ms")
            // The link's load in every window of 3 s or more after the budget's first second of burst.
            let steady = link.filter { $0.time.timeIntervalSince(link[0].time) >= 3 }
            var busiest = 0.0
            for (index, start) in steady.enumerated() {
                for end in steady[index...] where end.time.timeIntervalSince(start.time) >= 3 {
                    busiest = max(busiest, Double(end.bytes - start.bytes) / end.time.timeIntervalSince(start.time))
                }
            }
            let seconds = link.last!.time.timeIntervalSince(link[0].time)
            #expect(seconds > 6, "the replay took \(seconds) s: too short to show the budget")
            #expect(busiest > 0 && busiest <= 0.6 * 32_000, "the link carried \(Int(busiest)) bytes/s at its busiest")
            #expect(try network.droppedPackets() > 0, "no packet was lost")
            print(
                "lossy link: replay of 1,000 batches in \(Int(seconds)) s, busiest 3 s at \(Int(busiest)) bytes/s, \(try network.droppedPackets()) packets dropped"
            )
            #expect(agent.stop() == 0)
        }

        /// An agent whose wall clock steps back 30 s, then an hour ahead, then back to the right time (a test-only
        /// offset the debug build reads from a file, `NETPULSE_TEST_CLOCK_OFFSET_FILE`): counting follows the
        /// batches' order, not their clocks, so every rollup level's total still equals the stored counters' delta,
        /// nothing is stored in the future, and both steps are flagged (a clock step counted, a `clock-ahead`
        /// anomaly for the batches moved back).
        @Test(.timeLimit(.minutes(2)))
        func anAgentsClockSteppingKeepsTotalsExact() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let offsetFile = fleet.directory + "/clock-offset"
            try "0\n".write(toFile: offsetFile, atomically: true, encoding: .utf8)
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "400ms", include: #"["lo"]"#),
                environment: ["NETPULSE_TEST_CLOCK_OFFSET_FILE": offsetFile])
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 10 }
            for offset in [-30_000, 3_600_000, 0] {
                try "\(offset)\n".write(toFile: offsetFile, atomically: true, encoding: .utf8)
                let before = try fleet.samples("agent-1", "lo").count
                try eventually("points after a clock step of \(offset) ms", timeout: 30) {
                    try fleet.samples("agent-1", "lo").count >= before + 20
                }
            }
            #expect(agent.stop() == 0)
            let now = Int64(Date().timeIntervalSince1970 * 1_000)

            let samples = try fleet.samples("agent-1", "lo")
            let delta = Int64(samples.last!.counters[.rxBytes] - samples.first!.counters[.rxBytes])
            #expect(delta > 0)
            #expect(samples.allSatisfy { $0.timestamp <= now + 60_000 }, "a sample stored in the future")
            let store = try fleet.store()
            let series = try blocking {
                try await store.series().first {
                    $0.kind == .interface && $0.agent == "agent-1" && $0.interface == "lo"
                }!
            }
            for level in [RollupLevel.oneMinute, .fiveMinutes, .oneHour, .oneDay] {
                let total = try blocking {
                    try await store.sums(level: level, series: [series.id], from: 0, to: .max)[series.id]!
                }
                #expect(
                    total.traffic[.rxBytes] == delta, "level \(level.width) ms: \(total.traffic[.rxBytes]) ≠ \(delta)")
                if level == .oneMinute { #expect(total.events[4] >= 1, "no clock step flagged") }
            }
            let buckets = try blocking {
                try await store.buckets(level: .oneMinute, series: [series.id], from: 0, to: .max)[series.id] ?? []
            }
            #expect(buckets.allSatisfy { $0.start <= now }, "a bucket in the future")
            let anomalies = try blocking { try await store.anomalies(since: 0) }
            #expect(anomalies.contains { $0.kind == "clock-ahead" }, "\(anomalies)")
        }

        /// A batch the daemon will never store (here: an order above 2⁶³ − 1, first in the agent's spool) is refused by
        /// name; the agent sets it aside in `rejected/`, unchanged and with its reason, and delivers what follows
        /// over the same connection. Before, the daemon answered ERROR and closed, and the agent sent the same batch
        /// again on every reconnect: nothing behind it was ever delivered.
        @Test(.timeLimit(.minutes(2)))
        func aBatchTheDaemonAlwaysRefusesIsSetAsideAndDeliveryGoesOn() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let spool = "\(fleet.directory)/agent-1/spool"
            try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
            let descriptor = InterfaceDescriptor(
                id: 1, name: "lo", epoch: CounterEpoch(bootID: BootID(high: 3, low: 4), ifindex: 1, width: .bits64))
            let poison = WireBatch(
                stream: 0xDEAD, sequence: 1, order: UInt64(Int64.max) + 7, interval: 100, heartbeat: 0,
                timestamps: [Int64(Date().timeIntervalSince1970 * 1_000) - 60_000],
                sections: [BatchSection(descriptorID: 1, ticks: [0], values: CounterValues().values)])
            let bytes =
                WireCodec.encode(.describe(Describe(stream: 0xDEAD, interfaces: [descriptor])))
                + WireCodec.encode(.batch(poison))
            try Data(bytes).write(to: URL(fileURLWithPath: "\(spool)/00000000000000000001.np2"))

            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#))
            try eventually("points behind the refused batch arrive", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= 5
            }
            let aside = "\(spool)/rejected/00000000000000000001.np2"
            #expect(FileManager.default.contents(atPath: aside).map(Array.init) == bytes, "kept unchanged")
            let reason = try String(contentsOfFile: "\(spool)/rejected/00000000000000000001.txt", encoding: .utf8)
            #expect(reason.contains("invalid-batch"), "\(reason)")
            #expect(!fleet.spooledFiles("agent-1").contains("00000000000000000001.np2"))
            // Said once on each side, naming the batch; the connection was never dropped for it.
            let daemonSaid = fleet.daemon!.output.components(separatedBy: "refused for good").count - 1
            #expect(daemonSaid == 1, "netpulsed:\n\(fleet.daemon!.output)")
            #expect(fleet.daemon!.output.contains("batch 1 of stream 000000000000dead"))
            #expect(agent.output.contains("moved to \(aside)"), "agent:\n\(agent.output)")
            #expect(!agent.output.contains("disconnected from"), "agent:\n\(agent.output)")
            #expect(agent.stop() == 0)
        }
    }
}
