import PulseCore

/// A rollup resolution: buckets of `width` milliseconds, aligned to multiples of it since the Unix epoch (UTC).
public struct RollupLevel: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var width: Int64

    public init(width: Int64) {
        precondition(width > 0)
        self.width = width
    }

    public static let oneMinute = RollupLevel(width: 60_000)
    public static let fiveMinutes = RollupLevel(width: 300_000)
    public static let oneHour = RollupLevel(width: 3_600_000)
    public static let oneDay = RollupLevel(width: 86_400_000)

    /// 1 min, 5 min, 1 h, 1 day.
    public static let standard: [RollupLevel] = [.oneMinute, .fiveMinutes, .oneHour, .oneDay]

    /// The start of the bucket holding `time`.
    public func bucketStart(_ time: Int64) -> Int64 {
        let remainder = time % width
        // Clamped for the few times before the first whole bucket of Int64's range, so no time traps.
        return remainder < 0 ? Saturating.difference(time - remainder, width) : time - remainder
    }

    /// The first bucket boundary at or after `time`: the end of the whole buckets that cover everything before it.
    public func bucketEnd(covering time: Int64) -> Int64 {
        bucketStart(time) == time ? time : bucketStart(time) + width
    }

    /// Whether `time` is a bucket boundary.
    public func aligns(_ time: Int64) -> Bool { time % width == 0 }

    /// `1m`, `5m`, `1h`, `1d`: the level's name in configs, the store and outputs.
    public var description: String { Units.formatDuration(width) }

    public static func < (lhs: RollupLevel, rhs: RollupLevel) -> Bool { lhs.width < rhs.width }
}
