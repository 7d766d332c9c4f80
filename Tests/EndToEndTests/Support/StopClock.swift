import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

extension Daemonized {
    /// Sends `signal` and measures how long the process takes to exit, read from `/proc` every 5 ms (so the figure
    /// does not depend on when Foundation reaps the child). Nil when it still runs after `limit`: it is then killed.
    func timeToExit(after signal: Int32, limit: Duration = .seconds(6)) -> Duration? {
        let started = ContinuousClock.now
        self.signal(signal)
        return waitForExit(since: started, limit: limit)
    }

    /// How long since `since` the process took to exit (see ``timeToExit(after:limit:)``).
    func waitForExit(since started: ContinuousClock.Instant, limit: Duration = .seconds(6)) -> Duration? {
        while ContinuousClock.now - started < limit {
            if hasExited { return ContinuousClock.now - started }
            usleep(5_000)
        }
        if hasExited { return ContinuousClock.now - started }
        killHard()
        return nil
    }

    /// Whether the process has ended (a zombie not yet reaped counts as ended).
    var hasExited: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // The state follows the command name, which is in parentheses and may hold anything.
        guard let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state == "Z" || state == "X"
    }
}

/// A port that is listened on and never accepted from: the kernel completes TCP handshakes into the backlog, so a
/// client connects, sends its TLS ClientHello and waits for an answer that never comes (mid-handshake).
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32

    /// - Parameter backlog: 0 fills after one connection: the kernel then drops SYNs, so a connect stays pending
    ///   until the client gives up (a daemon host that went dark).
    init(backlog: Int32 = 64) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            close(descriptor)
            throw CommandFailure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A listener whose accept queue is full: one connection of its own sits in the backlog, and the kernel drops every
/// later SYN, so a client's connect stays pending (a daemon host that stopped answering).
final class BlackHole: @unchecked Sendable {
    private let listener: SilentListener
    private let filler: TCPProbe
    var port: Int { listener.port }

    init() throws {
        listener = try SilentListener(backlog: 0)
        filler = try TCPProbe(port: listener.port)
    }
}

/// A TCP relay between an agent and a daemon that can freeze: from then on it forwards nothing in either direction
/// and closes nothing, as a network path does when the far host stops answering without a reset.
final class FreezingRelay: @unchecked Sendable {
    let port: Int
    private let frozen: NIOLockedValueBox<Bool>
    private let server: any Channel

    init(to targetPort: Int) throws {
        let frozen = NIOLockedValueBox(false)
        self.frozen = frozen
        server = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMapThrowing { outbound in
                        try inbound.pipeline.syncOperations.addHandler(Forwarder(to: outbound, frozen: frozen))
                        try outbound.pipeline.syncOperations.addHandler(Forwarder(to: inbound, frozen: frozen))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = server.localAddress?.port ?? 0
    }

    /// Stops forwarding for good (connections stay open).
    func freeze() { frozen.withLockedValue { $0 = true } }

    deinit { server.close(promise: nil) }

    private final class Forwarder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let partner: any Channel
        let frozen: NIOLockedValueBox<Bool>

        init(to partner: any Channel, frozen: NIOLockedValueBox<Bool>) {
            self.partner = partner
            self.frozen = frozen
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !frozen.withLockedValue({ $0 }) else { return }
            partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !frozen.withLockedValue({ $0 }) { partner.close(promise: nil) }
            context.fireChannelInactive()
        }
    }
}

/// One stop of one process: what state it was in, and how long it took to exit after its SIGTERM.
struct StopSample: Sendable, CustomStringConvertible {
    var program: String
    var scenario: String
    var slot: Int
    var cycle: Int
    /// Nil when it did not exit within the limit (and was killed).
    var seconds: Double?
    var logTail: String
    /// How long the whole cycle took (starting, waiting for the state, stopping).
    var cycleSeconds = 0.0

    var description: String {
        "\(program) slot \(slot) cycle \(cycle) (\(scenario)): \(seconds.map { String(format: "%.3f s", $0) } ?? "still running, killed")\n\(logTail)"
    }
}

/// Stop times from many slots at once.
final class StopRecord: Sendable {
    private let samples = NIOLockedValueBox<[StopSample]>([])
    private let failures = NIOLockedValueBox<[String]>([])

    func add(_ sample: StopSample) { samples.withLockedValue { $0.append(sample) } }
    func fail(_ why: String) { failures.withLockedValue { $0.append(why) } }
    var all: [StopSample] { samples.withLockedValue { $0 } }
    var problems: [String] { failures.withLockedValue { $0 } }

    /// Runs `body(slot)` for every slot on a thread of its own (the slots sleep and wait on processes, which would
    /// starve the cooperative pool), and returns when all are done.
    static func inParallel(slots: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        for slot in 0..<slots {
            done.enter()
            let thread = Thread {
                body(slot)
                done.leave()
            }
            thread.start()
        }
        done.wait()
    }

    /// "n stops, median, max" for one program, then the same by state.
    func summary(_ program: String) -> String {
        let samples = all.filter { $0.program == program }
        func line(_ label: String, _ group: [StopSample]) -> String {
            let times = group.map { $0.seconds ?? .infinity }.sorted()
            let cycle = group.map(\.cycleSeconds).reduce(0, +) / Double(group.count)
            return String(
                format: "%@: %d stops, median %.3f s, max %.3f s (cycles of %.1f s)", label, times.count,
                times[times.count / 2], times.last!, cycle)
        }
        guard !samples.isEmpty else { return "\(program): no stops" }
        let states = Dictionary(grouping: samples, by: \.scenario).sorted { $0.key < $1.key }
        return ([line(program, samples)] + states.map { "  " + line($0.key, $0.value) }).joined(separator: "\n")
    }
}
