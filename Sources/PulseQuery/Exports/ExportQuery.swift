import PulseAnalytics
import PulseCore
import PulseStore

/// Reads what `netpulse export` writes: an interface's raw samples, or series' rollup buckets with the counts whose
/// time could not be placed.
public struct ExportQuery: Sendable {
    public let engine: WindowEngine

    public init(engine: WindowEngine) {
        self.engine = engine
    }

    /// The raw samples of interface `record` during `window`, oldest first.
    public func samples(of record: SeriesRecord, in window: Window) async throws -> [RawSample] {
        try await engine.store.samples(series: record.id, from: window.from, to: window.to)
    }

    /// Each series' buckets of `level` during `window` (whole buckets), then its counts whose time could not be
    /// placed received on the window's UTC days, one row a day (`docs/windows.md`, "Time that cannot be placed"):
    /// those are in no bucket, so the rows add up to everything counted. Series in the order given.
    public func rows(
        of series: [SeriesRecord], level: RollupLevel, in window: Window
    ) async throws -> [(series: SeriesRecord, rows: [ExportRow])] {
        let ids = series.map(\.id)
        let buckets = try await engine.store.buckets(level: level, series: ids, from: window.from, to: window.to)
        let unplaced = try await engine.store.unplacedDays(
            series: ids, from: RollupLevel.oneDay.bucketStart(window.from), to: window.to)
        return series.map { record in
            let rows =
                (buckets[record.id] ?? []).map {
                    ExportRow(
                        start: $0.start, width: level.width, values: $0.values, revision: $0.revision, kind: .bucket)
                }
                + (unplaced[record.id] ?? []).map {
                    ExportRow(
                        start: $0.day, width: 86_400_000, values: BucketValues(traffic: $0.totals.traffic), revision: 0,
                        kind: .unplaced)
                }
            return (record, rows)
        }
    }
}

/// One row of an export: a bucket, or a series' unplaced counts received on one UTC day.
public struct ExportRow: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case bucket
        case unplaced
    }

    public var start: Int64
    /// Milliseconds.
    public var width: Int64
    public var values: BucketValues
    public var revision: Int64
    public var kind: Kind
}
