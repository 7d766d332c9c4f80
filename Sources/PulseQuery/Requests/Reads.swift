import PulseAnalytics
import PulseCore
import PulseStore

// The reads the CLI and the HTTP API share (`netpulse rates|traffic|top|bill|export`, `/api/v1/…`): each parsed
// from its parameters and answered from a window engine as values that PulseFormats writes as a table, CSV or JSON.

/// Each interface's current rate and today's totals.
public struct RatesRead: Sendable {
    public var selection: ReadSelection

    /// No time range: the rates are now's and the totals today's, so `last` and the like are refused, not ignored.
    public static let names = ReadSelection.seriesNames

    public init(_ parameters: ReadParameters) throws(QueryError) {
        selection = try ReadSelection(parameters)
    }

    public struct Answer: Sendable {
        public var interfaces: [SeriesRecord]
        public var current: [Int64: Direction<Int64?>]
        public var today: [Int64: BucketValues]
        public var now: Int64
    }

    public func answer(_ engine: WindowEngine, now: Int64) async throws -> Answer {
        let interfaces = try engine.catalogue.select(selection.selection(.interface))
        let current = try await engine.currentRates(interfaces, now: now)
        let finest = engine.finest
        let day = engine.calendar.span(of: .day, containing: now)
        let today = try await engine.sums(
            interfaces.map(\.id), window: Window(from: day.from, to: finest.bucketStart(now) + finest.width), now: now)
        return Answer(interfaces: interfaces, current: current, today: today, now: now)
    }
}

/// Traffic per 5 minutes, hour, day, month or year (vnStat's views).
public struct TrafficRead: Sendable {
    public var selection: ReadSelection
    public var unit: TrafficUnit
    public var scope: ScopeChoice?

    public static let names = ReadSelection.names.union(["by", "scope"])

    public init(_ parameters: ReadParameters) throws(QueryError) {
        selection = try ReadSelection(parameters)
        unit = try parameters.choice("by", default: .day)
        scope = try parameters["scope"].map { _ throws(QueryError) in try parameters.choice("scope", default: .fleet) }
    }

    public struct Answer: Sendable {
        public var tables: [(SeriesRecord, [TrafficRow])]
        /// Counts whose time could not be placed, by series, received during `received`.
        public var unplaced: [Int64: UnplacedTotals]
        public var received: Window
        public var unit: TrafficUnit
        public var calendar: CivilCalendar
    }

    public func answer(_ engine: WindowEngine, now: Int64) async throws -> Answer {
        let fallback: WindowSpec =
            switch unit {
            case .fiveMinutes: .last(3_600_000)
            case .hour: .last(86_400_000)
            case .day: .last(30 * 86_400_000)
            case .month: .last(366 * 86_400_000)
            case .year: .last(3_650 * 86_400_000)
            }
        var window = try selection.window(engine, now: now, fallback: fallback)
        // Whole calendar units where the range was not given explicitly.
        if !selection.namesItsStart, unit == .day || unit == .month || unit == .year {
            let civil: CivilCalendar.Unit = unit == .day ? .day : unit == .month ? .month : .year
            window.from = engine.calendar.span(of: civil, containing: window.from).from
            window.to = engine.calendar.span(of: civil, containing: now).to
        }
        let series = try engine.catalogue.select(selection.selection(scope?.kind ?? selection.defaultScope))
        guard !series.isEmpty else { throw QueryError("nothing stored yet for this selection") }
        var tables = [(SeriesRecord, [TrafficRow])]()
        for record in series {
            tables.append((record, try await engine.traffic(record, unit: unit, window: window, now: now)))
        }
        // Counts whose time could not be placed, received on the days the range touches: in no row, so shown as one
        // of their own (`docs/windows.md`, "Time that cannot be placed").
        let received = Window(from: RollupLevel.oneDay.bucketStart(window.from), to: window.to)
        let unplaced = try await engine.unplaced(series, received: received)
        return Answer(tables: tables, unplaced: unplaced, received: received, unit: unit, calendar: engine.calendar)
    }
}

/// The top talkers: interfaces, hosts or groups ranked by bytes, peak rate, 95th percentile or error ratio.
public struct TopRead: Sendable {
    public var selection: ReadSelection
    public var ranking: Ranking
    public var count: Int
    public var scope: ScopeChoice

    public static let names = ReadSelection.names.union(["by", "top", "scope"])

    public init(_ parameters: ReadParameters) throws(QueryError) {
        selection = try ReadSelection(parameters)
        ranking = try parameters.choice("by", default: .bytes)
        count = try parameters.integer("top", in: 1...Int.max, default: 10)
        scope = try parameters.choice("scope", default: .interface)
        guard scope != .fleet else {
            throw QueryError(parameter: "scope", value: "fleet", "rank interfaces, hosts or groups")
        }
    }

    public struct Answer: Sendable {
        public var ranked: [Ranked]
        public var figures: [Int64: WindowFigures]
        public var window: Window
        public var ranking: Ranking
        public var count: Int
        public var scope: ScopeChoice
        /// The scope whose counted interfaces were ranked, when it chose them: `fleet`, `host:AGENT` or
        /// `group:KEY=VALUE`, as dashboards name scopes.
        public var countedIn: String?
        public var calendar: CivilCalendar
    }

    public func answer(_ engine: WindowEngine, now: Int64) async throws -> Answer {
        let window = try selection.window(engine, now: now, fallback: .last(86_400_000))
        _ = try engine.resolution(for: window, now: now)
        let candidates = try self.candidates(engine.catalogue, window: window)
        let ranked = try await engine.top(candidates, by: ranking, window: window, now: now, count: count)
        let figures = Dictionary(
            try await engine.figures(ranked.map(\.series), window: window, now: now).map { ($0.series.id, $0.figures) },
            uniquingKeysWith: { first, _ in first })
        return Answer(
            ranked: ranked, figures: figures, window: window, ranking: ranking, count: count, scope: scope,
            countedIn: countedIn, calendar: engine.calendar)
    }

    /// The series ranked. Interfaces, unless `--interface` names them, are those the selection's own scope counts
    /// (`docs/windows.md`, "Top-N"): the interfaces whose sums are the figures `traffic` and `bill` give for the same
    /// options, so a ranking never holds a loopback, a veth or a bond's slave beside the bond.
    func candidates(_ catalogue: Catalogue, window: Window) throws(QueryError) -> [SeriesRecord] {
        let chosen = try catalogue.select(selection.selection(scope.kind))
        guard countedIn != nil else { return chosen }
        let scopes = try catalogue.select(selection.selection(selection.defaultScope))
        let counted = Set(scopes.flatMap { catalogue.members(of: $0, during: window) }.map(\.id))
        return chosen.filter { counted.contains($0.id) }
    }

    /// The scope whose counted interfaces are ranked, as the table's title says it; nil when the interfaces were
    /// named (`--interface`) or hosts or groups are ranked.
    var countedIn: String? {
        guard scope == .interface, selection.interface == nil else { return nil }
        if let agent = selection.agent { return "host:" + agent }
        if let group = selection.group { return "group:\(group)" }
        return "fleet"
    }
}

/// 95th-percentile bills of a billing period.
public struct BillRead: Sendable {
    public var selection: ReadSelection
    /// `current`, `previous`, or a month (`2026-10`).
    public var period: String
    public var scope: ScopeChoice?
    public var members: Bool

    /// No time range: a bill's time is its billing period (`period`), so `last` and the like are refused.
    public static let names = ReadSelection.seriesNames.union(["period", "scope", "members"])

    public init(_ parameters: ReadParameters) throws(QueryError) {
        selection = try ReadSelection(parameters)
        period = parameters["period"] ?? "current"
        scope = try parameters["scope"].map { _ throws(QueryError) in try parameters.choice("scope", default: .fleet) }
        members = try parameters.flag("members")
    }

    public struct Answer: Sendable {
        public var lines: [BillLine]
        /// What each bill's scope was over its period, when asked for (`members`).
        public var members: [Int64: BillMembers]?
        public var calendar: CivilCalendar
    }

    public func answer(_ engine: WindowEngine, now: Int64) async throws -> Answer {
        _ = try point(in: engine, day: engine.billing.day, now: now)
        let series = try engine.catalogue.select(selection.selection(scope?.kind ?? selection.defaultScope))
        guard !series.isEmpty else { throw QueryError("nothing stored yet for this selection") }
        var points = [Int64: Int64]()
        for record in series {
            points[record.id] = try point(
                in: engine, day: engine.billing.terms(for: engine.billedScope(record)).day, now: now)
        }
        let lines = try await engine.bills(series, containing: { points[$0.id]! }, now: now)
        return Answer(
            lines: lines, members: members ? try await engine.billMembers(lines) : nil,
            calendar: engine.billing.calendar)
    }

    /// A time inside the period asked for.
    func point(in engine: WindowEngine, day: Int, now: Int64) throws(QueryError) -> Int64 {
        switch period {
        case "current": return now
        case "previous": return engine.billing.calendar.previousBillingPeriod(day: day, before: now).from
        default:
            let parts = period.split(separator: "-")
            guard parts.count == 2, let year = Int(parts[0]), let month = Int(parts[1]), parts[0].count == 4,
                let start = engine.billing.calendar.startOfDay(year: year, month: month, day: 1)
            else {
                throw QueryError(parameter: "period", value: period, "use current, previous or a month such as 2026-10")
            }
            // The period that starts in that month holds the month's last moment.
            return engine.billing.calendar.span(of: .month, containing: start).to - 1
        }
    }
}

/// Rollup buckets or raw samples of any range, read in slices so an export of the whole fleet is never held whole.
public struct ExportRead: Sendable {
    public var selection: ReadSelection
    /// Raw samples, or buckets of this rollup level.
    public var level: RollupLevel?
    public var scope: ScopeChoice?

    public static let names = ReadSelection.names.union(["level", "scope"])
    /// Series per read of buckets: the rows of one slice are what an export holds at once.
    public static let sliceSize = 200

    public init(_ parameters: ReadParameters) throws(QueryError) {
        selection = try ReadSelection(parameters)
        let text = parameters["level"] ?? "5m"
        if text != "raw" {
            guard let width = Units.parseDuration(text) else {
                throw QueryError(parameter: "level", value: text, "use raw, 1m, 5m, 1h or 1d")
            }
            level = RollupLevel(width: width)
        }
        scope = try parameters["scope"].map { _ throws(QueryError) in try parameters.choice("scope", default: .fleet) }
    }

    /// What an export covers, before any row is read.
    public struct Plan: Sendable {
        public var series: [SeriesRecord]
        public var window: Window
        public var level: RollupLevel?
        let query: ExportQuery
    }

    public func plan(_ engine: WindowEngine, now: Int64) throws -> Plan {
        let window = try selection.window(engine, now: now, fallback: .last(86_400_000))
        let fleetDefault = selection.defaultScope == .fleet && level == nil
        let kind = scope?.kind ?? (fleetDefault ? .interface : selection.defaultScope)
        let series = try engine.catalogue.select(selection.selection(kind))
        guard let level else {
            guard kind == .interface else {
                throw QueryError("raw samples exist for interfaces only; use --scope interface", about: "scope")
            }
            return Plan(series: series, window: window, level: nil, query: ExportQuery(engine: engine))
        }
        let aligned = Window(
            from: level.bucketStart(window.from),
            to: level.aligns(window.to) ? window.to : level.bucketStart(window.to) + level.width, name: window.name)
        _ = try engine.resolution(for: aligned, now: now, preferred: level)
        return Plan(series: series, window: aligned, level: level, query: ExportQuery(engine: engine))
    }
}

extension ExportRead.Plan {
    /// The raw samples of each series in turn.
    public func samples(_ each: (SeriesRecord, [RawSample]) async throws -> Void) async throws {
        for record in series {
            try await each(record, try await query.samples(of: record, in: window))
        }
    }

    /// The buckets of each slice of series in turn (``ExportRead/sliceSize`` series at a time).
    public func buckets(_ each: ([(SeriesRecord, [ExportRow])]) async throws -> Void) async throws {
        guard let level else { return }
        for start in stride(from: 0, to: series.count, by: ExportRead.sliceSize) {
            let slice = Array(series[start..<min(start + ExportRead.sliceSize, series.count)])
            try await each(try await query.rows(of: slice, level: level, in: window))
        }
    }
}

/// An analytics snapshot (`docs/snapshots.md`) as of now, holding what the daemon's `[snapshots]` say: the same
/// contents as the files the daemon writes, read when asked.
public struct SnapshotRead: Sendable {
    public static let names: Set<String> = []

    public init(_ parameters: ReadParameters) throws(QueryError) {}

    public func answer(_ engine: WindowEngine, contents: SnapshotQuery.Contents, now: Int64) async throws
        -> SnapshotData
    {
        try await SnapshotQuery(engine: engine).read(contents, now: now)
    }
}

/// The alerts as the store holds them (`netpulse alerts`, `/api/v1/alerts`): pending and firing, the events of the
/// last `since` (newest first, at most `limit`), the silences in force; `netpulse alerts events` and
/// `/api/v1/events` are the events alone.
public struct AlertsRead: Sendable {
    /// How far back the events go, in milliseconds.
    public var since: Int64
    public var limit: Int

    public static let names: Set<String> = ["since", "limit"]
    /// The most events one read returns: the history is kept for long (`[alerts] history`), and a request must not
    /// be able to ask the daemon for all of it at once.
    public static let mostEvents = 10_000

    public init(_ parameters: ReadParameters) throws(QueryError) {
        let text = parameters["since"] ?? "24h"
        guard let back = Units.parseDuration(text), back > 0 else {
            throw QueryError(parameter: "since", value: text, "not a duration; use 1h, 24h or 7d")
        }
        since = back
        limit = try parameters.integer("limit", in: 1...Self.mostEvents, default: 50)
    }

    public func answer(_ store: any MetricStore, now: Int64) async throws -> AlertState {
        try await AlertStateQuery(store: store).read(now: now, since: now - since, limit: limit)
    }
}
