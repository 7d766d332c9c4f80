import NIOConcurrencyHelpers
import NIOCore
import PulseCore

/// The agents connected right now: for the connection limit, status lines and `PACE` broadcasts.
public final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var open = 0
        var pace: Pace = .normal
    }
    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Connections accepted and not closed yet (including ones still in their handshake).
    public var openConnections: Int { state.withLockedValue { $0.open } }
    /// Connections past `HELLO`.
    public var agentCount: Int { state.withLockedValue { $0.channels.count } }
    public var currentPace: Pace? { state.withLockedValue { $0.pace } }

    /// Counts a new connection unless that would exceed `limit`.
    func reserve(limit: Int) -> Bool {
        state.withLockedValue { state in
            guard state.open < limit else { return false }
            state.open += 1
            return true
        }
    }

    func release() { state.withLockedValue { $0.open -= 1 } }

    func add(_ channel: any Channel) {
        state.withLockedValue { $0.channels[ObjectIdentifier(channel)] = channel }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLockedValue { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
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
