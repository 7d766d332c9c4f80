import PulseAnalytics
import PulseCore
import PulseStore

/// Keeps every series' 95th-percentile bills current in the store as 5-minute intervals end, so a fresh
/// `netpulse` answers without sorting a period of rates (`docs/windows.md`, "95th-percentile billing").
///
/// One pass (``update(now:)``):
/// 1. takes in the intervals that ended since the last pass (waiting `grace` for late batches): one read of the
///    5-minute buckets of every series, then each open bill's tracker adds its intervals;
/// 2. rebuilds the bills of periods whose past intervals changed (late data) from their buckets; an issued bill is
///    not changed, an adjustment is recorded beside it when its value would change;
/// 3. issues (freezes) bills `closeAfter` past the end of their period;
/// and writes it all, with the new cursor, in one transaction.
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
        public var intervals = 0
        public var rebuilt = 0
        public var issued = 0
        public var adjustments = 0
    }

    public func update(now: Int64) async throws -> Report {
        var report = Report()
        let target = RollupLevel.fiveMinutes.bucketStart(now - grace)
        let lastCursor = try await store.billCursor()
        let catalogue = try await Catalogue.load(from: store, rules: rules)
        let engine = WindowEngine(
            store: store, catalogue: catalogue, levels: [], calendar: billing.calendar, billing: billing)
        let revision = try await store.totals().revision
        var bills = [Key: StoredBill]()
        for bill in try await store.openBills() { bills[Key(bill.series, bill.bill.period.from)] = bill }
        var changed = Set<Key>()
        var adjustments = [BillAdjustment]()

        func period(of series: SeriesRecord, containing time: Int64) -> (Window, BillingMethod) {
            let terms = billing.terms(for: engine.billedScope(series))
            let span = billing.calendar.billingPeriod(day: terms.day, containing: time)
            return (Window(from: span.from, to: span.to, name: "billing-period"), terms.method)
        }

        /// A bill rebuilt from its period's buckets as of `asOf`.
        func rebuilt(_ series: SeriesRecord, _ period: Window, _ method: BillingMethod, asOf: Int64) async throws
            -> StoredBill
        {
            let buckets =
                try await store.buckets(level: .fiveMinutes, series: [series.id], from: period.from, to: period.to)[
                    series.id] ?? []
            let tracker = BillTracker.rebuilt(from: buckets, period: period, now: asOf)
            return StoredBill(
                series: series.id, bill: tracker.bill(period: period, now: asOf, method: method, revision: revision),
                asOf: asOf, tracker: tracker)
        }

        // 1. The intervals that ended since the last pass.
        if lastCursor == 0 {
            // The first pass: every series' current bill, read from its buckets.
            for series in catalogue.series {
                try Task.checkCancellation()
                let (span, method) = period(of: series, containing: target - 1)
                bills[Key(series.id, span.from)] = try await rebuilt(series, span, method, asOf: target)
                changed.insert(Key(series.id, span.from))
                report.rebuilt += 1
            }
        } else if target > lastCursor {
            let buckets = try await store.buckets(
                level: .fiveMinutes, series: catalogue.series.map(\.id), from: lastCursor, to: target)
            for series in catalogue.series {
                try Task.checkCancellation()
                var rates = [Int64: (Int64, Int64)]()
                for bucket in buckets[series.id] ?? [] where bucket.values.hasData {
                    rates[bucket.start] = (
                        Bill.intervalRate(bytes: bucket.values.traffic[.rxBytes]),
                        Bill.intervalRate(bytes: bucket.values.traffic[.txBytes])
                    )
                }
                var start = lastCursor
                while start < target {
                    // The intervals of one period at a time (a pass may cross the start of the next one).
                    let (span, method) = period(of: series, containing: start)
                    let end = min(target, span.to)
                    let key = Key(series.id, span.from)
                    var bill: StoredBill
                    if let open = bills[key], open.tracker != nil, open.asOf == start {
                        bill = open
                    } else {
                        // A new series or period, or a bill not current up to here: read what came before.
                        bill = try await rebuilt(series, span, method, asOf: start)
                        report.rebuilt += 1
                    }
                    for interval in stride(from: start, to: end, by: Int(Bill.interval)) {
                        guard let (rx, tx) = rates[Int64(interval)] else { continue }
                        bill.tracker!.add(inbound: rx, outbound: tx)
                        report.intervals += 1
                    }
                    bill.asOf = end
                    bill.bill = bill.tracker!.bill(period: span, now: end, method: method, revision: revision)
                    bills[key] = bill
                    changed.insert(key)
                    start = end
                }
            }
        }
        let cursor = max(target, lastCursor)

        // 2. Periods whose past intervals changed.
        let dirty = try await store.changedBillIntervals(limit: 1_000_000)
        var seen = Set<Key>()
        for interval in dirty {
            try Task.checkCancellation()
            guard let series = catalogue[interval.series] else { continue }
            let (span, method) = period(of: series, containing: interval.start)
            let key = Key(series.id, span.from)
            guard seen.insert(key).inserted else { continue }
            let fresh = try await rebuilt(series, span, method, asOf: min(cursor, span.to))
            report.rebuilt += 1
            if let open = bills[key], open.issuedAt == nil {
                bills[key] = fresh
                changed.insert(key)
            } else if let issued = try await store.bills(series: [series.id], containing: span.from).first,
                issued.issuedAt != nil
            {
                let previous =
                    try await store.billAdjustments(series: [series.id], containing: span.from).last?.bill
                    ?? issued.bill
                if fresh.bill.value != previous.value || fresh.bill.intervals != previous.intervals {
                    adjustments.append(BillAdjustment(series: series.id, foundAt: now, bill: fresh.bill))
                    report.adjustments += 1
                }
            } else {
                bills[key] = fresh
                changed.insert(key)
            }
        }

        // 3. Issue bills whose period closed long enough ago.
        for (key, bill) in bills where bill.issuedAt == nil && bill.bill.period.to + billing.closeAfter <= now {
            var issued = bill
            if issued.asOf < bill.bill.period.to {
                // Never fully taken in (a long pause): issue what the period's buckets say.
                if let series = catalogue[key.series] {
                    issued = try await rebuilt(series, bill.bill.period, bill.bill.method, asOf: bill.bill.period.to)
                }
            }
            issued.issuedAt = now
            issued.tracker = nil
            bills[key] = issued
            changed.insert(key)
            report.issued += 1
        }

        try await store.saveBills(
            BillUpdate(
                bills: changed.compactMap { bills[$0] }, adjustments: adjustments, cursor: cursor,
                settled: dirty.map { ($0.series, $0.start) }))
        return report
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
