import PulseCore
import TestSupport

/// Counter series of one interface, one sample per second.
enum TrafficModel: String, CaseIterable {
    /// About 200 Mbit/s in and 40 Mbit/s out, each second uniformly ±30%: close to the worst case for a codec.
    case busyNoisy = "busy, ±30% each second"
    /// The same mean rates following a slow random walk (±3% a second), as aggregated server traffic does.
    case busySteady = "busy, slow-moving"
    /// Counters that do not move.
    case idle = "idle"

    func samples(_ count: Int, seed: UInt64) -> [CounterValues] {
        var random = SplitMix64(seed: seed)
        var counters = CounterValues([
            8_123_456_789_012, 7_345_678_901, 12, 3_456, 0, 7, 0, 98_765, 1_234_567_890_123, 2_345_678_901, 0, 17, 0,
            0, 0, 0,
        ])!
        var level = 1.0
        var out = [counters]
        for _ in 1..<count {
            switch self {
            case .idle:
                break
            case .busyNoisy, .busySteady:
                let factor: Double
                if self == .busyNoisy {
                    factor = Double.random(in: 0.7...1.3, using: &random)
                } else {
                    level = min(1.5, max(0.5, level * Double.random(in: 0.97...1.03, using: &random)))
                    factor = level
                }
                let rx = UInt64(25_000_000 * factor)
                let tx = UInt64(5_000_000 * factor)
                counters.values[Counter.rxBytes.rawValue] += rx
                counters.values[Counter.rxPackets.rawValue] += rx / UInt64.random(in: 900...1_100, using: &random)
                counters.values[Counter.txBytes.rawValue] += tx
                counters.values[Counter.txPackets.rawValue] += tx / UInt64.random(in: 400...600, using: &random)
                if Int.random(in: 0..<20, using: &random) == 0 { counters.values[Counter.rxDropped.rawValue] += 1 }
                if Int.random(in: 0..<10, using: &random) == 0 { counters.values[Counter.rxMulticast.rawValue] += 1 }
            }
            out.append(counters)
        }
        return out
    }
}

/// Millisecond timestamps of 1 Hz ticks read a few milliseconds late, as the agent's sampler does.
func tickTimestamps(_ count: Int, start: Int64, seed: UInt64) -> [Int64] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { start + Int64($0) * 1_000 + Int64.random(in: 0...3, using: &random) }
}
