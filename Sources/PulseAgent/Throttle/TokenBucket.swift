/// An upload budget: at most `rate` bytes per second on average, with bursts up to `capacity` bytes.
///
/// A frame larger than the capacity is let through once the bucket is full, leaving it in debt, so big frames
/// are slowed to the budget rather than blocked forever.
public struct TokenBucket: Sendable {
    /// Bytes per second; 0 means unlimited.
    public let rate: Int64
    public let capacity: Int64
    private var tokens: Double
    private var updatedAt: ContinuousClock.Instant

    public init(rate: Int64, capacity: Int64? = nil, now: ContinuousClock.Instant = .now) {
        self.rate = rate
        // One second of budget, and at least one typical batch, so steady traffic is never delayed.
        self.capacity = capacity ?? max(rate, 16_384)
        tokens = Double(self.capacity)
        updatedAt = now
    }

    private mutating func refill(_ now: ContinuousClock.Instant) {
        let elapsed = now - updatedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        tokens = min(Double(capacity), tokens + seconds * Double(rate))
        updatedAt = now
    }

    /// How long to wait before `bytes` may be sent; zero when they may go now.
    public mutating func delay(for bytes: Int, now: ContinuousClock.Instant = .now) -> Duration {
        guard rate > 0 else { return .zero }
        refill(now)
        let needed = min(Double(bytes), Double(capacity))
        guard tokens < needed else { return .zero }
        return .nanoseconds(Int64(((needed - tokens) / Double(rate) * 1e9).rounded(.up)))
    }

    /// Takes `bytes` from the bucket (call once ``delay(for:now:)`` is zero).
    public mutating func consume(_ bytes: Int, now: ContinuousClock.Instant = .now) {
        guard rate > 0 else { return }
        refill(now)
        tokens -= Double(bytes)
    }
}
