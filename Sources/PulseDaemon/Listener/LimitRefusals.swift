import NIOConcurrencyHelpers
import NIOCore
import PulseSettings

/// Refusals because an agent went over one of its limits (``AgentLimits``): counted per limit for `/metrics`, and
/// logged at most once a minute per agent and limit, the line summing up what was refused since the last one, so
/// an agent that sends a thousand batches over a limit makes one line a minute, not a thousand.
public final class LimitRefusals: Sendable {
    private struct State {
        var counts: [AgentLimits.Kind: Int64] = [:]
        /// Per agent and limit: when a line was last logged, and refusals since.
        var logged: [String: (at: NIODeadline, since: Int)] = [:]
    }
    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Counts one refusal of `agent` over `kind`; returns the line to log now, or nil within a minute of the last.
    public func refused(
        agent: String, _ kind: AgentLimits.Kind, _ message: String, now: NIODeadline = .now(),
        every: TimeAmount = .seconds(60)
    ) -> String? {
        state.withLockedValue { state in
            state.counts[kind, default: 0] += 1
            let key = "\(agent)\u{0}\(kind.rawValue)"
            if let last = state.logged[key], now - last.at < every {
                state.logged[key]?.since += 1
                return nil
            }
            let earlier = state.logged[key]?.since ?? 0
            state.logged[key] = (now, 0)
            // Agents come and go: the table keeps only recent ones.
            if state.logged.count > 10_000 { state.logged = state.logged.filter { now - $0.value.at < every } }
            let more = earlier > 0 ? " (and \(earlier) more refusal(s) over this limit in the last minute)" : ""
            return "agent \(agent) is over [limits] \(kind.rawValue): \(message)\(more)"
        }
    }

    /// Refusals per limit since the daemon started.
    public var counts: [AgentLimits.Kind: Int64] { state.withLockedValue { $0.counts } }
}
