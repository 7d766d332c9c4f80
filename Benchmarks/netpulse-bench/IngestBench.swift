import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PulseAnalytics
import PulseCertificates
import PulseCore
import PulseDaemon
import PulseSettings
import PulseStore
import PulseStoreSQLite
import Synchronization
import TestSupport

/// Daemon ingest: a real `netpulsed` process with its default settings (every rollup level, the clock checks, an
/// fsync per group commit), and `agents` simulated agents of 16 interfaces each in this process, each on its own
/// mutual-TLS connection with its own certificate and labels, sending what a real agent at its defaults sends: 10
/// one-second ticks per batch, every counter of every interface moving every second by an amount of its own, no two
/// agents alike. Two runs, each against a fresh store:
///
/// - **real pace**: every agent sends one batch every 10 seconds of real time, stamped with the real time of its
///   ticks, the agents spread over the 10 seconds as a fleet is. This is the load a fleet of that size puts on the
///   daemon; it measures the acknowledgement latency an agent sees.
/// - **saturated**: every agent sends batches as fast as its in-flight window (32) allows, made in advance
///   (encoding is the agents' work, not the daemon's) and stamped one second per tick, starting far enough in the
///   past that no batch ends after the daemon's clock: a spool being replayed. Only acknowledged (durably stored)
///   values count; the store is then checked to hold them.
enum IngestBench {
    static let interfaces = 16
    static let ticksPerBatch = 10
    static var valuesPerBatch: Int { interfaces * ticksPerBatch * Counter.count }

    /// A CA, the daemon's certificate and one per agent in `directory/ca`; the agents' names and TLS contexts.
    /// Agents are named `prefix-N`.
    static func certificates(
        agents agentCount: Int, directory: String, prefix: String = "bench-agent"
    ) throws -> ([String], [NIOSSLContext]) {
        print("issuing \(agentCount) agent certificates …")
        let ca = try CertificateAuthority.create(directory: directory + "/ca")
        _ = try ca.issue(role: .daemon, name: "netpulsed", outputDirectory: directory + "/ca")
        let names = (0..<agentCount).map { "\(prefix)-\($0)" }
        for name in names { _ = try ca.issue(role: .agent, name: name, outputDirectory: directory + "/ca") }
        let contexts = try names.map { name in
            // The real agent's TLS settings.
            try NIOSSLContext(
                configuration: TLSSetup.client(
                    TLSFiles(
                        ca: directory + "/ca/ca.pem", certificate: directory + "/ca/\(name).pem",
                        key: directory + "/ca/\(name)-key.pem")))
        }
        return (names, contexts)
    }

    /// Every agent's `batches` batches, made in advance (encoding is the agents' work, not the daemon's), their ticks
    /// one second apart from `firstTick`, on streams of `generation`.
    static func prepare(names: [String], generation: Int = 0, batches: Int, firstTick: Int64) -> [[ByteBuffer]] {
        let encoded = Mutex([[ByteBuffer]](repeating: [], count: names.count))
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            var agent = BenchAgent(index: index, name: names[index], generation: generation)
            let frames = (0..<batches).map { agent.nextBatch(firstTick: firstTick + Int64($0 * ticksPerBatch) * 1_000) }
            encoded.withLock { $0[index] = frames }
        }
        return encoded.withLock { $0 }
    }

    /// Acknowledgement latency at half of the maximum ingest against a daemon on a large store (one made by
    /// `query-store`), with its dashboards off and then drawing the fleet overview for every range every 10 seconds
    /// (host pages off), at full speed and then resting while the CPUs are contended (the default `busy_share`),
    /// side by side in one run:
    ///
    /// 1. the maximum on this store: `agents` agents send prepared batches as fast as their windows allow
    ///    (dashboards off) for `seconds / 2`;
    /// 2. half of that rate offered as a fixed load by the same number of agents: each a prepared batch every
    ///    `agents / (maximum / 2)` seconds, the agents spread evenly; dashboards off, measured for `seconds`;
    /// 3. the same load while the daemon draws as it does by default, resting while the CPUs are contended;
    /// 4. the same load while the daemon draws without rest (`busy_share = 1`).
    ///
    /// Batches are made in advance, so the agents (on the same two cores) cost the daemon as little CPU as they
    /// can; a fleet of thousands of agents encoding at the real pace took so much of the machine that the daemon
    /// could not keep up with half of its maximum. The batches are backdated (a replayed spool), every phase's in a
    /// span of its own, the phases in time order, all ending a minute before now; each phase's agents start new
    /// streams, and the agents' names are this run's own, so no batch repeats one the store holds. Latency counts
    /// from when a batch was due, so a daemon that falls behind cannot hide it by slowing the agents down.
    static func renderImpact(daemonBinary: String, store: String, agents agentCount: Int, seconds: Int) throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-render-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let extra = "[daemon]\nstate_directory = \"\(store)/netpulsed\"\n[rollups]\nlevels = [\"5m\", \"1h\", \"1d\"]\n"
        let drawing =
            "[dashboards]\nhost_pages = false\nhour_interval = \"10s\"\nday_interval = \"10s\"\nweek_interval = \"10s\"\nmonth_interval = \"10s\"\nkeep = 100\n"
        let (names, contexts) = try certificates(
            agents: agentCount, directory: directory, prefix: "burst-\(getpid())")
        let maximumSeconds = max(10, seconds / 2)
        // Batches per agent: the saturated phase's for up to 12 million values a second acknowledged (the journal
        // runs ahead of the store), with room for the warm-up; each metered phase's span of ticks has room for as
        // much, and the phase is given what its offered rate needs for the warm-up and the measurement (an agent
        // that runs out ends the measurement early, which once cut the metered phases to 16 s without saying so).
        // The phases' spans of ticks do not overlap.
        let saturatedBatches = 12_000_000 * (maximumSeconds + 15) / (agentCount * valuesPerBatch) + 2
        let meteredSpan = 12_000_000 * (seconds + 20) / (agentCount * valuesPerBatch) + 2
        let end = WallClock.system.now() / 1_000 * 1_000 - 60_000
        // The metered phases in order (`BENCH_PHASES`, comma-separated: off, resting, never).
        let kinds = (ProcessInfo.processInfo.environment["BENCH_PHASES"] ?? "off,resting,never").split(separator: ",")
            .map(String.init)
        guard !kinds.isEmpty, kinds.allSatisfy({ ["off", "resting", "never"].contains($0) }) else {
            print("BENCH_PHASES lists off, resting and never, comma-separated")
            return
        }
        func prepare(phase: Int, batches: Int) -> [[ByteBuffer]] {
            // Each phase's batches end where its span ends, so the last phase's end a minute before now.
            let spans = [saturatedBatches] + Array(repeating: meteredSpan, count: kinds.count)
            let first = end - Int64((spans[phase...].reduce(0, +) - spans[phase] + batches) * ticksPerBatch) * 1_000
            return IngestBench.prepare(names: names, generation: phase, batches: batches, firstTick: first)
        }

        // 1. The maximum on this store.
        print("preparing \(agentCount) agents × \(saturatedBatches) batches for the maximum …")
        var frames = prepare(phase: 0, batches: saturatedBatches)
        let maximum: Double
        do {
            let daemon = try Daemon(
                binary: daemonBinary, directory: directory + "/maximum", ca: directory + "/ca",
                extra: extra + "[dashboards]\nenabled = false\n")
            defer { daemon.stop() }
            let run = try offered(
                // 12 s of warm-up: the journal acknowledges ahead of the store until a queue of batches waits to be
                // applied; measured after that, the store's rate is what the daemon sustains.
                daemon: daemon, names: names, contexts: contexts, generation: 0, seconds: maximumSeconds, warmUp: 12,
                stored: storedBatches(store + "/netpulsed/netpulse.db")
            ) { index in .prepared(frames[index]) }
            maximum = run.sustained
            print(
                "ack latency against netpulsed on the bulk-loaded store (\(agentCount) agents × \(interfaces) interfaces, 10-second batches of \(valuesPerBatch) values, prepared in advance):"
            )
            print(
                "  maximum (as fast as acknowledgements allow, \(maximumSeconds) s)      \(Units.fixed(run.sustained, decimals: 0)) batches/s = \(Units.fixed(run.sustained * Double(valuesPerBatch) / 1e6, decimals: 2)) million values/s sustained (\(Units.fixed(run.rate, decimals: 0)) acknowledged\(run.storedText)), netpulsed CPU \(Units.fixed(run.cpu, decimals: 0))% of a core"
            )
        }
        frames = []
        guard maximum > 0 else {
            print("  the store applied nothing during the measurement: no load to offer a fraction of")
            return
        }

        // 2 to 4. Half of it (or BENCH_LOAD_FRACTION of it), offered at a fixed rate: without drawing, drawing as by
        // default, and drawing without rest.
        let fraction = Double(ProcessInfo.processInfo.environment["BENCH_LOAD_FRACTION"] ?? "") ?? 0.5
        let period = Double(agentCount) / (maximum * fraction)  // seconds between one agent's batches
        let meteredBatches = min(meteredSpan, Int((Double(seconds) + 25) / period) + 2)
        // The share drawing works while the CPUs are contended in a resting phase: the daemon's default unless set.
        let busyShare =
            ProcessInfo.processInfo.environment["BENCH_BUSY_SHARE"] ?? "\(DashboardSettings.defaultBusyShare)"
        // Drawing as by default comes right after dashboards off: each phase's new streams leave the store 10,000
        // more virtual gaps, and the billing pass that rebuilds every bill for them, a burst at the tail of every
        // phase, grows with them.
        for (index, kind) in kinds.enumerated() {
            let (phase, draws, rests) = (index + 1, kind != "off", kind == "resting")
            let prepared = prepare(phase: phase, batches: meteredBatches)
            // Each drawing phase starts without pages, so it draws at once and its count of SVGs is its own.
            try? FileManager.default.removeItem(atPath: store + "/netpulsed/dashboards")
            // The daemon's own metrics, read at the start and the end of the measurement: its part of the latency.
            let metricsPort = try Daemon.freePort()
            let daemon = try Daemon(
                binary: daemonBinary, directory: directory + "/half-\(phase)", ca: directory + "/ca",
                extra: extra + "[metrics]\nlisten = \"127.0.0.1:\(metricsPort)\"\n"
                    + (draws
                        ? drawing + "busy_share = \(rests ? busyShare : "1")\n" : "[dashboards]\nenabled = false\n"))
            defer { daemon.stop() }
            var ownAtStart = LatencyHistogram()
            var ownAtEnd = LatencyHistogram()
            var roundsAtEnd: (count: Double, seconds: Double)?
            let run = try offered(
                daemon: daemon, names: names, contexts: contexts, generation: phase, seconds: seconds, warmUp: 15,
                stored: storedBatches(store + "/netpulsed/netpulse.db"),
                measuring: { starting in
                    let metrics = LatencyHistogram.metrics(port: metricsPort)
                    let histogram = LatencyHistogram(metrics: metrics, name: "netpulse_ack_latency_seconds")
                    if starting { ownAtStart = histogram } else { ownAtEnd = histogram }
                    if !starting { roundsAtEnd = LatencyHistogram.rounds(metrics: metrics) }
                }
            ) { index in
                .metered(
                    prepared[index], period: UInt64(period * 1e9),
                    offset: UInt64(period * 1e9 * Double(index) / Double(agentCount)))
            }
            let drawn =
                draws
                ? (try? FileManager.default.contentsOfDirectory(atPath: store + "/netpulsed/dashboards"))?.filter {
                    $0.hasSuffix(".svg") && !$0.contains("latest")
                }.count ?? 0 : 0
            print(
                "  \(Units.fixed(fraction * 100, decimals: 0)) % of it, \(draws ? "drawing the fleet overview, all ranges every 10 s, \(rests ? "resting while contended (busy_share \(busyShare))" : "never resting                         ")" : "dashboards off                                                           ")  \(Units.fixed(run.rate, decimals: 0)) batches/s\(run.storedText), p50 / p99 / max \(latencyText(run.latencies)) over \(Units.fixed(run.elapsed, decimals: 0)) s\(run.exhausted ? " (an agent ran out of prepared batches)" : ""), netpulsed CPU \(Units.fixed(run.cpu, decimals: 0))% of a core\(draws ? ", \(drawn) SVGs kept on disk" : "")\(run.errors > 0 ? ", \(run.errors) errors" : "")"
            )
            print("      the daemon's own part (queued to acknowledged): \(ownAtEnd.since(ownAtStart).summary)")
            if !run.slowest.isEmpty { print("      the slowest seconds: \(run.slowestText)") }
            if draws, let rounds = roundsAtEnd {
                // Rounds of drawing finished since the daemon started (warm-up included), from its metrics.
                print(
                    "      rounds of drawing finished by the end: \(Int(rounds.count))\(rounds.count > 0 ? ", \(Units.fixed(rounds.seconds / rounds.count, decimals: 1)) s each on average" : "")"
                )
            }
        }
    }

    /// One agent per name sending what `mode` gives each (by index) against `daemon`: once every agent is connected
    /// they are let go (paced agents start at once) and, after `warmUp` seconds, measured for `seconds` or until
    /// one runs out of prepared batches (see ``Offered``).
    /// `measuring` is called with true as the measurement starts and with false as it ends.
    static func offered(
        daemon: Daemon, names: [String], contexts: [NIOSSLContext], generation: Int, seconds: Int, warmUp: Double,
        stored: () -> Int64? = { nil }, measuring: (Bool) -> Void = { _ in }, mode: (Int) -> SimulatedAgent.Mode
    ) throws -> Offered {
        try offered(
            daemons: [daemon], names: names, contexts: contexts, generation: generation, seconds: seconds,
            warmUp: warmUp, stored: stored, measuring: measuring, mode: mode)
    }

    /// The batches the SQLite store at `path` holds, read beside the running daemon: a journaled batch is
    /// acknowledged before the store applies it, so the rate the daemon sustains is the store's, not the
    /// acknowledgements'.
    static func storedBatches(_ path: String) -> () -> Int64? {
        {
            guard let store = try? SQLiteStore(path: path, readOnly: true) else { return nil }
            return try? blocking { try await store.totals().batches }
        }
    }

    /// As above, the agents spread over `daemons` (agent i to daemon i mod n); `also` measures the CPU of other
    /// processes (a database server) over the same time.
    static func offered(
        daemons: [Daemon], names: [String], contexts: [NIOSSLContext], generation: Int, seconds: Int, warmUp: Double,
        also: () -> Double = { 0 }, stored: () -> Int64? = { nil }, measuring: (Bool) -> Void = { _ in },
        mode: (Int) -> SimulatedAgent.Mode
    ) throws -> Offered {
        let tally = Tally()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        for index in names.indices {
            let agent = BenchAgent(index: index, name: names[index], generation: generation)
            let agentMode = mode(index)
            try connect(group: group, port: daemons[index % daemons.count].port, context: contexts[index], agent: index)
            {
                SimulatedAgent(agent: agent, mode: agentMode, tally: tally)
            }
        }
        try waitUntil(seconds: 60) { tally.welcomed.load(ordering: .relaxed) == names.count }
        tally.go()
        Thread.sleep(forTimeInterval: warmUp)
        measuring(true)
        tally.startMeasuring()
        let usageBefore = try daemons.map { try ProcessUsage(pid: $0.pid) }
        let alsoBefore = also()
        let storedBefore = stored()
        let start = Date()
        var exhausted = false
        while Date().timeIntervalSince(start) < Double(seconds) {
            Thread.sleep(forTimeInterval: 0.25)
            if tally.finished.load(ordering: .relaxed) > 0 {
                exhausted = true
                break
            }
        }
        let storedAfter = stored()
        let elapsed = Date().timeIntervalSince(start)
        let latencies = tally.stopMeasuring()
        measuring(false)
        let usageAfter = try daemons.map { try ProcessUsage(pid: $0.pid) }
        let cpuSeconds = zip(usageBefore, usageAfter).map { $1.cpuSeconds - $0.cpuSeconds }
        return Offered(
            latencies: latencies, elapsed: elapsed, exhausted: exhausted,
            cpu: cpuSeconds.reduce(0, +) / elapsed * 100, rss: usageAfter.map(\.peakRSS).max() ?? 0,
            cpuSeconds: cpuSeconds, alsoCPUSeconds: also() - alsoBefore,
            connected: tally.welcomed.load(ordering: .relaxed), acknowledged: tally.acked.load(ordering: .relaxed),
            errors: tally.errors.load(ordering: .relaxed),
            storedRate: storedBefore.flatMap { before in storedAfter.map { Double($0 - before) / elapsed } },
            slowest: tally.slowestSeconds(3))
    }

    /// A latency histogram the daemon exports (cumulative counts by upper bound, in seconds), read from its metrics.
    struct LatencyHistogram {
        var counts = [Double: Double]()

        init(counts: [Double: Double] = [:]) { self.counts = counts }

        /// The daemon's metrics page (nil when it cannot be read).
        static func metrics(port: Int) -> String? {
            try? blocking({ try await RemoteWriteBench.get(port: port, path: "/metrics") })
        }

        /// The histogram `name` from a metrics page; empty when there is no page.
        init(metrics text: String?, name: String) {
            for line in (text ?? "").split(separator: "\n") where line.hasPrefix(name + "_bucket{le=\"") {
                let parts = line.dropFirst(name.count + 12).split(separator: "\"")
                guard parts.count == 2, let count = Double(parts[1].dropFirst(2)),
                    let bound = parts[0] == "+Inf" ? Double.infinity : Double(parts[0])
                else { continue }
                counts[bound] = count
            }
        }

        /// How many rounds of drawing the daemon has finished (`netpulse_render_duration_seconds`) and their time,
        /// from a metrics page.
        static func rounds(metrics text: String?) -> (count: Double, seconds: Double)? {
            guard let text else { return nil }
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                    Double($0.split(separator: " ")[1])
                }
            }
            guard let count = value("netpulse_render_duration_seconds_count"),
                let seconds = value("netpulse_render_duration_seconds_sum")
            else { return nil }
            return (count, seconds)
        }

        /// What was counted between `earlier` and this; nothing when either was not read.
        func since(_ earlier: LatencyHistogram) -> LatencyHistogram {
            guard !counts.isEmpty, !earlier.counts.isEmpty else { return LatencyHistogram() }
            return LatencyHistogram(counts: counts.merging(earlier.counts.mapValues { -$0 }, uniquingKeysWith: +))
        }

        /// The median and 99th percentile, each interpolated within its bucket (only as fine as the buckets: 1,
        /// 2.5, 5, 10, 25, 50 ms …), and the share within 25 ms.
        var summary: String {
            let bounds = counts.keys.sorted()
            guard let total = bounds.last.flatMap({ counts[$0] }), total > 0 else { return "not read" }
            func quantile(_ q: Double) -> String {
                var (lower, below) = (0.0, 0.0)
                for bound in bounds {
                    let count = counts[bound]!
                    if count >= q * total {
                        guard bound.isFinite else { return "over \(Units.fixed(lower * 1_000, decimals: 1)) ms" }
                        let within = lower + (bound - lower) * (q * total - below) / max(count - below, 1)
                        return "\(Units.fixed(within * 1_000, decimals: 1)) ms"
                    }
                    (lower, below) = (bound, count)
                }
                return "?"
            }
            let within25 = (counts[0.025] ?? 0) / total * 100
            return
                "p50 \(quantile(0.5)), p99 \(quantile(0.99)) (within the histogram's buckets), \(Units.fixed(within25, decimals: 2)) % within 25 ms, of \(Int(total)) batches"
        }
    }

    /// What ``offered(daemon:names:contexts:generation:seconds:warmUp:mode:)`` measured.
    struct Offered {
        var latencies: [UInt64]
        var elapsed: Double
        /// The measurement ended early: an agent ran out of prepared batches.
        var exhausted: Bool
        /// The daemons' CPU, percent of one core, and the largest peak RSS.
        var cpu: Double
        var rss: Int
        /// Each daemon's CPU seconds during the measurement, and those of the other processes measured.
        var cpuSeconds: [Double] = []
        var alsoCPUSeconds: Double = 0
        var connected: Int
        /// Batches acknowledged since the agents connected (warm-up included).
        var acknowledged: Int
        var errors: Int
        /// Batches the store took in a second during the measurement (the SQLite store, read beside the daemon).
        var storedRate: Double?
        /// The wall-clock seconds with the most batches over 25 ms, and the worst of each.
        var slowest: [(second: Int64, count: Int, worst: UInt64)] = []
        /// The slowest seconds as `04:41:26 UTC: 812 over 25 ms (worst 1,249 ms)`, for the daemon's log beside it.
        var slowestText: String {
            slowest.map {
                "\(RFC3339.text($0.second * 1_000).dropFirst(11).prefix(8)) UTC: \($0.count) over 25 ms (worst \($0.worst / 1_000_000) ms)"
            }.joined(separator: "; ")
        }
        /// Batches acknowledged a second during the measurement.
        var rate: Double { Double(latencies.count) / elapsed }
        /// What the daemon sustained: acknowledgements, or the store's rate when lower (journaled batches are
        /// acknowledged before they are applied, up to a backlog of one ingest queue).
        var sustained: Double { min(rate, storedRate ?? rate) }
        /// The store's rate, for printing.
        var storedText: String {
            storedRate.map { "; \(Units.fixed($0, decimals: 0)) batches/s applied to the store" } ?? ""
        }
    }

    static func run(daemonBinary: String, agents agentCount: Int, seconds: Int, pacedSeconds: Int) throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (names, contexts) = try certificates(agents: agentCount, directory: directory)
        print(
            "\(agentCount) agents × \(interfaces) interfaces = \(agentCount * interfaces) interfaces, 1 Hz, 10-second batches of \(valuesPerBatch) counter values\n"
        )

        // Real pace.
        do {
            let daemon = try Daemon(binary: daemonBinary, directory: directory + "/paced", ca: directory + "/ca")
            defer { daemon.stop() }
            // Every agent sends a first batch during the warm-up (a new connection's first batch carries references).
            let run = try offered(
                daemon: daemon, names: names, contexts: contexts, generation: 0, seconds: pacedSeconds, warmUp: 12,
                stored: storedBatches(directory + "/paced/netpulse.db")
            ) { index in .paced(offset: Int64(index) * 10_000 / Int64(agentCount)) }
            print("real pace (\(agentCount) agents each sending a batch every 10 s, measured for \(pacedSeconds) s):")
            print("  agents connected            \(run.connected) of \(agentCount)")
            print("  batches acknowledged        \(Units.fixed(run.rate, decimals: 1)) /s")
            print("  counter values stored       \(Units.fixed(run.rate * Double(valuesPerBatch), decimals: 0)) /s")
            print("  ack latency p50 / p99 / max \(latencyText(run.latencies))")
            print("  netpulsed CPU               \(Units.fixed(run.cpu, decimals: 1))% of one core")
            print("  netpulsed peak RSS          \(Units.formatBytes(Double(run.rss)))")
            print("  errors from daemon          \(run.errors)\n")
        }

        // Saturated.
        // Enough for 6 million values a second through the warm-up and the measurement, twice over: the daemon
        // serves connections unevenly over a few seconds, and the measurement ends when the first agent runs dry.
        let batchesPerAgent = max(2, 2 * 6_000_000 * (seconds + 5) / (agentCount * valuesPerBatch))
        print("preparing \(agentCount) agents × \(batchesPerAgent) batches …")
        // Backdated so that the last batch ends a minute before now: none is ahead of the daemon's clock.
        let first = WallClock.system.now() / 1_000 * 1_000 - Int64(batchesPerAgent * ticksPerBatch + 60) * 1_000
        let frames = prepare(names: names, batches: batchesPerAgent, firstTick: first)
        let daemon = try Daemon(binary: daemonBinary, directory: directory + "/saturated", ca: directory + "/ca")
        defer { daemon.stop() }
        // Every agent starts sending once all are connected (the handshakes take seconds); warm up, then measure.
        let run = try offered(
            daemon: daemon, names: names, contexts: contexts, generation: 0, seconds: seconds, warmUp: 3,
            stored: storedBatches(directory + "/saturated/netpulse.db")
        ) { index in .prepared(frames[index]) }
        let batches = run.sustained
        print(
            "saturated, acknowledged after the durable journal commit (synchronous = FULL), applied with rollups (rates below: the lower of the two):"
        )
        print("  agents connected            \(run.connected) of \(agentCount)")
        print(
            "  measured for                \(Units.fixed(run.elapsed, decimals: 1)) s\(run.exhausted ? " (an agent ran out of prepared batches)" : "")"
        )
        print("  batches acknowledged        \(Units.fixed(run.rate, decimals: 0)) /s")
        print("  batches applied to store    \(run.storedRate.map { Units.fixed($0, decimals: 0) } ?? "?") /s")
        print(
            "  interface-samples stored    \(Units.fixed(batches * Double(interfaces * ticksPerBatch), decimals: 0)) /s"
        )
        print("  counter values stored       \(Units.fixed(batches * Double(valuesPerBatch), decimals: 0)) /s")
        print("  ack latency p50 / p99 / max \(latencyText(run.latencies)) (32 batches in flight per agent)")
        print(
            "  netpulsed CPU               \(Units.fixed(run.cpu, decimals: 0))% of one core (the simulated agents share the machine)"
        )
        print("  netpulsed peak RSS          \(Units.formatBytes(Double(run.rss)))")
        print("  errors from daemon          \(run.errors)")
        // What was acknowledged must be in the store.
        daemon.stop()
        let store = try SQLiteStore(path: directory + "/saturated/netpulse.db", readOnly: true)
        let stored = Int(try blocking { try await store.totals().values })
        let acknowledged = run.acknowledged * valuesPerBatch
        print(
            "  stored / acknowledged       \(stored) / \(acknowledged) values\(stored >= acknowledged ? "" : "  ← MISSING")"
        )
        print("  store size                  \(Units.formatBytes(Double(store.sizeOnDisk)))")
    }

    /// Connects agent number `agent` from a loopback address of its own (127.0.x.y), as each host of a fleet has
    /// its own: the daemon limits pending handshakes per source address.
    static func connect(
        group: MultiThreadedEventLoopGroup, port: Int, context: NIOSSLContext, agent: Int,
        _ handler: @escaping @Sendable () -> SimulatedAgent
    ) throws {
        _ = try agentBootstrap(group: group, agent: agent)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try addAgentFraming(to: channel, context: context)
                    try channel.pipeline.syncOperations.addHandler(handler())
                }
            }
            .connect(host: "127.0.0.1", port: port).wait()
    }

    /// A client bound to agent number `agent`'s own loopback address (250 agents per 127.0.x block).
    static func agentBootstrap(group: MultiThreadedEventLoopGroup, agent: Int) -> ClientBootstrap {
        ClientBootstrap(group: group)
            .bind(to: try! SocketAddress(ipAddress: "127.0.\(agent / 250 + 1).\(agent % 250 + 1)", port: 0))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
    }

    /// TLS to the daemon, then frames, as an agent's connection has them.
    static func addAgentFraming(to channel: any Channel, context: NIOSSLContext) throws {
        try channel.pipeline.syncOperations.addHandler(
            NIOSSLClientHandler(context: context, serverHostname: "netpulsed"))
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumFrameBytes: 1 << 20)))
    }

    static func latencyText(_ nanoseconds: [UInt64]) -> String {
        guard !nanoseconds.isEmpty else { return "no acknowledgements" }
        let sorted = nanoseconds.sorted()
        func at(_ percent: Int) -> String {
            let value = sorted[min(sorted.count - 1, (sorted.count * percent + 99) / 100 - 1)]
            return "\(Units.fixed(Double(value) / 1e6, decimals: 1)) ms"
        }
        return "\(at(50)) / \(at(99)) / \(at(100))"
    }

    static func waitUntil(seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw BenchError("timed out waiting for agents to connect") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

/// A process the benchmark started and stops.
protocol ChildProcess {
    var process: Process { get }
}

extension ChildProcess {
    var pid: Int32 { process.processIdentifier }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// A `netpulsed` process on a free port with its default settings and a fresh store.
final class Daemon: ChildProcess {
    let process = Process()
    let port: Int

    /// `extra` (TOML) replaces the `[daemon]` table when it has one.
    init(binary: String, directory: String, ca: String, extra: String = "") throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        try """
        \(extra.contains("[daemon]") ? "" : "[daemon]\nstate_directory = \"\(directory)\"")
        \(extra)
        [listen]
        address = "127.0.0.1:\(port)"
        [tls]
        ca = "\(ca)/ca.pem"
        certificate = "\(ca)/netpulsed.pem"
        key = "\(ca)/netpulsed-key.pem"
        [snapshots]
        enabled = false
        """.write(toFile: directory + "/netpulsed.toml", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--config", directory + "/netpulsed.toml", "--log-level", "warning"]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = log
        process.standardOutput = log
        try process.run()
        Thread.sleep(forTimeInterval: 1)
    }

    static func freePort() throws -> Int {
        let socket = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? socket.close().wait() }
        return socket.localAddress?.port ?? 17_420
    }
}

/// One simulated agent's counters and connection state: 16 interfaces, each with a mean rate of its own (from a
/// few kbit/s to about 500 Mbit/s) and every counter moving every tick, seeded by the agent's index.
struct BenchAgent: Sendable {
    let name: String
    let stream: UInt64
    let labels: Labels
    private var random: SplitMix64
    private var counters: [[UInt64]]
    private let means: [Double]
    private var sequence: UInt64 = 0
    private var references: ReferenceTable? = ReferenceTable()

    /// `generation` gives the agent a stream of its own, as a restarted agent has (the same counters otherwise).
    init(index: Int, name: String, generation: Int = 0) {
        self.name = name
        stream = UInt64(index + 1) << 32 | 0x5eed | UInt64(generation) << 16
        labels = Labels([("site", "site-\(index % 8)"), ("role", index % 3 == 0 ? "edge" : "core")])
        var random = SplitMix64(seed: UInt64(index) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        counters = (0..<IngestBench.interfaces).map { _ in
            (0..<Counter.count).map { _ in UInt64.random(in: 0...(1 << 40), using: &random) }
        }
        means = (0..<IngestBench.interfaces).map { _ in Double(1 << Int.random(in: 10...26, using: &random)) }
        self.random = random
    }

    /// HELLO, the first frame.
    var hello: ByteBuffer {
        ByteBuffer(bytes: WireCodec.encode(.hello(Hello(agentID: name, hostname: name, agentVersion: "bench"))))
    }

    /// LABELS and DESCRIBE, sent after WELCOME.
    var opening: [ByteBuffer] {
        [
            ByteBuffer(bytes: WireCodec.encode(.labels(labels))),
            ByteBuffer(bytes: WireCodec.encode(.describe(Describe(stream: stream, interfaces: descriptors)))),
        ]
    }

    var descriptors: [InterfaceDescriptor] {
        let boot = BootID(high: stream, low: 7)
        return (0..<IngestBench.interfaces).map {
            InterfaceDescriptor(
                id: UInt32($0), name: InterfaceName("eth\($0)"),
                epoch: CounterEpoch(bootID: boot, ifindex: UInt32($0 + 2), width: .bits64))
        }
    }

    /// The next batch, coded against the connection's references as the agent codes it.
    mutating func nextBatch(firstTick: Int64) -> ByteBuffer {
        let batch = nextWireBatch(firstTick: firstTick)
        return ByteBuffer(bytes: WireCodec.encode(.batch(batch), references: &references))
    }

    /// The next batch, its ticks one second apart from `firstTick` (each read a few milliseconds late, as the
    /// agent's sampler reads them).
    mutating func nextWireBatch(firstTick: Int64) -> WireBatch {
        sequence += 1
        let timestamps = (0..<IngestBench.ticksPerBatch).map {
            firstTick + Int64($0) * 1_000 + Int64.random(in: 0...3, using: &random)
        }
        var sections = [BatchSection]()
        for interface in 0..<IngestBench.interfaces {
            var values = [UInt64]()
            values.reserveCapacity(IngestBench.ticksPerBatch * Counter.count)
            for _ in 0..<IngestBench.ticksPerBatch {
                let rx = UInt64(means[interface] * Double.random(in: 0.5...1.5, using: &random))
                let tx = UInt64(Double(rx) * Double.random(in: 0.1...0.6, using: &random))
                var step = [UInt64](repeating: 0, count: Counter.count)
                step[Counter.rxBytes.rawValue] = rx
                step[Counter.rxPackets.rawValue] = rx / UInt64.random(in: 64...1_500, using: &random) + 1
                step[Counter.txBytes.rawValue] = tx
                step[Counter.txPackets.rawValue] = tx / UInt64.random(in: 64...1_500, using: &random) + 1
                for counter in 0..<Counter.count where step[counter] == 0 {
                    step[counter] = UInt64.random(in: 1...20, using: &random)
                }
                for counter in 0..<Counter.count { counters[interface][counter] &+= step[counter] }
                values += counters[interface]
            }
            sections.append(
                BatchSection(
                    descriptorID: UInt32(interface), ticks: Array(0..<IngestBench.ticksPerBatch), values: values))
        }
        return WireBatch(
            stream: stream, sequence: sequence, order: UInt64(timestamps[timestamps.count - 1]), interval: 1_000,
            heartbeat: 60_000, timestamps: timestamps, sections: sections,
            linkStates: (0..<IngestBench.interfaces).map {
                LinkStateRecord(
                    descriptorID: UInt32($0), tick: 0,
                    state: LinkState(speedMbps: 10_000, operState: .up, carrier: true, mtu: 1_500, kind: .physical))
            })
    }
}

final class Tally: Sendable {
    let acked = Atomic<Int>(0)
    let welcomed = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    private let latencies = Mutex<[UInt64]?>(nil)
    /// While measuring: per wall-clock second (Unix), the batches acknowledged after more than 25 ms and the worst.
    private let slow = Mutex<[Int64: (count: Int, worst: UInt64)]>([:])
    private let waiting = Mutex<[@Sendable () -> Void]?>([])

    /// Runs `start` once `go()` has been called (at once if it has).
    func whenGoing(_ start: @escaping @Sendable () -> Void) {
        let now = waiting.withLock { list -> Bool in
            guard list != nil else { return true }
            list!.append(start)
            return false
        }
        if now { start() }
    }

    func go() {
        let starts = waiting.withLock { list in
            defer { list = nil }
            return list ?? []
        }
        for start in starts { start() }
    }

    func startMeasuring() {
        slow.withLock { $0 = [:] }
        latencies.withLock { $0 = [] }
    }

    /// The seconds with the most batches over 25 ms while measuring, most first: to set beside the daemon's log.
    func slowestSeconds(_ count: Int) -> [(second: Int64, count: Int, worst: UInt64)] {
        slow.withLock { $0 }.map { (second: $0.key, count: $0.value.count, worst: $0.value.worst) }
            .sorted { ($0.count, $0.second) > ($1.count, $1.second) }.prefix(count).map { $0 }
    }

    func stopMeasuring() -> [UInt64] {
        latencies.withLock { list in
            defer { list = nil }
            return list ?? []
        }
    }

    func acknowledged(after nanoseconds: UInt64) {
        acked.add(1, ordering: .relaxed)
        let measuring = latencies.withLock { list -> Bool in
            list?.append(nanoseconds)
            return list != nil
        }
        if measuring, nanoseconds > 25_000_000 {
            let second = WallClock.system.now() / 1_000
            slow.withLock {
                $0[second, default: (0, 0)].count += 1; $0[second]!.worst = max($0[second]!.worst, nanoseconds)
            }
        }
    }
}

/// One simulated agent on its connection: HELLO, then LABELS and DESCRIBE after WELCOME, then its batches, keeping
/// at most the daemon's in-flight window unacknowledged; each acknowledgement's latency is measured from the write.
final class SimulatedAgent: ChannelInboundHandler {
    typealias InboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    enum Mode {
        /// Batches made in advance, sent as fast as acknowledgements allow.
        case prepared([ByteBuffer])
        /// A batch of the last 10 seconds every 10 seconds, at `offset` ms past each 10-second boundary.
        case paced(offset: Int64)
        /// Batches made in advance, one due every `period` ns from `offset` ns after `go()`: a fixed offered load.
        /// Latency counts from when a batch was due; one due while the window is full waits for an acknowledgement.
        case metered([ByteBuffer], period: UInt64, offset: UInt64)
    }

    private var agent: BenchAgent
    private let mode: Mode
    private let tally: Tally
    private var next = 0
    private var window = 1
    private var sent = [UInt64: UInt64]()
    private var sequence: UInt64 = 0
    /// Metered batches that fell due while the window was full, with when they were due.
    private var overdue = [(frame: ByteBuffer, due: UInt64)]()

    init(agent: BenchAgent, mode: Mode, tally: Tally) {
        self.agent = agent
        self.mode = mode
        self.tally = tally
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(agent.hello), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.first {
        case FrameType.welcome.rawValue:
            if case .welcome(let welcome) = try? WireCodec.decode(frame) { window = welcome.limits.maximumInFlight }
            for opening in agent.opening { context.write(wrapOutboundOut(opening), promise: nil) }
            context.flush()
            tally.welcomed.add(1, ordering: .relaxed)
            switch mode {
            case .prepared:
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                tally.whenGoing {
                    loopBound.eventLoop.execute { loopBound.value.0.fill(loopBound.value.1) }
                }
            case .paced(let offset): schedule(context, offset: offset)
            case .metered(_, let period, let offset):
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                tally.whenGoing {
                    let start = DispatchTime.now().uptimeNanoseconds + offset
                    loopBound.eventLoop.execute {
                        loopBound.value.0.meter(loopBound.value.1, start: start, period: period)
                    }
                }
            }
        case FrameType.ack.rawValue:
            if case .ack(let ack) = try? WireCodec.decode(frame), let at = sent.removeValue(forKey: ack.sequence) {
                tally.acknowledged(after: DispatchTime.now().uptimeNanoseconds - at)
            }
            if case .prepared = mode { fill(context) }
            if !overdue.isEmpty && sent.count < window {
                let (frame, due) = overdue.removeFirst()
                send(frame, context: context, due: due)
                context.flush()
            }
        case FrameType.error.rawValue:
            tally.errors.add(1, ordering: .relaxed)
            context.close(promise: nil)
        default:
            break
        }
    }

    private func send(_ frame: ByteBuffer, context: ChannelHandlerContext, due: UInt64? = nil) {
        sequence += 1
        sent[sequence] = due ?? DispatchTime.now().uptimeNanoseconds
        context.write(wrapOutboundOut(frame), promise: nil)
    }

    private func fill(_ context: ChannelHandlerContext) {
        guard case .prepared(let frames) = mode else { return }
        var wrote = false
        while sent.count < window && next < frames.count {
            send(frames[next], context: context)
            next += 1
            wrote = true
        }
        if wrote { context.flush() }
        if next == frames.count && sent.isEmpty { tally.finished.add(1, ordering: .relaxed) }
    }

    /// Sends every metered batch that is due (or queues it behind a full window), then waits for the next.
    private func meter(_ context: ChannelHandlerContext, start: UInt64, period: UInt64) {
        guard case .metered(let frames, _, _) = mode else { return }
        var wrote = false
        defer { if wrote { context.flush() } }
        while next < frames.count {
            let due = start + UInt64(next) * period
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now {
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .nanoseconds(Int64(due - now))) {
                    loopBound.value.0.meter(loopBound.value.1, start: start, period: period)
                }
                return
            }
            if sent.count < window {
                send(frames[next], context: context, due: due)
                wrote = true
            } else {
                overdue.append((frames[next], due))
            }
            next += 1
        }
        tally.finished.add(1, ordering: .relaxed)
    }

    /// Sends a batch `offset` ms after every 10-second boundary.
    private func schedule(_ context: ChannelHandlerContext, offset: Int64) {
        let now = WallClock.system.now()
        let boundary = now / 10_000 * 10_000 + offset > now ? now / 10_000 * 10_000 : (now / 10_000 + 1) * 10_000
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(boundary + offset - now)) {
            let (agent, context) = loopBound.value
            // The 10 whole-second ticks up to now, as an agent whose batch closes now has them.
            let frame = agent.agent.nextBatch(firstTick: (boundary + offset) / 1_000 * 1_000 - 9_000)
            agent.send(frame, context: context)
            context.flush()
            agent.schedule(context, offset: offset)
        }
    }
}

/// Runs an async call from synchronous benchmark code.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await body()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// CPU time and peak RSS of a process, from /proc.
struct ProcessUsage {
    var cpuSeconds: Double
    var peakRSS: Int

    init(pid: Int32) throws {
        guard let stat = ProcessStat(pid: pid) else { throw BenchError("cannot read /proc/\(pid)/stat") }
        cpuSeconds = stat.cpuSeconds
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? "VmHWM: 0 kB"
        peakRSS = (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) * 1024
    }
}
