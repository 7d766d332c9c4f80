import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import PulseCore
import Synchronization

/// The connections open right now: for the connection and handshake limits, status lines and `PACE` broadcasts.
///
/// A connection counts as a handshake from when it is accepted until its `HELLO` is taken (or it closes). Those
/// have limits of their own, in all, per source network (an IPv4 /24, an IPv6 /64: ``ConnectionSource``) and per
/// source address, apart from `max_connections`: clients that open connections and never finish a handshake can
/// hold only those slots, and one flooding network (or address) only its share, while agents from elsewhere keep
/// connecting. Each slot is freed at the latest by the handshake timeout.
public final class ConnectionRegistry: Sendable {
    private struct State {
        /// Connections past `HELLO`.
        var channels: [ObjectIdentifier: any Channel] = [:]
        var open = 0
        /// Connections before `HELLO`, with their source, and how many each address and each network has.
        var handshaking: [ObjectIdentifier: ConnectionSource] = [:]
        var handshakesFrom: [String: Int] = [:]
        var handshakesFromNetwork: [String: Int] = [:]
        var pace: Pace = .normal
        /// Refusals since the last line logged about them, by reason; when that line was logged.
        var refusals: [String: Int] = [:]
        var refusalsLogged: NIODeadline?
        /// Each agent's connections past `HELLO`, oldest first, and whose each is.
        var byAgent: [String: [ObjectIdentifier]] = [:]
        var agentOf: [ObjectIdentifier: String] = [:]
        /// When each connection's client certificate expires (Unix seconds).
        var notAfterOf: [ObjectIdentifier: Int64] = [:]

        mutating func leaveHandshake(_ id: ObjectIdentifier) {
            guard let source = handshaking.removeValue(forKey: id) else { return }
            let left = (handshakesFrom[source.address] ?? 1) - 1
            handshakesFrom[source.address] = left > 0 ? left : nil
            let leftInNetwork = (handshakesFromNetwork[source.network] ?? 1) - 1
            handshakesFromNetwork[source.network] = leftInNetwork > 0 ? leftInNetwork : nil
        }
    }
    private let state = NIOLockedValueBox(State())
    /// Batches refused for good (`REJECT`) since the daemon started.
    let rejectedBatches = Atomic<Int64>(0)
    /// Refusals because an agent went over one of its limits.
    public let limitRefusals = LimitRefusals()

    /// The limits ``admit(_:source:limits:)`` enforces.
    struct Limits: Sendable {
        var connections: Int
        var handshakes: Int
        var handshakesPerAddress: Int
        var handshakesPerNetwork: Int
        /// What makes a network for ``handshakesPerNetwork``.
        var prefixes = ConnectionSource.Prefixes()
    }

    public init() {}

    /// Connections accepted and not closed yet (including ones still in their handshake).
    public var openConnections: Int { state.withLockedValue { $0.open } }
    /// Connections past `HELLO`.
    public var agentCount: Int { state.withLockedValue { $0.channels.count } }
    /// Connections accepted and not yet past `HELLO`.
    public var handshakeCount: Int { state.withLockedValue { $0.handshaking.count } }
    public var currentPace: Pace? { state.withLockedValue { $0.pace } }

    /// Counts a new connection from `source`, in its handshake, unless that would exceed a limit: then returns
    /// why it is refused (the limit, whom it held back and the setting).
    func admit(_ channel: any Channel, source: ConnectionSource, limits: Limits) -> String? {
        admit(ObjectIdentifier(channel), source: source, limits: limits)
    }

    /// ``admit(_:source:limits:)`` for the connection known by `connection` (its channel's identity).
    func admit(_ connection: ObjectIdentifier, source: ConnectionSource, limits: Limits) -> String? {
        state.withLockedValue { state in
            guard state.open < limits.connections else {
                return "\(limits.connections) connections open ([listen] max_connections)"
            }
            guard state.handshaking.count < limits.handshakes else {
                return "\(limits.handshakes) handshakes pending ([listen] max_handshakes)"
            }
            guard state.handshakesFrom[source.address, default: 0] < limits.handshakesPerAddress else {
                return
                    "\(limits.handshakesPerAddress) handshakes pending from \(source.address) ([listen] max_handshakes_per_address)"
            }
            guard state.handshakesFromNetwork[source.network, default: 0] < limits.handshakesPerNetwork else {
                return
                    "\(limits.handshakesPerNetwork) handshakes pending from \(source.network) ([listen] max_handshakes_per_network)"
            }
            state.open += 1
            state.handshaking[connection] = source
            state.handshakesFrom[source.address, default: 0] += 1
            state.handshakesFromNetwork[source.network, default: 0] += 1
            return nil
        }
    }

    /// Records a refused connection; returns the line to log, at most one every `every` (the first at once), which
    /// sums up the refusals since the last one: a flood of thousands of connections makes a few lines, not
    /// thousands.
    func refused(because reason: String, now: NIODeadline = .now(), every: TimeAmount = .seconds(10)) -> String? {
        state.withLockedValue { state in
            state.refusals[reason, default: 0] += 1
            if let logged = state.refusalsLogged, now - logged < every { return nil }
            state.refusalsLogged = now
            defer { state.refusals.removeAll() }
            let total = state.refusals.values.reduce(0, +)
            let reasons = state.refusals.sorted { $0.value > $1.value }
            var parts = reasons.prefix(5).map { "\($0.value) with \($0.key)" }
            if reasons.count > 5 { parts.append("\(reasons.count - 5) other reason(s)") }
            let span =
                state.refusals.count == 1 && total == 1 ? "" : " in the last \(every.nanoseconds / 1_000_000_000) s"
            return "refused \(total) connection(s)\(span): \(parts.joined(separator: "; "))"
        }
    }

    /// Closes each connection past `HELLO` whose client certificate (DER) `refuse` gives a reason for, saying so
    /// through `closed` (the agent and the reason): a certificate revoked by a reload is refused at the next
    /// handshake, and its connections open now must not carry on. Each certificate is read on its connection's
    /// event loop; what the agent sent and was not acknowledged it sends again, and is refused.
    func closeConnections(
        refusing refuse: @escaping @Sendable ([UInt8]) -> String?, closed: @escaping @Sendable (String, String) -> Void
    ) {
        let open = state.withLockedValue { state in
            state.channels.map { (channel: $0.value, agent: state.agentOf[$0.key] ?? "?") }
        }
        for (channel, agent) in open {
            channel.eventLoop.execute {
                guard
                    let handler = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
                    let der = try? handler.peerCertificate?.toDERBytes(), let reason = refuse(der)
                else { return }
                closed(agent, reason)
                channel.close(promise: nil)
            }
        }
    }

    /// A connection closed: its slot, and its handshake slot if it never said `HELLO`, are free again.
    func release(_ channel: any Channel) { release(ObjectIdentifier(channel)) }

    func release(_ connection: ObjectIdentifier) {
        state.withLockedValue { state in
            state.open -= 1
            state.channels.removeValue(forKey: connection)
            state.leaveHandshake(connection)
            state.notAfterOf.removeValue(forKey: connection)
            if let agent = state.agentOf.removeValue(forKey: connection) {
                state.byAgent[agent]?.removeAll { $0 == connection }
                if state.byAgent[agent]?.isEmpty == true { state.byAgent[agent] = nil }
            }
        }
    }

    /// A connection's `HELLO` was taken: it is `agent`'s now, no longer a handshake. Returns the agent's
    /// connections beyond `limit` (`[limits] connections_per_agent`), oldest first, for the caller to close: the newest
    /// stays, since an agent that reconnects after its link died silently must not wait for the idle timeout.
    func add(_ channel: any Channel, agent: String, limit: Int, certificateNotAfter: Int64? = nil) -> [any Channel] {
        state.withLockedValue { state in
            let id = ObjectIdentifier(channel)
            state.channels[id] = channel
            state.leaveHandshake(id)
            state.agentOf[id] = agent
            state.notAfterOf[id] = certificateNotAfter
            state.byAgent[agent, default: []].append(id)
            let connections = state.byAgent[agent] ?? []
            guard connections.count > limit else { return [] }
            // No longer counted: they are closing.
            let older = connections.prefix(connections.count - limit)
            state.byAgent[agent] = Array(connections.dropFirst(older.count))
            return older.compactMap { state.channels[$0] }
        }
    }

    /// When each connected agent's certificate expires (Unix seconds): that of its newest connection, which is the
    /// one a renewed certificate arrives on.
    public var certificateExpiries: [String: Int64] {
        state.withLockedValue { state in
            state.byAgent.compactMapValues { connections in connections.last.flatMap { state.notAfterOf[$0] } }
        }
    }

    /// Tells every connected agent (and every later one) to follow `pace`.
    public func broadcast(_ pace: Pace) {
        let channels = state.withLockedValue { state in
            state.pace = pace
            return Array(state.channels.values)
        }
        let frame = WireCodec.encode(.pace(pace))
        for channel in channels { channel.writeAndFlush(ByteBuffer(bytes: frame), promise: nil) }
    }

    /// Sends an `ERROR` frame to every agent and closes the connections.
    func closeAll(_ error: ErrorFrame) {
        let channels = state.withLockedValue { Array($0.channels.values) }
        let frame = WireCodec.encode(.error(error))
        for channel in channels {
            channel.writeAndFlush(ByteBuffer(bytes: frame)).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
