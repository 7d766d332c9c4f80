/// Rates, percentiles and ratios in exact integer arithmetic (`docs/windows.md`): the reference computation can
/// agree to the last digit.
public enum RateMath {
    /// ⌊bytes × 10⁶ / milliseconds⌋: milli-bytes per second; nil without time.
    public static func rate(bytes: Int64, milliseconds: Int64) -> Int64? {
        guard milliseconds > 0 else { return nil }
        return divide(bytes, by: milliseconds, scale: 1_000_000)
    }

    /// ⌊value × scale / divisor⌋ for non-negative value and positive divisor, without overflow (saturating).
    public static func divide(_ value: Int64, by divisor: Int64, scale: Int64) -> Int64 {
        precondition(divisor > 0)
        let magnitude = UInt64(clamping: max(value, 0))
        let product = magnitude.multipliedFullWidth(by: UInt64(scale))
        guard product.high < UInt64(divisor) else { return .max }
        let quotient = UInt64(divisor).dividingFullWidth(product).quotient
        return Int64(clamping: quotient)
    }

    /// The percentile of `values` sorted ascending at the rank `rank` gives (by default the rank `p × n / 100`
    /// rounded, halves up: index ⌊(p × n + 50) / 100⌋ − 1), at least index 0.
    public static func percentile(_ sorted: [Int64], _ percent: Int, rank: RankConvention = .round) -> Int64? {
        guard !sorted.isEmpty else { return nil }
        return sorted[percentileIndex(count: sorted.count, percent: percent, rank: rank)]
    }

    /// The index ``percentile(_:_:rank:)`` reads for `count` values.
    public static func percentileIndex(count: Int, percent: Int, rank: RankConvention = .round) -> Int {
        let position =
            switch rank {
            case .round: (percent * count + 50) / 100
            case .nearestRank: (percent * count + 99) / 100
            }
        return min(count - 1, max(0, position - 1))
    }

    /// ⌈value / time⌉ for a non-negative value and positive time (0 otherwise), without overflow: a bucket's members
    /// from its member time, its link speed from its capacity (`docs/windows.md`, "Windows").
    public static func roundedUp(_ value: Int64, over time: Int64) -> Int64 {
        guard value > 0, time > 0 else { return 0 }
        return value / time + (value % time == 0 ? 0 : 1)
    }

    /// ⌊part × 10⁶ / whole⌋ parts per million; nil when `whole` is 0.
    public static func perMillion(_ part: Int64, of whole: Int64) -> Int64? {
        guard whole > 0 else { return nil }
        return divide(part, by: whole, scale: 1_000_000)
    }

    /// ⌊rate × 8 × 10⁴ / (speed × 10⁹)⌋ hundredths of a percent of a link of `speedMbps` (`rate` in milli-bytes
    /// per second); nil when the speed is unknown.
    public static func utilisation(rate: Int64, speedMbps: Int64) -> Int64? {
        guard speedMbps > 0 else { return nil }
        // rate × 8 × 10⁴ / (speed × 10⁹) = rate × 8 / (speed × 10⁵)
        return divide(rate, by: Saturating.product(speedMbps, 100_000), scale: 8)
    }
}

/// Which of the sorted rates a percentile is (`docs/windows.md`, "95th-percentile billing").
public enum RankConvention: String, Sendable, Hashable, CaseIterable {
    /// The rank `p × n / 100` rounded, halves up: `round(0.95 × n)` for bills, as LibreNMS and vnStat compute it.
    case round
    /// The textbook nearest rank, `⌈p × n / 100⌉`.
    case nearestRank = "nearest-rank"
}
