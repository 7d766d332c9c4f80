import PulseAnalytics

/// A bucket's columns as every store selects them: those of a ``BucketFields`` in ``SQLiteSchema/bucketColumns``
/// order.
enum BucketColumns {
    static func selectList(_ fields: BucketFields) -> String {
        names(fields).joined(separator: ", ")
    }

    /// The columns of `fields`, in table order.
    static func names(_ fields: BucketFields) -> [String] {
        SQLiteSchema.bucketColumns.enumerated().filter { fields.includes(column: $0.offset) }.map(\.element)
    }

    /// The same columns as aggregates over a series' buckets: sums, and maxima for peaks, speed and revision.
    /// `integer` wraps each (PostgreSQL's SUM of bigint is numeric).
    static func aggregateList(_ fields: BucketFields, integer: (String) -> String = { $0 }) -> String {
        SQLiteSchema.bucketColumns.enumerated().filter { fields.includes(column: $0.offset) }.map { _, column in
            switch column {
            case "peak_rx", "peak_tx", "speed_mbps", "revision": "MAX(\(column))"
            default: integer("SUM(\(column))")
            }
        }.joined(separator: ", ")
    }

    /// A bucket's values from the columns of `fields`, each taken by `column()` in order; the others stay zero.
    @inline(__always)
    static func values(fields: BucketFields, _ column: () throws -> Int64) rethrows -> (
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
