/// Reconnect delays: exponential from `initial` to `maximum`, with "equal jitter" (a uniformly random delay between
/// half and all of the current step), so a fleet that lost its daemon does not reconnect in lockstep and no agent
/// retries in a tight loop.
public struct Backoff: Sendable {
    public let initial: Duration
    public let maximum: Duration
    private var attempt = 0

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt.
    public mutating func next<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        let ceiling = min(maximum, initial * (1 << min(attempt, 30)))
        attempt += 1
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: nanoseconds / 2...max(nanoseconds / 2, nanoseconds), using: &generator))
    }

    public mutating func next() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return next(using: &generator)
    }

    /// Call after a connection succeeded.
    public mutating func reset() { attempt = 0 }
}
