import PulseAnalytics
import PulseCore

/// One stored raw sample of a logical interface, as counted (timestamps after the clock check).
public struct RawSample: Sendable, Hashable {
    /// The order of the batch the sample came in.
    public var order: Int64
    public var timestamp: Int64
    public var epoch: CounterEpoch
    public var counters: CounterValues

    public init(order: Int64, timestamp: Int64, epoch: CounterEpoch, counters: CounterValues) {
        self.order = order
        self.timestamp = timestamp
        self.epoch = epoch
        self.counters = counters
    }
}

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

/// What a series counted in steps whose time could not be placed (`docs/windows.md`, "Time that cannot be
/// placed"): the eight counters' sums, and how many steps.
public struct UnplacedTotals: Sendable, Hashable {
    public var traffic: TrafficDelta
    public var steps: Int64

    public init(traffic: TrafficDelta = .zero, steps: Int64 = 0) {
        self.traffic = traffic
        self.steps = steps
    }

    public mutating func add(_ other: UnplacedTotals) {
        traffic &+= other.traffic
        steps &+= other.steps
    }

    public var isEmpty: Bool { steps == 0 && traffic == .zero }
}

/// The unplaced totals of one series received on one UTC day.
public struct UnplacedDay: Sendable, Hashable {
    /// The day's start (UTC midnight, ms).
    public var day: Int64
    public var totals: UnplacedTotals

    public init(day: Int64, totals: UnplacedTotals) {
        self.day = day
        self.totals = totals
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
