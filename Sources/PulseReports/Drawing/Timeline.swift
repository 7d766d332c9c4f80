import PulseAnalytics
import PulseCharts
import PulseQuery

extension Timeline {
    /// Each slot's middle, where its value is drawn.
    var midpoints: [ChartDate] {
        (0..<count).map { Self.date(from + Int64($0) * width + width / 2) }
    }

    /// The window's ends, as the chart's x domain.
    var domain: ClosedRange<ChartDate> { Self.date(from)...Self.date(max(to, from + 1)) }

    static func date(_ milliseconds: Int64) -> ChartDate { ChartDate(secondsSinceEpoch: Double(milliseconds) / 1_000) }
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
