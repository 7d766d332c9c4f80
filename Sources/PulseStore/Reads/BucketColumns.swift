import PulseAnalytics

/// The rollup tables as both dialects name and select them: one table per level, the same columns in the same
/// order (the schemas differ only in their types).
package enum BucketColumns {
    /// The rollup table of a level: made when the level is first configured (levels are a setting, not schema).
    package static func table(_ level: RollupLevel) -> String { "rollup_\(level.width / 1_000)s" }

    /// The value columns of a rollup bucket, in the order rows bind them.
    package static let all: [String] =
        TrafficCounter.allCases.map(\.name) + [
            "measured_ms", "interpolated_ms", "peak_rx", "peak_tx", "speed_mbps", "epochs", "wraps", "resets",
            "implausible", "clock_steps", "ambiguous", "flagged_ms", "member_ms", "capacity", "revision",
        ]

    package static func selectList(_ fields: BucketFields) -> String {
        names(fields).joined(separator: ", ")
    }

    /// The columns of `fields`, in table order.
    package static func names(_ fields: BucketFields) -> [String] {
        all.enumerated().filter { fields.includes(column: $0.offset) }.map(\.element)
    }

    /// The same columns as aggregates over a series' buckets: sums, and maxima for peaks, speed and revision.
    /// `integer` wraps each (PostgreSQL's SUM of bigint is numeric).
    package static func aggregateList(_ fields: BucketFields, integer: (String) -> String = { $0 }) -> String {
        all.enumerated().filter { fields.includes(column: $0.offset) }.map { _, column in
            switch column {
            case "peak_rx", "peak_tx", "speed_mbps", "revision": "MAX(\(column))"
            default: integer("SUM(\(column))")
            }
        }.joined(separator: ", ")
    }

    /// A bucket's values from the columns of `fields`, each taken by `column()` in order; the others stay zero.
    @inline(__always)
    package static func values(fields: BucketFields, _ column: () throws -> Int64) rethrows -> (
        values: BucketValues, revision: Int64
    ) {
        var values = BucketValues()
        var revision: Int64 = 0
        if fields.contains(.bytes) {
            values.traffic[0] = try column()
            values.traffic[1] = try column()
        }
        if fields.contains(.packets) { for lane in 2..<8 { values.traffic[lane] = try column() } }
        if fields.contains(.coverage) {
            values.measuredMilliseconds = try column()
            values.interpolatedMilliseconds = try column()
        }
        if fields.contains(.peaks) {
            values.peakRx = UInt64(clamping: try column())
            values.peakTx = UInt64(clamping: try column())
            values.speedMbps = UInt32(clamping: try column())
        }
        if fields.contains(.events) {
            for lane in 0..<StepEvents.columns.count { values.events[lane] = try column() }
            values.flaggedMilliseconds = try column()
        }
        if fields.contains(.members) {
            values.memberMilliseconds = try column()
            values.capacity = try column()
        }
        if fields.contains(.revision) { revision = try column() }
        return (values, revision)
    }
}
