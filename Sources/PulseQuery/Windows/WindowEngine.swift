import PulseAnalytics
import PulseCore
import PulseStore

/// Answers the questions Netpulse is run for, for any series and window, from the rollups of any
/// ``MetricStore``: figures, vnStat-like traffic tables, top-N and 95th-percentile bills. The math is
/// PulseAnalytics' (pure); this reads what it needs, with as few queries as it can.
public struct WindowEngine: Sendable {
    public let store: any MetricStore
    public let catalogue: Catalogue
    public let levels: [RetainedLevel]
    public let calendar: CivilCalendar
    public let billing: BillingPolicy
    /// Sums read before, shared by the readers of this engine (``sharingSums()``); nil: every read its own.
    let memo: SumsMemo?

    public init(
        store: any MetricStore, catalogue: Catalogue, levels: [RetainedLevel], calendar: CivilCalendar,
        billing: BillingPolicy
    ) {
        self.store = store
        self.catalogue = catalogue
        self.levels = levels.sorted { $0.level < $1.level }
        self.calendar = calendar
        self.billing = billing
        memo = nil
    }

    private init(_ engine: WindowEngine, memo: SumsMemo) {
        store = engine.store
        catalogue = engine.catalogue
        levels = engine.levels
        calendar = engine.calendar
        billing = engine.billing
        self.memo = memo
    }

    /// This engine with a memo of the sums it reads (``SumsMemo``): for one dashboard page, whose panels sum the
    /// same interfaces over the same range.
    public func sharingSums() -> WindowEngine { WindowEngine(self, memo: SumsMemo()) }

    /// The store's levels with how long `retention` keeps each.
    public static func retained(_ levels: [RollupLevel], _ retention: RetentionPolicy) -> [RetainedLevel] {
        levels.map { RetainedLevel(level: $0, keep: retention.keeps($0)) }
    }

    /// The finest level: sliding windows are aligned to it.
    public var finest: RollupLevel { levels.first?.level ?? .oneMinute }

    /// `spec` at `now`, sliding windows aligned to the finest level.
    public func window(_ spec: WindowSpec, now: Int64) -> Window {
        spec.resolve(now: now, calendar: calendar, alignment: finest, billingDay: billing.day)
    }

    // MARK: Sums

    /// Each series' buckets in the window merged into one (exact byte totals), reading the middle of the window at
    /// coarse levels and its edges at fine ones.
    public func sums(
        _ ids: [Int64], window: Window, now: Int64, fields: BucketFields = .all
    ) async throws -> [Int64: BucketValues] {
        guard let memo else { return try await readSums(ids, window: window, now: now, fields: fields) }
        return try await memo.sums(ids, window: window, now: now, fields: fields) { ids, fields in
            try await readSums(ids, window: window, now: now, fields: fields)
        }
    }

    private func readSums(
        _ ids: [Int64], window: Window, now: Int64, fields: BucketFields
    ) async throws -> [Int64: BucketValues] {
        guard var pieces = Resolution.pieces(of: window, now: now, levels: levels) else {
            throw QueryError(
                "the window \(RFC3339.text(window.from)) … \(RFC3339.text(window.to)) does not start and end on \(finest) boundaries that are still kept"
            )
        }
        // A window whose finest buckets the store holds in memory is read whole at that level: the last hour just
        // after an hour boundary is otherwise its middle at the hourly level, 10,000 rows from the file where the
        // held 5-minute buckets (and the sums kept over them) need none. Sums are exact at every level, so the
        // figures are the same.
        if store.holdsRecentBuckets(level: finest, from: window.from) {
            pieces = [(finest, window)]
        }
        // The first level's sums as the store gives them (a window of the last hour is one level: 10,000 sums not
        // copied into another dictionary), the others added into them.
        var result = [Int64: BucketValues]()
        for (level, piece) in pieces {
            let sums = try await store.sums(level: level, series: ids, from: piece.from, to: piece.to, fields: fields)
            guard !result.isEmpty else {
                result = sums
                continue
            }
            for (id, values) in sums { result[id, default: .empty].merge(values) }
        }
        return result
    }

    // MARK: Figures

    /// The figures of each series over `window`, read at `resolution` (or the default, `docs/windows.md`).
    public func figures(
        _ series: [SeriesRecord], window: Window, now: Int64, resolution: RollupLevel? = nil
    ) async throws -> [ScopeFigures] {
        let level = try self.resolution(for: window, now: now, preferred: resolution)
        let interfaces = Set(series.lazy.filter { $0.kind == .interface }.map(\.id))
        // A scope's coverage and utilisation rest on the member time and capacity its buckets carry, not on who
        // its members are today (`docs/windows.md`, "Rollups"). Each series' buckets are dropped once its figures
        // are made: a snapshot's month of 5-minute buckets for 646 hosts and groups, held at once, took 1.1 GB.
        let figures = try await store.reduceBuckets(
            level: level, series: series.map(\.id), from: window.from, to: window.to, fields: .all
        ) { id, buckets in
            WindowFigures.compute(
                buckets: buckets, window: window, resolution: level, now: now, isInterface: interfaces.contains(id))
        }
        return series.map { record in
            ScopeFigures(
                series: record,
                figures: figures[record.id]
                    ?? WindowFigures.compute(
                        buckets: [], window: window, resolution: level, now: now,
                        isInterface: record.kind == .interface))
        }
    }

    /// The level a window is read at, or an error saying why it cannot be.
    public func resolution(for window: Window, now: Int64, preferred: RollupLevel? = nil) throws -> RollupLevel {
        guard window.from < window.to else {
            throw QueryError("the window is empty: it must end after it starts")
        }
        if let preferred, !Resolution.candidates(for: window, now: now, levels: levels).contains(preferred) {
            throw QueryError(
                "the window \(RFC3339.text(window.from)) … \(RFC3339.text(window.to)) cannot be read at \(preferred): its ends must fall on \(preferred) boundaries that are still kept"
            )
        }
        guard let level = Resolution.choose(for: window, now: now, levels: levels, preferred: preferred) else {
            throw QueryError(
                "the window \(RFC3339.text(window.from)) … \(RFC3339.text(window.to)) does not start and end on bucket boundaries that are still kept (\(levels.map(\.level.description).joined(separator: ", ")))"
            )
        }
        return level
    }

    // MARK: Traffic tables

    /// Consecutive windows of `unit` covering `window` (vnStat's 5-minute, hourly, daily, monthly and yearly
    /// views), each with its totals, average rates and coverage; periods before the first with data are left out,
    /// as vnStat leaves out days before it started.
    public func traffic(
        _ series: SeriesRecord, unit: TrafficUnit, window: Window, now: Int64
    ) async throws -> [TrafficRow] {
        var rows = [TrafficRow]()
        let spans = unit.spans(covering: window, calendar: calendar)
        // Spans that are each one bucket of a kept level (hours, in a zone on whole-hour offsets) are read in one
        // query instead of one per span: a month of hours is 720 buckets, not 720 queries.
        var whole: [Int64: BucketValues]?
        if let first = spans.first, let last = spans.last,
            let kept = levels.first(where: { retained in
                retained.level.width == first.to - first.from
                    && retained.keep.map { first.from >= now - $0 } ?? true
                    && spans.allSatisfy {
                        $0.to - $0.from == retained.level.width && retained.level.bucketStart($0.from) == $0.from
                    }
            })
        {
            let buckets = try await store.buckets(level: kept.level, series: [series.id], from: first.from, to: last.to)
            whole = Dictionary((buckets[series.id] ?? []).map { ($0.start, $0.values) }) { first, _ in first }
        }
        for span in spans {
            let values: BucketValues
            if let whole {
                values = whole[span.from] ?? .empty
            } else {
                values = try await sums([series.id], window: span, now: now)[series.id] ?? .empty
            }
            let elapsed = span.elapsed(now: now)
            // A row is read as one sum: a scope's members are its member time over the elapsed time, rounded up (a
            // bucket's rule, `docs/windows.md`, "Windows").
            let members =
                series.kind == .interface ? 1 : max(1, RateMath.roundedUp(values.memberMilliseconds, over: elapsed))
            let possible = Saturating.product(elapsed, members)
            rows.append(
                TrafficRow(
                    window: span, values: values,
                    average: Direction(
                        rx: RateMath.rate(bytes: values.traffic[.rxBytes], milliseconds: elapsed),
                        tx: RateMath.rate(bytes: values.traffic[.txBytes], milliseconds: elapsed)),
                    coverage: RateMath.perMillion(values.coveredMilliseconds, of: possible) ?? 0))
        }
        return Array(rows.drop { !$0.values.hasData })
    }

    // MARK: Top-N

    /// The `count` series of `candidates` ranked highest by `ranking` over the window; ties by name. A series without
    /// a value (neither data nor bytes, no data, no packets) is not ranked (`docs/windows.md`, "Top-N").
    public func top(
        _ candidates: [SeriesRecord], by ranking: Ranking, window: Window, now: Int64, count: Int
    ) async throws -> [Ranked] {
        var values = [Int64: Int64]()
        switch ranking {
        case .bytes, .errors:
            let fields: BucketFields = ranking == .bytes ? [.bytes, .coverage] : .packets
            for (id, sums) in try await sums(candidates.map(\.id), window: window, now: now, fields: fields) {
                if ranking == .bytes {
                    // Ranked with data or bytes in the window (`docs/windows.md`, "Top-N"): an idle interface with
                    // 0, not a series whose only rows there are a step taken out again.
                    let bytes = sums.traffic[.rxBytes] + sums.traffic[.txBytes]
                    if bytes > 0 || sums.coveredMilliseconds > 0 { values[id] = bytes }
                } else if let ratio = RateMath.perMillion(
                    sums.traffic[.rxErrors] + sums.traffic[.txErrors],
                    of: sums.traffic[.rxPackets] + sums.traffic[.txPackets])
                {
                    values[id] = ratio
                }
            }
        case .peak:
            let interfaces = candidates.filter { $0.kind == .interface }
            for (id, sums) in try await sums(
                interfaces.map(\.id), window: window, now: now, fields: [.peaks, .coverage])
            where sums.hasData {
                values[id] = Int64(clamping: max(sums.peakRx, sums.peakTx)) * 1_000
            }
            let scopes = candidates.filter { $0.kind != .interface }
            if !scopes.isEmpty {
                for scope in try await figures(scopes, window: window, now: now) {
                    if let rx = scope.figures.peak.rx, let tx = scope.figures.peak.tx {
                        values[scope.series.id] = max(rx, tx)
                    }
                }
            }
        case .p95:
            // 5-minute rates, as bills use, where the window falls on 5-minute boundaries; else its resolution.
            let aligned = Resolution.candidates(for: window, now: now, levels: levels).contains(.fiveMinutes)
            let level = aligned ? RollupLevel.fiveMinutes : try resolution(for: window, now: now)
            // One series at a time, reading only what a rate needs: a week of 10,000 interfaces is 20 million
            // buckets.
            values = try await store.reduceBuckets(
                level: level, series: candidates.map(\.id), from: window.from, to: window.to,
                fields: [.bytes, .coverage]
            ) { _, list in
                let figures = WindowFigures.compute(
                    buckets: list, window: window, resolution: level, now: now, isInterface: true)
                guard let rx = figures.p95.rx, let tx = figures.p95.tx else { return nil }
                return max(rx, tx)
            }
        }
        return candidates.compactMap { record in values[record.id].map { Ranked(series: record, value: $0) } }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.series.name < $1.series.name }
            .prefix(count).map { $0 }
    }

    // MARK: Bills

    /// The bill of a scope for the billing period holding `at` (by the scope's own billing day): the one the store
    /// keeps current (``BillKeeper``) when there is one, else computed from the period's 5-minute buckets.
    public func bill(_ scope: SeriesRecord, containing at: Int64, now: Int64) async throws -> BillLine {
        try await bills([scope], containing: { _ in at }, now: now)[0]
    }

    /// The bills of `scopes`, each for the period holding `at(scope)`: one read of the kept bills per distinct
    /// time, the missing ones computed.
    public func bills(
        _ scopes: [SeriesRecord], containing at: (SeriesRecord) -> Int64, now: Int64
    ) async throws -> [BillLine] {
        var stored = [Int64: StoredBill]()
        var adjustments = [Int64: [BillAdjustment]]()
        for (time, group) in Dictionary(grouping: scopes, by: at) {
            let ids = group.map(\.id)
            for bill in try await store.bills(series: ids, containing: time) { stored[bill.series] = bill }
            for adjustment in try await store.billAdjustments(series: ids, containing: time) {
                adjustments[adjustment.series, default: []].append(adjustment)
            }
        }
        var lines = [BillLine]()
        // Periods by billing day and time: a calendar computation each would be most of the cost for 10,000 bills.
        var periods = [[Int64]: (from: Int64, to: Int64)]()
        for scope in scopes {
            let terms = billing.terms(for: billedScope(scope))
            let time = at(scope)
            let span =
                periods[[Int64(terms.day), time]]
                ?? billing.calendar.billingPeriod(day: terms.day, containing: time)
            periods[[Int64(terms.day), time]] = span
            if let kept = stored[scope.id], kept.bill.period.from == span.from {
                lines.append(
                    BillLine(
                        series: scope, bill: kept.bill, asOf: kept.asOf, issuedAt: kept.issuedAt,
                        adjustments: adjustments[scope.id] ?? []))
                continue
            }
            let period = Window(from: span.from, to: span.to, name: "billing-period")
            let buckets =
                try await store.buckets(
                    level: .fiveMinutes, series: [scope.id], from: period.from, to: period.to)[scope.id] ?? []
            lines.append(
                BillLine(
                    series: scope,
                    bill: Bill.compute(
                        buckets: buckets, period: period, now: now, method: terms.method, terms: terms.intervals,
                        rank: terms.rank),
                    asOf: min(now, period.to), issuedAt: nil, adjustments: []))
        }
        return lines
    }

    /// What each bill rests on beyond its intervals (`netpulse bill --members`): the counted interfaces and link
    /// speed of its scope over the period, as of the steps its buckets hold (``WindowFigures/members``, so a later
    /// relabelling, kind or `[aggregation]` change does not change them), and the hosts that were in it then, with
    /// when they joined or left within the period (from the membership history).
    public func billMembers(_ lines: [BillLine]) async throws -> [Int64: BillMembers] {
        var result = [Int64: BillMembers]()
        let periods = Dictionary(grouping: lines) { [$0.bill.period.from, $0.bill.period.to, $0.asOf] }
        for (key, group) in periods {
            let period = Window(from: key[0], to: key[1])
            let buckets = try await store.buckets(
                level: .fiveMinutes, series: group.map(\.series.id), from: period.from, to: period.to)
            let counted = Window(from: period.from, to: max(period.from, min(period.to, key[2])))
            for line in group {
                let figures = WindowFigures.compute(
                    buckets: buckets[line.series.id] ?? [], window: period, resolution: .fiveMinutes, now: key[2],
                    isInterface: line.series.kind == .interface)
                result[line.series.id] = BillMembers(
                    interfaces: figures.members, speedMbps: figures.speedMbps,
                    hosts: hosts(of: line.series, during: counted))
            }
        }
        return result
    }

    /// The hosts of a scope during `window`: an interface's and a host's own; a group's from its membership history
    /// (an agent's first memberships hold from the beginning of time, as at ingest), each with the times inside the
    /// window it joined or left; none listed for the fleet (every host).
    func hosts(of scope: SeriesRecord, during window: Window) -> [BillMembers.Host] {
        switch scope.kind {
        case .interface, .host:
            return scope.agent.map { [BillMembers.Host(name: $0, from: nil, to: nil)] } ?? []
        case .fleet:
            return []
        case .group:
            return scope.group.map { group in
                catalogue.memberships(of: group, during: window).map { membership in
                    BillMembers.Host(
                        name: membership.agent, from: membership.from > window.from ? membership.from : nil,
                        to: membership.to.flatMap { $0 < window.to ? $0 : nil })
                }.sorted { ($0.name, $0.from ?? .min) < ($1.name, $1.from ?? .min) }
            } ?? []
        }
    }

    /// How billing overrides name a series.
    public func billedScope(_ record: SeriesRecord) -> BilledScope {
        switch record.kind {
        case .fleet: .fleet
        case .group: .group(record.group!)
        case .host: .host(record.agent ?? "")
        case .interface: .interface(agent: record.agent ?? "", name: record.interface?.description ?? "")
        }
    }
}

/// One series' figures over a window.
public struct ScopeFigures: Sendable, Hashable {
    public var series: SeriesRecord
    public var figures: WindowFigures
}

/// What top-N ranks by.
public enum Ranking: String, Sendable, Hashable, CaseIterable {
    /// Bytes in + out.
    case bytes
    /// The peak rate.
    case peak
    /// The larger of the in and out 95th percentiles of 5-minute rates.
    case p95
    /// The error ratio (parts per million of packets).
    case errors
}

/// A series and the value it was ranked by.
public struct Ranked: Sendable, Hashable {
    public var series: SeriesRecord
    public var value: Int64
}

/// One bill of one scope.
public struct BillLine: Sendable, Hashable {
    public var series: SeriesRecord
    public var bill: Bill
    /// The bill counts the intervals that ended by then.
    public var asOf: Int64
    /// When it was issued and frozen (nil while the period is open).
    public var issuedAt: Int64?
    /// What late data would make an issued bill, oldest first.
    public var adjustments: [BillAdjustment]
}

/// What a bill's scope was over its period (``WindowEngine/billMembers(_:)``).
public struct BillMembers: Sendable, Hashable {
    /// Counted interfaces and their link speed (Mbit/s, 0 unknown), as of the period's steps.
    public var interfaces: Int
    public var speedMbps: Int64
    /// Hosts in the scope during the period; `from` and `to` when they joined or left inside it.
    public var hosts: [Host]

    public struct Host: Sendable, Hashable {
        public var name: String
        public var from: Int64?
        public var to: Int64?
    }
}

/// A row of a traffic table.
public struct TrafficRow: Sendable, Hashable {
    public var window: Window
    public var values: BucketValues
    public var average: Direction<Int64?>
    /// Parts per million.
    public var coverage: Int64
}

/// The periods of a traffic table.
public enum TrafficUnit: String, Sendable, Hashable, CaseIterable {
    case fiveMinutes = "5min"
    case hour
    case day
    case month
    case year

    /// The consecutive periods overlapping `window`, clipped to it.
    func spans(covering window: Window, calendar: CivilCalendar) -> [Window] {
        var spans = [Window]()
        var start = window.from
        while start < window.to {
            let span: (from: Int64, to: Int64)
            switch self {
            case .fiveMinutes:
                span = (
                    RollupLevel.fiveMinutes.bucketStart(start), RollupLevel.fiveMinutes.bucketStart(start) + 300_000
                )
            case .hour:
                span = (RollupLevel.oneHour.bucketStart(start), RollupLevel.oneHour.bucketStart(start) + 3_600_000)
            case .day: span = calendar.span(of: .day, containing: start)
            case .month: span = calendar.span(of: .month, containing: start)
            case .year: span = calendar.span(of: .year, containing: start)
            }
            let clipped = Window(from: max(span.from, window.from), to: min(span.to, window.to), name: rawValue)
            spans.append(clipped)
            start = span.to
        }
        return spans
    }
}
