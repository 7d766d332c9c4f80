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

    public init(series: Int64, foundAt: Int64, bill: Bill) {
        self.series = series
        self.foundAt = foundAt
        self.bill = bill
    }
}

/// One pass of keeping bills current, written in one transaction.
public struct BillUpdate: Sendable {
    public var bills: [StoredBill]
    public var adjustments: [BillAdjustment]
    /// Every interval before this has been taken in.
    public var cursor: Int64
    /// Changed intervals now accounted for.
    public var settled: [(series: Int64, start: Int64)]

    public init(
        bills: [StoredBill], adjustments: [BillAdjustment], cursor: Int64, settled: [(series: Int64, start: Int64)]
    ) {
        self.bills = bills
        self.adjustments = adjustments
        self.cursor = cursor
        self.settled = settled
    }
}
