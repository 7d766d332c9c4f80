import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import PulseCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Connections rather than throughput, against a real `netpulsed` with its default limits:
///
/// 1. **held**: `connections` agents, each with its own certificate and from one of 250 loopback addresses per
///    thousand, connect (in waves of 500) and say `HELLO`; once all are welcomed, the daemon's resident memory
///    beyond what it had before they came, per connection.
/// 2. **reconnect storm**: every connection is dropped at once and every agent reconnects at once, as after a
///    network outage; refused ones (over `max_handshakes`) retry after a jittered 0.5–1.5 s, like an agent's
///    back-off. Reported: the time until all are welcomed again, refusals, handshakes the daemon timed out, and
///    full mutual-TLS handshakes per second and per second of the daemon's CPU.
/// 3. **openssl s_server** (OpenSSL 3, one process, one thread) doing the same handshake (TLS 1.3, ECDSA P-256,
///    client certificate required and verified) for a storm of as many clients, timed the same way: the peer
///    figure per second of CPU.
///
/// The clients run in this process on the same two cores, so the daemon's handshakes per second of wall time are
/// bounded by the machine, not by the daemon alone; per second of the server's own CPU is the comparable figure.
enum ConnectionBench {
    static func run(daemonBinary: String, connections: Int) throws {
        raiseFileLimit()
        let directory = NSTemporaryDirectory() + "netpulse-bench-connections-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (names, contexts) = try IngestBench.certificates(
            agents: connections, directory: directory, prefix: "conn-agent")
        let daemon = try Daemon(binary: daemonBinary, directory: directory + "/daemon", ca: directory + "/ca")
        defer { daemon.stop() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        Thread.sleep(forTimeInterval: 2)
        let before = residentBytes(daemon.pid)

        // 1. Held.
        let tally = ConnectionTally()
        var channels = [any Channel]()
        for wave in stride(from: 0, to: connections, by: 500) {
            let end = min(connections, wave + 500)
            let futures = (wave..<end).map { index in
                connect(
                    group: group, port: daemon.port, context: contexts[index], name: names[index], index: index,
                    tally: tally, retry: false)
            }
            for future in futures { channels.append(try future.wait()) }
            try IngestBench.waitUntil(seconds: 60) { tally.welcomed.load(ordering: .relaxed) >= end }
        }
        Thread.sleep(forTimeInterval: 3)
        let held = residentBytes(daemon.pid)
        print("\(connections) agent connections held (each its own certificate, past HELLO):")
        print(
            "  netpulsed resident before / with them  \(Units.formatBytes(Double(before))) / \(Units.formatBytes(Double(held)))"
        )
        print(
            "  per connection                         \(Units.formatBytes(Double(held - before) / Double(connections)))"
        )
        print("  refused while connecting in waves      \(tally.refused.load(ordering: .relaxed))\n")

        // 2. Reconnect storm.
        for channel in channels { channel.close(promise: nil) }
        channels.removeAll()
        Thread.sleep(forTimeInterval: 3)
        let storm = ConnectionTally()
        let cpuBefore = try ProcessUsage(pid: daemon.pid).cpuSeconds
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<connections {
            _ = connect(
                group: group, port: daemon.port, context: contexts[index], name: names[index], index: index,
                tally: storm, retry: true)
        }
        try IngestBench.waitUntil(seconds: 300) { storm.welcomed.load(ordering: .relaxed) >= connections }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let cpu = try ProcessUsage(pid: daemon.pid).cpuSeconds - cpuBefore
        print("reconnect storm: all \(connections) drop and reconnect at once (refused ones retry after 0.5–1.5 s):")
        print("  all welcomed again after               \(Units.fixed(elapsed, decimals: 1)) s")
        print("  refused at accept (max_handshakes)     \(storm.refused.load(ordering: .relaxed))")
        print("  handshakes the daemon timed out        \(storm.timedOut.load(ordering: .relaxed))")
        print("  handshakes per second                  \(Units.fixed(Double(connections) / elapsed, decimals: 0))")
        print("  netpulsed CPU                          \(Units.fixed(cpu, decimals: 1)) s")
        print("  handshakes per second of its CPU       \(Units.fixed(Double(connections) / cpu, decimals: 0))\n")

        // 3. openssl s_server, the same handshakes.
        let peer = try OpenSSLServer(ca: directory + "/ca")
        defer { peer.stop() }
        let peerTally = ConnectionTally()
        let peerCPUBefore = try ProcessUsage(pid: peer.pid).cpuSeconds
        let peerStart = DispatchTime.now().uptimeNanoseconds
        let peerCount = min(connections, 2_000)
        for index in 0..<peerCount {
            _ = handshakeOnly(group: group, port: peer.port, context: contexts[index], index: index, tally: peerTally)
        }
        try IngestBench.waitUntil(seconds: 300) {
            peerTally.welcomed.load(ordering: .relaxed) + peerTally.refused.load(ordering: .relaxed) >= peerCount
        }
        let peerElapsed = Double(DispatchTime.now().uptimeNanoseconds - peerStart) / 1e9
        let peerCPU = try ProcessUsage(pid: peer.pid).cpuSeconds - peerCPUBefore
        let done = peerTally.welcomed.load(ordering: .relaxed)
        print("openssl s_server (one thread), a storm of \(peerCount) clients doing the same mutual-TLS handshake:")
        print("  handshakes completed / failed          \(done) / \(peerTally.refused.load(ordering: .relaxed))")
        print("  handshakes per second                  \(Units.fixed(Double(done) / peerElapsed, decimals: 0))")
        print("  s_server CPU                           \(Units.fixed(peerCPU, decimals: 1)) s")
        print("  handshakes per second of its CPU       \(Units.fixed(Double(done) / peerCPU, decimals: 0))")
    }

    /// A connection that says `HELLO`; with `retry`, one closed before its `WELCOME` (refused at accept, or timed
    /// out) connects again after a jittered 0.5–1.5 s.
    static func connect(
        group: MultiThreadedEventLoopGroup, port: Int, context: NIOSSLContext, name: String, index: Int,
        tally: ConnectionTally, retry: Bool
    ) -> EventLoopFuture<any Channel> {
        let hello = ByteBuffer(
            bytes: WireCodec.encode(.hello(Hello(agentID: name, hostname: name, agentVersion: "bench"))))
        let again: @Sendable () -> Void = {
            let delay = Int64.random(in: 500...1_500)
            group.next().scheduleTask(in: .milliseconds(delay)) {
                _ = connect(
                    group: group, port: port, context: context, name: name, index: index, tally: tally, retry: retry)
            }
        }
        return bootstrap(group: group, index: index)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try IngestBench.addAgentFraming(to: channel, context: context)
                    try channel.pipeline.syncOperations.addHandler(
                        HelloClient(hello: hello, tally: tally, onLost: retry ? again : nil))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .map { $0 as any Channel }
    }

    /// A connection that completes the TLS handshake and closes (for `openssl s_server`).
    static func handshakeOnly(
        group: MultiThreadedEventLoopGroup, port: Int, context: NIOSSLContext, index: Int, tally: ConnectionTally
    ) -> EventLoopFuture<any Channel> {
        bootstrap(group: group, index: index)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: "netpulsed"))
                    try channel.pipeline.syncOperations.addHandler(HandshakeCounter(tally: tally))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .map { $0 as any Channel }
    }

    /// From a loopback address of the client's own (``IngestBench/agentBootstrap(group:agent:)``), waiting longer
    /// to connect than NIO's default: a storm fills the daemon's accept queue.
    static func bootstrap(group: MultiThreadedEventLoopGroup, index: Int) -> ClientBootstrap {
        IngestBench.agentBootstrap(group: group, agent: index).connectTimeout(.seconds(30))
    }

    static func residentBytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? "VmRSS: 0 kB"
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) * 1024
    }

    /// Two descriptors per connection (the client's and the daemon's, which inherits the limit) and then some.
    static func raiseFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

final class ConnectionTally: Sendable {
    let welcomed = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let timedOut = Atomic<Int>(0)
}

/// Says `HELLO` once TLS is up and counts the `WELCOME`; a connection lost before it is counted and handed to
/// `onLost` (a retry).
final class HelloClient: ChannelInboundHandler {
    typealias InboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    private let hello: ByteBuffer
    private let tally: ConnectionTally
    private let onLost: (@Sendable () -> Void)?
    private var welcomed = false
    private var timedOut = false

    init(hello: ByteBuffer, tally: ConnectionTally, onLost: (@Sendable () -> Void)?) {
        self.hello = hello
        self.tally = tally
        self.onLost = onLost
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(hello), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.first == FrameType.welcome.rawValue && !welcomed {
            welcomed = true
            tally.welcomed.add(1, ordering: .relaxed)
        } else if case .error(let error)? = try? WireCodec.decode(frame), error.code == .timeout {
            timedOut = true
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !welcomed {
            if timedOut { tally.timedOut.add(1, ordering: .relaxed) } else { tally.refused.add(1, ordering: .relaxed) }
            onLost?()
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Counts a completed TLS handshake and closes; a connection that fails first is counted as refused.
final class HandshakeCounter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let tally: ConnectionTally
    private var done = false

    init(tally: ConnectionTally) { self.tally = tally }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event, !done {
            done = true
            tally.welcomed.add(1, ordering: .relaxed)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            tally.refused.add(1, ordering: .relaxed)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// `openssl s_server` on a free port with the daemon's certificate, requiring and verifying a client certificate
/// from the same CA; `-www` answers connections without reading its standard input.
final class OpenSSLServer: ChildProcess {
    let process = Process()
    let port: Int

    init(ca: String) throws {
        port = try Daemon.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", ca + "/netpulsed.pem", "-key",
            ca + "/netpulsed-key.pem",
            "-CAfile", ca + "/ca.pem", "-Verify", "1", "-verify_return_error", "-tls1_3", "-www", "-quiet",
        ]
        let null = FileHandle(forWritingAtPath: "/dev/null")
        process.standardOutput = null
        process.standardError = null
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        Thread.sleep(forTimeInterval: 1)
    }
}
