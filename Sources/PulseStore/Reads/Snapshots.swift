import PulseAnalytics

/// What a store reads inside one consistent read transaction: the rows the passes of billing and
/// remote write read (``BillSnapshot``, ``ForwardSnapshot``), which are written once, over this, for every store.
package protocol SnapshotReader {
    /// The store's revision in this snapshot.
    var revision: Int64 { get }
    /// The buckets of `series` (sorted, distinct) at `level` in `[from, to)` with the columns of `fields`, virtual
    /// gap steps spread in, handed to `body` one series at a time in series order.
    func readBuckets(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ body: (Int64, [Bucket]) throws -> Void) async throws
    /// Calls `add(series, start, values, revision)` for what virtual gap steps add to `series` at `level` in
    /// `[from, to)` (see ``VirtualGaps``).
    func spreadVirtualGaps(
        level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void) async throws
    /// `bill_change` joined with its 5-minute bucket (`now` without virtual gaps), oldest first, at most `limit`.
    func billChangeRows(limit: Int) async throws -> [ChangedInterval]
    func forwardStates() async throws -> [Int64: ForwardState]
    /// `forward_change` rows: all at or after `cursor`, and at most `limit` before it.
    func forwardChangeRows(cursor: Int64, limit: Int) async throws -> [ForwardChange]
}

/// A read transaction seen as a ``BillSnapshot``.
package struct StoreBillSnapshot<Reader: SnapshotReader>: BillSnapshot {
    let reader: Reader
    package var revision: Int64 { reader.revision }

    package func changedIntervals(limit: Int) async throws -> [ChangedInterval] {
        var intervals = try await reader.billChangeRows(limit: limit)
        var index = [SeriesStart: Int]()
        for (position, interval) in intervals.enumerated() {
            index[SeriesStart(series: interval.series, start: interval.start)] = position
        }
        // What virtual gap steps add to those intervals (reads spread them; the rows do not hold them).
        if let first = intervals.map(\.start).min(), let last = intervals.map(\.start).max() {
            try await reader.spreadVirtualGaps(
                level: .fiveMinutes, series: Set(intervals.map(\.series)), from: first, to: last + 1
            ) { series, start, values, _ in
                guard let position = index[SeriesStart(series: series, start: start)] else { return }
                intervals[position].now = intervals[position].now + IntervalFigures(values)
            }
        }
        return intervals
    }

    package func buckets(series: [Int64], from: Int64, to: Int64, _ body: (Int64, [Bucket]) throws -> Void) async throws
    {
        try await reader.readBuckets(
            level: .fiveMinutes, series: Array(Set(series)).sorted(), from: from, to: to,
            fields: [.bytes, .coverage, .events], body)
    }

    struct SeriesStart: Hashable {
        var series: Int64
        var start: Int64
    }

    package init(reader: Reader) {
        self.reader = reader
    }
}

/// A read transaction seen as a ``ForwardSnapshot``.
package struct StoreForwardSnapshot<Reader: SnapshotReader>: ForwardSnapshot {
    let reader: Reader
    /// The levels the store keeps current, finest first.
    let levels: [RollupLevel]
    package let level: RollupLevel
    package let cursor: Int64

    package func states() async throws -> [Int64: ForwardState] { try await reader.forwardStates() }

    package func changes(cursor: Int64, limit: Int) async throws -> [ForwardChange] {
        try await reader.forwardChangeRows(cursor: cursor, limit: limit)
    }

    package func buckets(series: [Int64], from: Int64, to: Int64, _ body: (Int64, [Bucket]) throws -> Void) async throws
    {
        try await reader.readBuckets(
            level: level, series: Array(Set(series)).sorted(), from: from, to: to, fields: [.bytes], body)
    }

    package func total(series: Int64, before time: Int64) async throws -> (rx: Int64, tx: Int64) {
        // Coarsest first: its whole buckets before `time`, then each finer level from where the coarser stopped.
        var rx: Int64 = 0
        var tx: Int64 = 0
        var from = Int64.min / 2
        for level in levels.reversed() {
            let to = level.bucketStart(time)
            guard to > from else { continue }
            try await reader.readBuckets(level: level, series: [series], from: from, to: to, fields: [.bytes]) {
                _, list in
                for bucket in list {
                    rx += bucket.values.traffic[.rxBytes]
                    tx += bucket.values.traffic[.txBytes]
                }
            }
            from = to
        }
        return (rx, tx)
    }

    package init(reader: Reader, levels: [RollupLevel], level: RollupLevel, cursor: Int64) {
        self.reader = reader
        self.levels = levels
        self.level = level
        self.cursor = cursor
    }
}

/// A change record as a pass settles it (``SQLiteStore/settleChanges(in:columns:_:_:)``): its key, the revision it was
/// read at, and the amounts read, in the order of the table's columns.
package typealias SettledChange = (series: Int64, start: Int64, revision: Int64, amounts: [Int64])

extension BillUpdate {
    /// The `bill_change` columns a pass settles, and what it read of each.
    package static let changeColumns = ["rx", "tx", "covered", "unknown", "measured", "flagged"]
    package var settledChanges: [SettledChange] {
        settled.map {
            (
                $0.series, $0.start, $0.revision,
                [$0.since.rx, $0.since.tx, $0.since.covered, Int64($0.unknown), $0.since.measured, $0.since.flagged]
            )
        }
    }
}

extension ForwardUpdate {
    /// The `forward_change` columns a pass settles, and what it read of each.
    package static let changeColumns = ["rx", "tx", "unknown"]
    package var settledChanges: [SettledChange] {
        settled.map { ($0.series, $0.start, $0.revision, [$0.rx, $0.tx, Int64($0.unknown)]) }
    }
}

extension StoreSettings {
    /// The levels remote write reads, finest first, and the one it forwards (the finest).
    package func forwardedLevels() throws -> (levels: [RollupLevel], finest: RollupLevel) {
        let levels = levels.sorted()
        guard let finest = levels.first else { throw StoreError.unusable("the store keeps no rollups") }
        return (levels, finest)
    }
}
