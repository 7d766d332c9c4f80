/// How a counter moved between two consecutive samples, told apart by the counter epoch rather than guessed.
public enum CounterStep: Sendable, Hashable {
    /// The counter grew by this much.
    case increase(UInt64)
    /// A 32-bit counter passed 2³² and started again; the payload is the real increase.
    case wrapped(UInt64)
    /// The counter restarted from zero (new epoch, or a driver reset within one); the payload is what it counted
    /// since the restart, which is traffic too.
    case reset(UInt64)
    /// The increase is larger than the link could carry in the time between the samples: a counter glitch, not
    /// traffic. Counted as nothing.
    case implausible(UInt64)

    /// What the step adds to a total.
    public var counted: UInt64 {
        switch self {
        case .increase(let value), .wrapped(let value), .reset(let value): value
        case .implausible: 0
        }
    }

    /// Classifies the move from `previous` to `current`.
    ///
    /// - Parameters:
    ///   - previous: the earlier sample's value and epoch.
    ///   - current: the later sample's value and epoch.
    ///   - ceiling: the most the counter can plausibly grow between the two samples (from the link speed), or `nil`
    ///     when the speed is unknown.
    public static func between(
        previous: (value: UInt64, epoch: CounterEpoch),
        current: (value: UInt64, epoch: CounterEpoch),
        ceiling: UInt64? = nil
    ) -> CounterStep {
        guard previous.epoch == current.epoch else { return .reset(current.value) }
        if current.value >= previous.value {
            let increase = current.value - previous.value
            if let ceiling, increase > ceiling { return .implausible(increase) }
            return .increase(increase)
        }
        if current.epoch.width == .bits32, previous.value <= UInt64(UInt32.max) {
            let increase = (UInt64(UInt32.max) - previous.value) + current.value + 1
            if let ceiling, increase > ceiling { return .reset(current.value) }
            return .wrapped(increase)
        }
        // A 64-bit counter needs years at 400 Gbit/s to wrap; going down means the driver reset it.
        return .reset(current.value)
    }

    /// The most a counter can grow in `milliseconds` on a link of `speedMbps`, with 50% headroom for timestamp
    /// jitter; `nil` for counters other than bytes and packets, which have no useful bound.
    public static func ceiling(for counter: Counter, speedMbps: UInt32?, milliseconds: Int64) -> UInt64? {
        guard let speedMbps, speedMbps > 0, milliseconds > 0 else { return nil }
        // Doubles, clamped: timestamps far apart (a peer's, or a long outage) must not overflow the conversion.
        let bytes = min(Double(speedMbps) * 125_000 * Double(milliseconds) / 1000 * 1.5, 1.8e19)
        switch counter {
        case .rxBytes, .txBytes: return UInt64(bytes) &+ 65_536
        // 84 bytes is the smallest Ethernet frame on the wire, preamble and gap included.
        case .rxPackets, .txPackets: return UInt64(bytes / 84) + 64
        default: return nil
        }
    }
}
