import PulseAnalytics
import PulseCore

/// Something the counting rules flagged that a bucket's event counts cannot say on their own.
public struct Anomaly: Sendable, Hashable {
    public var series: Int64
    public var timestamp: Int64
    public var kind: String
    public var detail: String

    public init(series: Int64, timestamp: Int64, kind: String, detail: String) {
        self.series = series
        self.timestamp = timestamp
        self.kind = kind
        self.detail = detail
    }
}

/// Totals since the store was created, for status lines and benchmarks.
public struct IngestTotals: Sendable, Hashable {
    public var batches: Int64
    public var values: Int64
    public var revision: Int64
    /// Steps whose time could not be placed (`docs/windows.md`, "Time that cannot be placed") since the store was
    /// made: a count of events, so one that late data splits again counts once more for each step it becomes.
    public var unplacedSteps: Int64

    public init(batches: Int64, values: Int64, revision: Int64, unplacedSteps: Int64 = 0) {
        self.batches = batches
        self.values = values
        self.revision = revision
        self.unplacedSteps = unplacedSteps
    }
}

/// What one pruning pass removed.
public struct PruneReport: Sendable, Hashable {
    public var rawChunks: Int
    public var buckets: Int
    /// Gaps spread into the rollups for good (past the late-data horizon).
    public var settledGaps: Int

    public init(rawChunks: Int = 0, buckets: Int = 0, settledGaps: Int = 0) {
        self.rawChunks = rawChunks
        self.buckets = buckets
        self.settledGaps = settledGaps
    }
}
