import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PulseCertificates
import PulseCore
import PulseDaemon
import PulseStore
import Synchronization

/// Daemon ingest throughput: a real `netpulsed` process, and `agents` simulated agents in this process, each on
/// its own mutual-TLS connection with its own certificate, sending batches (16 interfaces × 10 one-second ticks,
/// as a real agent's 10-second batch) as fast as acknowledgements allow within the protocol's in-flight window.
/// Only acknowledged (durably stored) values count.
enum IngestBench {
    static let interfaces = 16
    static let ticksPerBatch = 10
    static var valuesPerBatch: Int { interfaces * ticksPerBatch * Counter.count }

    static func run(daemonBinary: String, agents agentCount: Int, seconds: Int, batchesPerAgent: Int) throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ca = try CertificateAuthority.create(directory: directory + "/ca")
        _ = try ca.issue(role: .daemon, name: "netpulsed", outputDirectory: directory + "/ca")
        let names = (0..<agentCount).map { "bench-agent-\($0)" }
        for name in names { _ = try ca.issue(role: .agent, name: name, outputDirectory: directory + "/ca") }

        let port = 17_000 + Int(getpid() % 1_000)
        try """
        [daemon]
        state_directory = "\(directory)/netpulsed"
        [listen]
        address = "127.0.0.1:\(port)"
        [tls]
        ca = "\(directory)/ca/ca.pem"
        certificate = "\(directory)/ca/netpulsed.pem"
        key = "\(directory)/ca/netpulsed-key.pem"
        """.write(toFile: directory + "/netpulsed.toml", atomically: true, encoding: .utf8)

        print("preparing \(agentCount) agents × \(batchesPerAgent) batches of \(valuesPerBatch) counter values …")
        let series = (0..<interfaces).map {
            TrafficModel.busyNoisy.samples(batchesPerAgent * ticksPerBatch, seed: UInt64($0 + 1))
        }
        let timestamps = tickTimestamps(batchesPerAgent * ticksPerBatch, start: 1_763_800_000_000, seed: 3)
        let encoded = Mutex([[ByteBuffer]](repeating: [], count: agentCount))
        DispatchQueue.concurrentPerform(iterations: agentCount) { index in
            let frames = encodeAgent(
                name: names[index], stream: UInt64(index + 1) << 32, series: series, timestamps: timestamps,
                batches: batchesPerAgent)
            encoded.withLock { $0[index] = frames }
        }
        let frames = encoded.withLock { $0 }

        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: daemonBinary)
        daemon.arguments = ["--config", directory + "/netpulsed.toml", "--log-level", "warning"]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        daemon.standardError = log
        daemon.standardOutput = log
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 1)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let tally = Tally()
        for (index, name) in names.enumerated() {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .file(directory + "/ca/ca.pem")
            configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(directory + "/ca/\(name).pem")
                .map { .certificate($0) }
            configuration.privateKey = .privateKey(
                try NIOSSLPrivateKey(file: directory + "/ca/\(name)-key.pem", format: .pem))
            let context = try NIOSSLContext(configuration: configuration)
            let agentFrames = frames[index]
            _ = try ClientBootstrap(group: group)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: context, serverHostname: "netpulsed"))
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(FrameDecoder(maximumFrameBytes: 1 << 20)))
                        try channel.pipeline.syncOperations.addHandler(
                            SimulatedAgent(frames: agentFrames, tally: tally))
                    }
                }
                .connect(host: "127.0.0.1", port: port).wait()
        }
        try waitUntil(seconds: 30) { tally.welcomed.load(ordering: .relaxed) == agentCount }
        // Warm up, then measure.
        Thread.sleep(forTimeInterval: 3)
        let usageBefore = try ProcessUsage(pid: daemon.processIdentifier)
        let ackedBefore = tally.acked.load(ordering: .relaxed)
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
        let acked = tally.acked.load(ordering: .relaxed) - ackedBefore
        let usageAfter = try ProcessUsage(pid: daemon.processIdentifier)
        let values = Double(acked) * Double(valuesPerBatch) / elapsed
        let cpu = (usageAfter.cpuSeconds - usageBefore.cpuSeconds) / elapsed
        print("ingest over TLS, acknowledged after the durable commit (synchronous=FULL):")
        print("  agents connected        \(tally.welcomed.load(ordering: .relaxed)) of \(agentCount)")
        print(
            "  measured for            \(Units.fixed(elapsed, decimals: 1)) s\(exhausted ? " (an agent ran out of prepared batches)" : "")"
        )
        print("  batches acknowledged    \(Units.fixed(Double(acked) / elapsed, decimals: 0)) /s")
        print("  counter values stored   \(Units.fixed(values, decimals: 0)) /s")
        print(
            "  netpulsed CPU           \(Units.fixed(cpu * 100, decimals: 0))% of one core (the simulated agents share the machine)"
        )
        print("  netpulsed peak RSS      \(Units.formatBytes(Double(usageAfter.peakRSS)))")
        print("  errors from daemon      \(tally.errors.load(ordering: .relaxed))")
        // Check that what was acknowledged is in the store.
        daemon.terminate()
        daemon.waitUntilExit()
        let store = try SQLiteStore(path: directory + "/netpulsed/netpulse.db", readOnly: true)
        let stored = Int(try blocking { try await store.totals().values })
        let acknowledged = tally.acked.load(ordering: .relaxed) * valuesPerBatch
        print(
            "  stored / acknowledged   \(stored) / \(acknowledged) values\(stored >= acknowledged ? "" : "  ← MISSING")"
        )
    }

    /// HELLO, DESCRIBE, then the agent's batches, each coded against the connection's references as the agent does.
    static func encodeAgent(name: String, stream: UInt64, series: [[CounterValues]], timestamps: [Int64], batches: Int)
        -> [ByteBuffer]
    {
        var frames = [ByteBuffer]()
        frames.append(
            ByteBuffer(bytes: WireCodec.encode(.hello(Hello(agentID: name, hostname: name, agentVersion: "bench")))))
        let boot = BootID(high: stream, low: 7)
        let descriptors = (0..<interfaces).map {
            InterfaceDescriptor(
                id: UInt32($0), name: InterfaceName("eth\($0)"),
                epoch: CounterEpoch(bootID: boot, ifindex: UInt32($0 + 2), width: .bits64))
        }
        frames.append(ByteBuffer(bytes: WireCodec.encode(.describe(Describe(stream: stream, interfaces: descriptors)))))
        var references: ReferenceTable? = ReferenceTable()
        for batch in 0..<batches {
            let range = batch * ticksPerBatch..<(batch + 1) * ticksPerBatch
            let sections = series.enumerated().map { index, samples in
                BatchSection(
                    descriptorID: UInt32(index), ticks: Array(0..<ticksPerBatch),
                    values: samples[range].flatMap(\.values))
            }
            let frame = WireBatch(
                stream: stream, sequence: UInt64(batch + 1), timestamps: Array(timestamps[range]), sections: sections)
            frames.append(ByteBuffer(bytes: WireCodec.encode(.batch(frame), references: &references)))
        }
        return frames
    }

    static func waitUntil(seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw BenchError("timed out waiting for agents to connect") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

final class Tally: Sendable {
    let acked = Atomic<Int>(0)
    let welcomed = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
}

/// One simulated agent: keeps `maximumInFlight` batches unacknowledged, sending the next on every ACK.
final class SimulatedAgent: ChannelInboundHandler {
    typealias InboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    private let frames: [ByteBuffer]
    private let tally: Tally
    private var next = 2
    private var inFlight = 0
    private var window = 1

    init(frames: [ByteBuffer], tally: Tally) {
        self.frames = frames
        self.tally = tally
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frames[0]), promise: nil)
        context.writeAndFlush(wrapOutboundOut(frames[1]), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.first {
        case FrameType.welcome.rawValue:
            if case .welcome(let welcome) = try? WireCodec.decode(frame) { window = welcome.limits.maximumInFlight }
            tally.welcomed.add(1, ordering: .relaxed)
            fill(context)
        case FrameType.ack.rawValue:
            inFlight -= 1
            tally.acked.add(1, ordering: .relaxed)
            fill(context)
        case FrameType.error.rawValue:
            tally.errors.add(1, ordering: .relaxed)
            context.close(promise: nil)
        default:
            break
        }
    }

    private func fill(_ context: ChannelHandlerContext) {
        var wrote = false
        while inFlight < window && next < frames.count {
            context.write(wrapOutboundOut(frames[next]), promise: nil)
            next += 1
            inFlight += 1
            wrote = true
        }
        if wrote { context.flush() }
        if next == frames.count && inFlight == 0 { tally.finished.add(1, ordering: .relaxed) }
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
