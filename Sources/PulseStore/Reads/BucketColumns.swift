import PulseAnalytics

/// The rollup tables as both dialects name and select them: one table per level, the same columns in the same
/// order (the schemas differ only in their types).
public enum BucketColumns {
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

    /// A bucket's values from the columns of `fields`, taken from `source` in order; the others stay zero.
    ///
    /// Inlinable and generic over the source, so that each backend's module specialises it for its own rows: every
    /// bucket read goes through here. Given a closure for the next column instead, it was a call and a closure call
    /// per column from the backends' modules, and the CLI's bucket-reading queries (`top --by p95`, `bill`,
    /// `export`, `rates`) took 5–9 % longer than when the backends shared PulseStore's module.
    ///
    /// Public, with its protocol, where `package` would do: Swift 6.3 in a SwiftPM release build specialised an
    /// `@inlinable package` function in its own module only (the backends called the unspecialised generic, through
    /// the protocol's witness table, per column), and a public one in each caller's.
    @inlinable
    public static func values<Source: BucketColumnSource>(
        fields: BucketFields, from source: inout Source
    ) throws(Source.Failure) -> (values: BucketValues, revision: Int64) {
        var values = BucketValues()
        var revision: Int64 = 0
        if fields.contains(.bytes) {
            values.traffic[0] = try source.next()
            values.traffic[1] = try source.next()
        }
        if fields.contains(.packets) { for lane in 2..<8 { values.traffic[lane] = try source.next() } }
        if fields.contains(.coverage) {
            values.measuredMilliseconds = try source.next()
            values.interpolatedMilliseconds = try source.next()
        }
        if fields.contains(.peaks) {
            values.peakRx = UInt64(clamping: try source.next())
            values.peakTx = UInt64(clamping: try source.next())
            values.speedMbps = UInt32(clamping: try source.next())
        }
        if fields.contains(.events) {
            for lane in 0..<StepEvents.columns.count { values.events[lane] = try source.next() }
            values.flaggedMilliseconds = try source.next()
        }
        if fields.contains(.members) {
            values.memberMilliseconds = try source.next()
            values.capacity = try source.next()
        }
        if fields.contains(.revision) { revision = try source.next() }
        return (values, revision)
    }
}

/// A row of a rollup table as a backend reads it, its columns one after the other
/// (``BucketColumns/values(fields:from:)``).
public protocol BucketColumnSource {
    associatedtype Failure: Error
    mutating func next() throws(Failure) -> Int64
}
