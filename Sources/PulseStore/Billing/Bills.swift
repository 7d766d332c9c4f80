import PulseAnalytics

/// A 95th-percentile bill as the store keeps it (`docs/windows.md`, "95th-percentile billing").
public struct StoredBill: Sendable, Hashable {
    public var series: Int64
    public var bill: Bill
    /// The end of the last interval counted: the bill is current as of then.
    public var asOf: Int64
    /// When the bill was issued and frozen; nil while its period is open.
    public var issuedAt: Int64?
    /// The open bill's largest rates, to add the next interval without reading the period again.
    public var tracker: BillTracker?

    public init(series: Int64, bill: Bill, asOf: Int64, issuedAt: Int64? = nil, tracker: BillTracker? = nil) {
        self.series = series
        self.bill = bill
        self.asOf = asOf
        self.issuedAt = issuedAt
        self.tracker = tracker
    }
}

/// An issued bill that late data would change: what it would now be, recorded beside the issued one.
public struct BillAdjustment: Sendable, Hashable {
    public var series: Int64
    public var foundAt: Int64
    /// The bill recomputed with the late data (its period is the issued bill's).
    public var bill: Bill
}

extension StoredBill {
    /// This bill, recomputed with late data, as the adjustment of the issued bill of its period found at `time`.
    public func adjustment(foundAt time: Int64) -> BillAdjustment {
        BillAdjustment(series: series, foundAt: time, bill: bill)
    }
}

extension BillAdjustment {
    /// What ``init(row:)`` reads, in order: the adjustment (`a`, `bill_adjustment`) joined with its issued bill
    /// (`b`, `bill`) for the period.
    package static let columns = """
        a.series_id, a.found_at, a.method, a.intervals, a.missing, a.p_in, a.p_out, a.p_sum, a.revision,
        b.period_from, b.period_to, a.measured, a.interpolated, a.flagged, a.rank_rule
        """
    /// The tables ``columns`` are read from.
    package static let tables =
        "bill_adjustment a JOIN bill b ON b.series_id = a.series_id AND b.period_from = a.period_from"

    package init(row: inout some StoreRow) throws {
        let series = try row.integer()
        let foundAt = try row.integer()
        let method = BillingMethod(rawValue: try row.text()) ?? .max
        let intervals = Int(try row.integer())
        let missing = Int(try row.integer())
        let (inbound, outbound, sum) = (try row.optionalInteger(), try row.optionalInteger(), try row.optionalInteger())
        let revision = try row.integer()
        let period = Window(from: try row.integer(), to: try row.integer(), name: "billing-period")
        let classes = BillClassColumns.classes(
            try row.optionalInteger(), try row.optionalInteger(), try row.optionalInteger())
        let rank = BillClassColumns.rank(try row.optionalText())
        self.init(
            series: series, foundAt: foundAt,
            bill: Bill(
                period: period, method: method, intervals: intervals, missing: missing, classes: classes, rank: rank,
                inbound: inbound, outbound: outbound, sum: sum, revision: revision))
    }
}

/// A 5-minute interval of one series that changed after billing took it in (late data), as one snapshot of the
/// store saw it.
public struct ChangedInterval: Sendable, Hashable {
    public var series: Int64
    public var start: Int64
    /// What the interval holds now: bytes in and out, covered, measured and flagged time (virtual gap steps
    /// included).
    public var now: IntervalFigures
    /// What was added to it since billing took it in (a step taken out counts negative).
    public var since: IntervalFigures
    /// Changes whose effect cannot be told from `since` (a virtual gap came or went): the bill must be rebuilt.
    public var unknown: Int
    /// The revision of the last change.
    public var revision: Int64

    /// What the interval held when billing took it in, when that can be told.
    public var before: IntervalFigures? { unknown > 0 ? nil : now - since }
}

/// The figures of one 5-minute interval that a bill reads.
public struct IntervalFigures: Sendable, Hashable {
    public var rx: Int64
    public var tx: Int64
    public var covered: Int64
    public var measured: Int64
    /// The interval's flagged milliseconds plus its count of implausible steps: above zero when it holds one
    /// (``BucketValues/isFlagged``).
    public var flagged: Int64

    public init(rx: Int64, tx: Int64, covered: Int64, measured: Int64 = 0, flagged: Int64 = 0) {
        self.rx = rx
        self.tx = tx
        self.covered = covered
        self.measured = measured
        self.flagged = flagged
    }

    /// The figures of a bucket.
    public init(_ values: BucketValues) {
        self.init(
            rx: values.traffic[.rxBytes], tx: values.traffic[.txBytes], covered: values.coveredMilliseconds,
            measured: values.measuredMilliseconds,
            flagged: Saturating.sum(values.flaggedMilliseconds, values.count(of: .implausible)))
    }

    /// The interval as a bill reads it; nil when it has no data.
    public var interval: BillInterval? {
        BillInterval(
            rxBytes: rx, txBytes: tx, measuredMilliseconds: measured, coveredMilliseconds: covered, flagged: flagged > 0
        )
    }

    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(
            rx: lhs.rx &+ rhs.rx, tx: lhs.tx &+ rhs.tx, covered: lhs.covered &+ rhs.covered,
            measured: lhs.measured &+ rhs.measured, flagged: lhs.flagged &+ rhs.flagged)
    }

    public static func - (lhs: Self, rhs: Self) -> Self {
        Self(
            rx: lhs.rx &- rhs.rx, tx: lhs.tx &- rhs.tx, covered: lhs.covered &- rhs.covered,
            measured: lhs.measured &- rhs.measured, flagged: lhs.flagged &- rhs.flagged)
    }
}

/// One consistent read of the store for a pass of bill keeping (``MetricStore/withBillSnapshot(_:)``): the
/// intervals it takes in and the changed intervals it swaps in are seen at the same revision, so a change
/// committed during the pass is left for the next one, never lost or counted twice.
public protocol BillSnapshot {
    /// The store's revision.
    var revision: Int64 { get }
    /// Intervals that changed after billing took them in, oldest first, at most `limit`.
    func changedIntervals(limit: Int) async throws -> [ChangedInterval]
    /// Each series' 5-minute buckets in `[from, to)` (bytes and coverage), one series at a time, in series order.
    func buckets(series: [Int64], from: Int64, to: Int64, _ body: (Int64, [Bucket]) throws -> Void) async throws
}

/// One pass of keeping bills current, written in one transaction.
public struct BillUpdate: Sendable {
    public var bills: [StoredBill]
    public var adjustments: [BillAdjustment]
    /// Every interval before this has been taken in.
    public var cursor: Int64
    /// Changed intervals now accounted for, as the pass read them: what they held then is in the bills, and only
    /// what changed since is left to the next pass.
    public var settled: [ChangedInterval]

    public init(bills: [StoredBill], adjustments: [BillAdjustment], cursor: Int64, settled: [ChangedInterval]) {
        self.bills = bills
        self.adjustments = adjustments
        self.cursor = cursor
        self.settled = settled
    }
}
