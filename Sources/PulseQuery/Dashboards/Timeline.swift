import PulseAnalytics

/// Equal buckets covering a window, one slot each: slot `i` is `[from + i·width, from + (i+1)·width)`. Charts
/// draw one value per slot at its middle; a slot without a bucket with data is missing (a gap), never zero.
public struct Timeline: Sendable, Hashable {
    public let from: Int64
    public let width: Int64
    public let count: Int

    public init(from: Int64, to: Int64, level: RollupLevel) {
        self.from = from
        self.width = level.width
        self.count = Int(max(0, to - from) / level.width)
    }

    public var to: Int64 { from + Int64(count) * width }

    /// The slot of a bucket starting at `start`, or nil outside the timeline.
    public func slot(of start: Int64) -> Int? {
        guard start >= from, start < to, (start - from) % width == 0 else { return nil }
        return Int((start - from) / width)
    }

    /// Each slot's bucket values; nil for slots without a bucket with data.
    public func values(_ buckets: [Bucket]) -> [BucketValues?] {
        var slots = [BucketValues?](repeating: nil, count: count)
        for bucket in buckets where bucket.values.hasData {
            if let slot = slot(of: bucket.start) { slots[slot] = bucket.values }
        }
        return slots
    }

    /// Each slot's received and sent bytes, link speed (Mbit/s; `speed` when the bucket has none) and a 1 saying
    /// it has data: the lanes ranked panels add up. Nil for slots without data.
    public func lanes(_ buckets: [Bucket], speed: Int64 = 0) -> [SIMD4<Int64>?] {
        var slots = [SIMD4<Int64>?](repeating: nil, count: count)
        for bucket in buckets where bucket.values.hasData {
            guard let slot = slot(of: bucket.start) else { continue }
            let values = bucket.values
            let known = values.speedMbps > 0 ? Int64(values.speedMbps) : speed
            slots[slot] = SIMD4(values.traffic[.rxBytes], values.traffic[.txBytes], known, 1)
        }
        return slots
    }
}
