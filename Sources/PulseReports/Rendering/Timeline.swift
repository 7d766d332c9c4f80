import PulseAnalytics
import PulseCharts

/// Equal buckets covering a window, one slot each: slot `i` is `[from + i·width, from + (i+1)·width)`. Charts
/// draw one value per slot at its middle; a slot without a bucket with data is missing (a gap), never zero.
struct Timeline: Sendable {
    let from: Int64
    let width: Int64
    let count: Int

    init(from: Int64, to: Int64, level: RollupLevel) {
        self.from = from
        self.width = level.width
        self.count = Int(max(0, to - from) / level.width)
    }

    var to: Int64 { from + Int64(count) * width }

    /// The slot of a bucket starting at `start`, or nil outside the timeline.
    func slot(of start: Int64) -> Int? {
        guard start >= from, start < to, (start - from) % width == 0 else { return nil }
        return Int((start - from) / width)
    }

    /// Each slot's middle, where its value is drawn.
    var midpoints: [ChartDate] {
        (0..<count).map { Self.date(from + Int64($0) * width + width / 2) }
    }

    /// The window's ends, as the chart's x domain.
    var domain: ClosedRange<ChartDate> { Self.date(from)...Self.date(max(to, from + 1)) }

    static func date(_ milliseconds: Int64) -> ChartDate { ChartDate(secondsSinceEpoch: Double(milliseconds) / 1_000) }

    /// Each slot's bucket values; nil for slots without a bucket with data.
    func values(_ buckets: [Bucket]) -> [BucketValues?] {
        var slots = [BucketValues?](repeating: nil, count: count)
        for bucket in buckets where bucket.values.hasData {
            if let slot = slot(of: bucket.start) { slots[slot] = bucket.values }
        }
        return slots
    }

    /// Each slot's received and sent bytes, link speed (Mbit/s; `speed` when the bucket has none) and a 1 saying
    /// it has data: the lanes ranked panels add up. Nil for slots without data.
    func lanes(_ buckets: [Bucket], speed: Int64 = 0) -> [SIMD4<Int64>?] {
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

/// Rates for charts, from RateMath's exact integer rates (milli-units per second): the same data always gives the
/// same doubles, so the same SVG.
enum ChartRates {
    /// Bits per second of `bytes` over `milliseconds`.
    static func bits(_ bytes: Int64, over milliseconds: Int64) -> Double? {
        RateMath.rate(bytes: max(bytes, 0), milliseconds: milliseconds).map { Double($0) * 8 / 1_000 }
    }

    /// Events (packets) per second of `count` over `milliseconds`.
    static func perSecond(_ count: Int64, over milliseconds: Int64) -> Double? {
        RateMath.rate(bytes: max(count, 0), milliseconds: milliseconds).map { Double($0) / 1_000 }
    }

    /// Bits per second of milli-bytes per second.
    static func bits(milliBytesPerSecond rate: Int64) -> Double { Double(rate) * 8 / 1_000 }

    /// The larger direction's share of the link (1 = 100 %), or nil when the speed is unknown.
    static func utilisation(received: Int64, sent: Int64, speedMbps: Int64, over milliseconds: Int64) -> Double? {
        guard let rx = RateMath.rate(bytes: max(received, 0), milliseconds: milliseconds),
            let tx = RateMath.rate(bytes: max(sent, 0), milliseconds: milliseconds),
            let hundredths = RateMath.utilisation(rate: max(rx, tx), speedMbps: speedMbps)
        else { return nil }
        return Double(hundredths) / 10_000
    }
}
