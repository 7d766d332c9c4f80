import PulseAnalytics
import PulseCore

/// Something the counting rules flagged that a bucket's event counts cannot say on their own.
public struct Anomaly: Sendable, Hashable {
    public var series: Int64
    public var timestamp: Int64
    public var kind: String
    public var detail: String
}

extension Anomaly {
    /// The columns of the `anomaly` table ``init(row:)`` reads, in order.
    package static let columns = "series_id, ts, kind, detail"

    package init(row: inout some StoreRow) throws {
        self.init(series: try row.integer(), timestamp: try row.integer(), kind: try row.text(), detail: try row.text())
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
}

extension IngestTotals {
    /// The totals from the store's `meta` table, `value` giving a key's number (0 for a key not there yet): the
    /// keys are named here once for both stores.
    package init(meta value: (String) throws -> Int64) rethrows {
        self.init(
            batches: try value("batches"), values: try value("values"), revision: try value("revision"),
            unplacedSteps: try value("unplaced_steps"))
    }
}

/// What one pruning pass removed.
public struct PruneReport: Sendable, Hashable {
    public var rawChunks = 0
    public var buckets = 0
    /// Gaps spread into the rollups for good (past the late-data horizon).
    public var settledGaps = 0

    /// Nothing removed yet: a pass counts into it.
    public init() {}
}
