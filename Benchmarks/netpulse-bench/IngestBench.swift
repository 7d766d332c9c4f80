import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PulseCertificates
import PulseCore
import PulseDaemon
import PulseStore
import Synchronization

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
    static func certificates(agents agentCount: Int, directory: String) throws -> ([String], [NIOSSLContext]) {
        print("issuing \(agentCount) agent certificates …")
        let ca = try CertificateAuthority.create(directory: directory + "/ca")
        _ = try ca.issue(role: .daemon, name: "netpulsed", outputDirectory: directory + "/ca")
        let names = (0..<agentCount).map { "bench-agent-\($0)" }
        for name in names { _ = try ca.issue(role: .agent, name: name, outputDirectory: directory + "/ca") }
        let contexts = try names.map { name in
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .file(directory + "/ca/ca.pem")
            configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(directory + "/ca/\(name).pem")
                .map { .certificate($0) }
            configuration.privateKey = .privateKey(
                try NIOSSLPrivateKey(file: directory + "/ca/\(name)-key.pem", format: .pem))
            return try NIOSSLContext(configuration: configuration)
        }
        return (names, contexts)
    }

    /// Agents at the real pace against `daemon` for `seconds`: the acknowledgement latencies, the daemon's CPU
    /// share of one core, its peak RSS, the batches acknowledged per second and the errors.
    static func paced(
        daemon: Daemon, names: [String], contexts: [NIOSSLContext], seconds: Int
    ) throws -> (latencies: [UInt64], cpu: Double, rss: Int, rate: Double, connected: Int, errors: Int) {
        let agentCount = names.count
        let tally = Tally()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        for index in 0..<agentCount {
            let agent = BenchAgent(index: index, name: names[index])
            try connect(group: group, port: daemon.port, context: contexts[index]) {
                SimulatedAgent(
                    agent: agent, mode: .paced(offset: Int64(index) * 10_000 / Int64(agentCount)), tally: tally)
            }
        }
        try waitUntil(seconds: 60) { tally.welcomed.load(ordering: .relaxed) == agentCount }
        // Let every agent send a first batch (a new connection's first batch carries references), then measure.
        Thread.sleep(forTimeInterval: 12)
        tally.startMeasuring()
        let usageBefore = try ProcessUsage(pid: daemon.pid)
        let start = Date()
        Thread.sleep(forTimeInterval: Double(seconds))
        let elapsed = Date().timeIntervalSince(start)
        let usageAfter = try ProcessUsage(pid: daemon.pid)
        let latencies = tally.stopMeasuring()
        return (
            latencies, (usageAfter.cpuSeconds - usageBefore.cpuSeconds) / elapsed * 100, usageAfter.peakRSS,
            Double(latencies.count) / elapsed, tally.welcomed.load(ordering: .relaxed),
            tally.errors.load(ordering: .relaxed)
        )
    }

    /// Acknowledgement latency at the real pace against a daemon on a large store (one made by `query-store`),
    /// first with its dashboards off, then drawing the fleet overview for every range every 10 seconds (host pages
    /// off: 625 of them every 10 s is more drawing than two cores do), side by side.
    static func renderImpact(daemonBinary: String, store: String, agents agentCount: Int, seconds: Int) throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-render-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (names, contexts) = try certificates(agents: agentCount, directory: directory)
        print(
            "ack latency at the real pace (\(agentCount) agents × \(interfaces) interfaces, 1 Hz, a batch every 10 s each) against netpulsed on the bulk-loaded store, measured for \(seconds) s each:"
        )
        for drawing in [false, true] {
            let dashboards =
                drawing
                ? "[dashboards]\nhost_pages = false\nhour_interval = \"10s\"\nday_interval = \"10s\"\nweek_interval = \"10s\"\nmonth_interval = \"10s\"\nkeep = 100\n"
                : "[dashboards]\nenabled = false\n"
            let daemon = try Daemon(
                binary: daemonBinary, directory: directory + "/run-\(drawing)", ca: directory + "/ca",
                extra:
                    "[daemon]\nstate_directory = \"\(store)/netpulsed\"\n[rollups]\nlevels = [\"5m\", \"1h\", \"1d\"]\n"
                    + dashboards)
            defer { daemon.stop() }
            let run = try paced(daemon: daemon, names: names, contexts: contexts, seconds: seconds)
            let drawn =
                drawing
                ? (try? FileManager.default.contentsOfDirectory(atPath: store + "/netpulsed/dashboards"))?.filter {
                    $0.hasSuffix(".svg") && !$0.contains("latest")
                }.count ?? 0 : 0
            print(
                "  \(drawing ? "fleet overview, all ranges every 10 s" : "dashboards off                       ")  p50 / p99 / max \(latencyText(run.latencies)), \(Units.fixed(run.rate, decimals: 1)) batches/s, netpulsed CPU \(Units.fixed(run.cpu, decimals: 1))% of a core\(drawing ? ", \(drawn) SVGs kept on disk" : "")"
            )
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
            let run = try paced(daemon: daemon, names: names, contexts: contexts, seconds: pacedSeconds)
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
        let encoded = Mutex([[ByteBuffer]](repeating: [], count: agentCount))
        // Backdated so that the last batch ends a minute before now: none is ahead of the daemon's clock.
        let first = WallClock.milliseconds() / 1_000 * 1_000 - Int64(batchesPerAgent * ticksPerBatch + 60) * 1_000
        DispatchQueue.concurrentPerform(iterations: agentCount) { index in
            var agent = BenchAgent(index: index, name: names[index])
            var frames = [ByteBuffer]()
            for batch in 0..<batchesPerAgent {
                frames.append(agent.nextBatch(firstTick: first + Int64(batch * ticksPerBatch) * 1_000))
            }
            encoded.withLock { $0[index] = frames }
        }
        let frames = encoded.withLock { $0 }
        let daemon = try Daemon(binary: daemonBinary, directory: directory + "/saturated", ca: directory + "/ca")
        defer { daemon.stop() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let tally = Tally()
        for index in 0..<agentCount {
            let agent = BenchAgent(index: index, name: names[index])
            let prepared = frames[index]
            try connect(group: group, port: daemon.port, context: contexts[index]) {
                SimulatedAgent(agent: agent, mode: .prepared(prepared), tally: tally)
            }
        }
        try waitUntil(seconds: 60) { tally.welcomed.load(ordering: .relaxed) == agentCount }
        // Every agent starts sending once all are connected (the handshakes take seconds); warm up, then measure.
        tally.go()
        Thread.sleep(forTimeInterval: 3)
        tally.startMeasuring()
        let usageBefore = try ProcessUsage(pid: daemon.pid)
        let start = Date()
        var exhausted = false
        while Date().timeIntervalSince(start) < Double(seconds) {
            Thread.sleep(forTimeInterval: 0.25)
            if tally.finished.load(ordering: .relaxed) > 0 {
                exhausted = true
                break
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        let latencies = tally.stopMeasuring()
        let usageAfter = try ProcessUsage(pid: daemon.pid)
        let batches = Double(latencies.count) / elapsed
        print("saturated, acknowledged after the durable commit (synchronous = FULL), rollups maintained:")
        print("  agents connected            \(tally.welcomed.load(ordering: .relaxed)) of \(agentCount)")
        print(
            "  measured for                \(Units.fixed(elapsed, decimals: 1)) s\(exhausted ? " (an agent ran out of prepared batches)" : "")"
        )
        print("  batches acknowledged        \(Units.fixed(batches, decimals: 0)) /s")
        print(
            "  interface-samples stored    \(Units.fixed(batches * Double(interfaces * ticksPerBatch), decimals: 0)) /s"
        )
        print("  counter values stored       \(Units.fixed(batches * Double(valuesPerBatch), decimals: 0)) /s")
        print("  ack latency p50 / p99 / max \(latencyText(latencies)) (32 batches in flight per agent)")
        print(
            "  netpulsed CPU               \(Units.fixed((usageAfter.cpuSeconds - usageBefore.cpuSeconds) / elapsed * 100, decimals: 0))% of one core (the simulated agents share the machine)"
        )
        print("  netpulsed peak RSS          \(Units.formatBytes(Double(usageAfter.peakRSS)))")
        print("  errors from daemon          \(tally.errors.load(ordering: .relaxed))")
        // What was acknowledged must be in the store.
        daemon.stop()
        let store = try SQLiteStore(path: directory + "/saturated/netpulse.db", readOnly: true)
        let stored = Int(try blocking { try await store.totals().values })
        let acknowledged = tally.acked.load(ordering: .relaxed) * valuesPerBatch
        print(
            "  stored / acknowledged       \(stored) / \(acknowledged) values\(stored >= acknowledged ? "" : "  ← MISSING")"
        )
        print("  store size                  \(Units.formatBytes(Double(store.sizeOnDisk)))")
    }

    static func connect(
        group: MultiThreadedEventLoopGroup, port: Int, context: NIOSSLContext,
        _ handler: @escaping @Sendable () -> SimulatedAgent
    ) throws {
        _ = try ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: "netpulsed"))
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(FrameDecoder(maximumFrameBytes: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(handler())
                }
            }
            .connect(host: "127.0.0.1", port: port).wait()
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

/// A `netpulsed` process on a free port with its default settings and a fresh store.
final class Daemon {
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

    var pid: Int32 { process.processIdentifier }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
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

    init(index: Int, name: String) {
        self.name = name
        stream = UInt64(index + 1) << 32 | 0x5eed
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

    func startMeasuring() { latencies.withLock { $0 = [] } }

    func stopMeasuring() -> [UInt64] {
        latencies.withLock { list in
            defer { list = nil }
            return list ?? []
        }
    }

    func acknowledged(after nanoseconds: UInt64) {
        acked.add(1, ordering: .relaxed)
        latencies.withLock { $0?.append(nanoseconds) }
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
    }

    private var agent: BenchAgent
    private let mode: Mode
    private let tally: Tally
    private var next = 0
    private var window = 1
    private var sent = [UInt64: UInt64]()
    private var sequence: UInt64 = 0

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
            }
        case FrameType.ack.rawValue:
            if case .ack(let ack) = try? WireCodec.decode(frame), let at = sent.removeValue(forKey: ack.sequence) {
                tally.acknowledged(after: DispatchTime.now().uptimeNanoseconds - at)
            }
            if case .prepared = mode { fill(context) }
        case FrameType.error.rawValue:
            tally.errors.add(1, ordering: .relaxed)
            context.close(promise: nil)
        default:
            break
        }
    }

    private func send(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        sequence += 1
        sent[sequence] = DispatchTime.now().uptimeNanoseconds
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

    /// Sends a batch `offset` ms after every 10-second boundary.
    private func schedule(_ context: ChannelHandlerContext, offset: Int64) {
        let now = WallClock.milliseconds()
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
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name (which is in parentheses and may hold spaces).
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        cpuSeconds = (Double(fields[11])! + Double(fields[12])!) / ticks
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? "VmHWM: 0 kB"
        peakRSS = (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) * 1024
    }
}
