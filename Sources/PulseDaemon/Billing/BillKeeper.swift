import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// Keeps every series' 95th-percentile bills current in the store as 5-minute intervals end, so a fresh
/// `netpulse` answers without sorting a period of rates (`docs/windows.md`, "95th-percentile billing").
///
/// One pass (``update(now:)``), its reads from one snapshot of the store (``BillSnapshot``):
/// 1. takes in the intervals that ended since the last pass (waiting `grace` for late batches): one read of the
///    5-minute buckets of every series, then each open bill's tracker adds its intervals;
/// 2. swaps late data into open bills: an interval that changed after it was taken in has its old rates replaced
///    by its new ones in the tracker ( ``BillTracker/replace(_:with:)``); when the tracker cannot tell the result, or
///    the change is not known in bytes, the bill is rebuilt from its period's buckets. An issued bill is not changed:
///    an adjustment is recorded beside it when its value would change;
/// 3. issues (freezes) bills `closeAfter` past the end of their period;
/// and writes it all, with the new cursor, in one transaction. A replayed spool touches every interval it fills in:
/// swapping costs a few compares each, where rebuilding read the whole month of the series every pass.
public struct BillKeeper: Sendable {
    public let store: any MetricStore
    public let billing: BillingPolicy
    public let rules: ScopeRules
    /// How long after an interval ends it is taken in (batches arrive a few seconds after their samples).
    public let grace: Int64

    public init(store: any MetricStore, billing: BillingPolicy, rules: ScopeRules, grace: Int64 = 60_000) {
        self.store = store
        self.billing = billing
        self.rules = rules
        self.grace = grace
    }

    /// What one pass did.
    public struct Report: Sendable, Hashable {
        /// Intervals taken in.
        public var intervals = 0
        /// Changed intervals swapped into open bills.
        public var replaced = 0
        /// Bills read again from their period's buckets.
        public var rebuilt = 0
        /// Of those, bills rebuilt because a change was not known in bytes (a virtual gap came or went), and because
        /// the tracker could not tell the result of a swap.
        public var rebuiltUnknown = 0
        public var rebuiltRefused = 0
        public var issued = 0
        public var adjustments = 0
        /// Bills written to the store at the end of the pass.
        public var saved = 0

        public init() {}
    }

    public func update(now: Int64) async throws -> Report {
        let target = RollupLevel.fiveMinutes.bucketStart(now - grace)
        let lastCursor = try await store.billCursor()
        let catalogue = try await Catalogue.load(from: store, rules: rules)
        let engine = WindowEngine(
            store: store, catalogue: catalogue, levels: [], calendar: billing.calendar, billing: billing)
        var open = [Key: StoredBill]()
        for bill in try await store.openBills() { open[Key(bill.series, bill.bill.period.from)] = bill }
        let cursor = max(target, lastCursor)
        // Changes to the intervals about to be taken in are recorded from now on, before the snapshot reads them:
        // one committed in between is in both, and settling the pass takes it off the record (BillUpdate.settled).
        if target > lastCursor { try await store.markBillIntervals(before: target) }

        let policy = billing
        var pass = try await store.withBillSnapshot { [open] snapshot in
            var pass = Pass(
                bills: open, catalogue: catalogue, revision: snapshot.revision,
                period: { series, time in
                    let terms = policy.terms(for: engine.billedScope(series))
                    let span = policy.calendar.billingPeriod(day: terms.day, containing: time)
                    return (Window(from: span.from, to: span.to, name: "billing-period"), terms)
                })
            try await pass.takeIn(from: lastCursor, to: target, snapshot)
            try await pass.swapChanges(cursor: cursor, snapshot)
            return pass
        }

        // Late data in periods without an open bill: an issued bill gets an adjustment when its value would change.
        for fresh in pass.unopened {
            try Task.checkCancellation()
            let key = Key(fresh.series, fresh.bill.period.from)
            if let issued = try await store.bills(series: [fresh.series], containing: fresh.bill.period.from).first,
                issued.issuedAt != nil
            {
                let previous =
                    try await store.billAdjustments(series: [fresh.series], containing: fresh.bill.period.from).last?
                    .bill ?? issued.bill
                if fresh.bill.value != previous.value || fresh.bill.intervals != previous.intervals {
                    pass.adjustments.append(fresh.adjustment(foundAt: now))
                    pass.report.adjustments += 1
                }
            } else {
                pass.bills[key] = fresh
                pass.changed.insert(key)
            }
        }

        // 3. Issue bills whose period closed long enough ago.
        for (key, bill) in pass.bills where bill.issuedAt == nil && bill.bill.period.to + billing.closeAfter <= now {
            var issued = bill
            if issued.asOf < bill.bill.period.to, let series = catalogue[key.series] {
                // Never fully taken in (a long pause): issue what the period's buckets say.
                let period = bill.bill.period
                let buckets =
                    try await store.buckets(level: .fiveMinutes, series: [series.id], from: period.from, to: period.to)[
                        series.id] ?? []
                issued = Self.rebuilt(
                    series.id, from: buckets, period, billing.terms(for: engine.billedScope(series)), asOf: period.to,
                    revision: pass.revision)
            }
            issued.issuedAt = now
            issued.tracker = nil
            pass.bills[key] = issued
            pass.changed.insert(key)
            pass.report.issued += 1
        }

        try await store.saveBills(
            BillUpdate(
                bills: pass.changed.compactMap { pass.bills[$0] }, adjustments: pass.adjustments, cursor: cursor,
                settled: pass.settled))
        pass.report.saved = pass.changed.count
        return pass.report
    }

    /// The open bill of `series` for `period` made from the period's 5-minute buckets that ended by `asOf`.
    static func rebuilt(
        _ series: Int64, from buckets: [Bucket], _ period: Window, _ terms: BillingTerms, asOf: Int64,
        revision: Int64
    ) -> StoredBill {
        let tracker = BillTracker.rebuilt(from: buckets, period: period, now: asOf, terms: terms.intervals)
        return StoredBill(
            series: series,
            bill: tracker.bill(period: period, now: asOf, method: terms.method, rank: terms.rank, revision: revision),
            asOf: asOf, tracker: tracker)
    }

    /// The part of a pass that reads the snapshot.
    struct Pass: Sendable {
        var bills: [Key: StoredBill]
        let catalogue: Catalogue
        let revision: Int64
        /// The billing period holding a time, and its terms, for a series.
        let period: @Sendable (SeriesRecord, Int64) -> (Window, BillingTerms)
        var changed = Set<Key>()
        var report = Report()
        var adjustments = [BillAdjustment]()
        /// Bills this pass read (partly) from the snapshot: their intervals from this time on hold what the
        /// snapshot holds, so changes recorded for them are in already.
        var readFrom = [Key: Int64]()
        /// Changed intervals read, settled when the pass is saved.
        var settled = [ChangedInterval]()
        /// Bills rebuilt for late data in periods without an open bill (issued, or never made).
        var unopened = [StoredBill]()

        /// A bill rebuilt from its period's buckets that ended by `asOf`.
        func rebuilt(
            _ series: SeriesRecord, _ period: Window, _ terms: BillingTerms, asOf: Int64, _ snapshot: any BillSnapshot
        )
            async throws -> StoredBill
        {
            var buckets = [Bucket]()
            try await snapshot.buckets(series: [series.id], from: period.from, to: period.to) { buckets = $1 }
            return BillKeeper.rebuilt(series.id, from: buckets, period, terms, asOf: asOf, revision: revision)
        }

        /// 1. The intervals that ended since the last pass.
        mutating func takeIn(from lastCursor: Int64, to target: Int64, _ snapshot: any BillSnapshot) async throws {
            if lastCursor == 0 {
                // The first pass: every series' current bill, read from its buckets.
                for series in catalogue.series {
                    let (span, terms) = period(series, target - 1)
                    let key = Key(series.id, span.from)
                    bills[key] = try await rebuilt(series, span, terms, asOf: target, snapshot)
                    readFrom[key] = .min
                    changed.insert(key)
                    report.rebuilt += 1
                }
                return
            }
            guard target > lastCursor else { return }
            var intervals = [Int64: [Int64: BillInterval]]()
            try await snapshot.buckets(series: catalogue.series.map(\.id), from: lastCursor, to: target) {
                id, buckets in
                for bucket in buckets {
                    if let interval = BillInterval(bucket.values) {
                        intervals[id, default: [:]][bucket.start] = interval
                    }
                }
            }
            for series in catalogue.series {
                let seriesIntervals = intervals[series.id] ?? [:]
                var start = lastCursor
                while start < target {
                    // The intervals of one period at a time (a pass may cross the start of the next one).
                    let (span, terms) = period(series, start)
                    let end = min(target, span.to)
                    let key = Key(series.id, span.from)
                    var bill: StoredBill
                    if let open = bills[key], open.tracker?.terms == terms.intervals, open.asOf == start {
                        bill = open
                        readFrom[key] = start
                    } else {
                        // A new series or period, a bill not current up to here, or one kept for other terms: read
                        // what came before.
                        bill = try await rebuilt(series, span, terms, asOf: start, snapshot)
                        readFrom[key] = .min
                        report.rebuilt += 1
                    }
                    for interval in stride(from: start, to: end, by: Int(Bill.interval)) {
                        guard let figures = seriesIntervals[Int64(interval)] else { continue }
                        bill.tracker!.add(figures)
                        report.intervals += 1
                    }
                    bill.asOf = end
                    bill.bill = bill.tracker!.bill(
                        period: span, now: end, method: terms.method, rank: terms.rank, revision: revision)
                    bills[key] = bill
                    changed.insert(key)
                    start = end
                }
            }
        }

        /// 2. Intervals that changed after they were taken in.
        mutating func swapChanges(cursor: Int64, _ snapshot: any BillSnapshot) async throws {
            settled = try await snapshot.changedIntervals(limit: 1_000_000)
            var order = [Key]()
            var byBill = [Key: [ChangedInterval]]()
            for change in settled {
                guard let series = catalogue[change.series] else { continue }
                let key = Key(series.id, period(series, change.start).0.from)
                if byBill[key] == nil { order.append(key) }
                byBill[key, default: []].append(change)
            }
            for key in order {
                let series = catalogue[key.series]!
                let changes = byBill[key]!
                let (span, terms) = period(series, key.period)
                guard var bill = bills[key], bill.issuedAt == nil, var tracker = bill.tracker else {
                    await unopened.append(try rebuilt(series, span, terms, asOf: min(cursor, span.to), snapshot))
                    report.rebuilt += 1
                    continue
                }
                // Intervals the tracker took in from an earlier snapshot: from `readFrom` on it has this one's.
                let takenBefore = min(readFrom[key] ?? bill.asOf, bill.asOf)
                var swapped = 0
                var known = tracker.terms == terms.intervals
                for change in changes where known && change.start < takenBefore {
                    guard let before = change.before else {
                        report.rebuiltUnknown += 1
                        known = false
                        break
                    }
                    guard tracker.replace(before.interval, with: change.now.interval) else {
                        report.rebuiltRefused += 1
                        known = false
                        break
                    }
                    swapped += 1
                }
                if known {
                    bill.tracker = tracker
                    bill.bill = tracker.bill(
                        period: span, now: bill.asOf, method: terms.method, rank: terms.rank, revision: revision)
                    report.replaced += swapped
                } else {
                    bill = try await rebuilt(series, span, terms, asOf: min(cursor, span.to), snapshot)
                    readFrom[key] = .min
                    report.rebuilt += 1
                }
                bills[key] = bill
                changed.insert(key)
            }
        }
    }

    struct Key: Hashable {
        var series: Int64
        var period: Int64
        init(_ series: Int64, _ period: Int64) {
            self.series = series
            self.period = period
        }
    }
}
