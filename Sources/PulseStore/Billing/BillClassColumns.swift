import PulseAnalytics

/// The columns of a bill or an adjustment that say what it rests on (`docs/windows.md`, "95th-percentile billing"),
/// as both stores keep them: the interval classes (NULL for bills issued before they were recorded) and the rank
/// convention.
package enum BillClassColumns {
    package static let names = ["measured", "interpolated", "flagged", "rank_rule"]

    /// The three class counts of `bill`, NULL when unknown.
    package static func counts(_ bill: Bill) -> [Int64?] {
        guard let classes = bill.classes else { return [nil, nil, nil] }
        return [Int64(classes.measured), Int64(classes.interpolated), Int64(classes.flagged)]
    }

    /// The classes from their three columns: nil unless all three are there.
    package static func classes(_ measured: Int64?, _ interpolated: Int64?, _ flagged: Int64?) -> IntervalClasses? {
        guard let measured, let interpolated, let flagged else { return nil }
        return IntervalClasses(measured: Int(measured), interpolated: Int(interpolated), flagged: Int(flagged))
    }

    /// The rank convention from its column (a bill stored before there was a choice was ranked by rounding).
    package static func rank(_ text: String?) -> RankConvention {
        text.flatMap(RankConvention.init(rawValue:)) ?? .round
    }
}
