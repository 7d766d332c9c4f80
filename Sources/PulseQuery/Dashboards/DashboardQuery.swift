import PulseAnalytics
import PulseCore
import PulseStore

/// Reads what a dashboard shows over one range through a ``WindowEngine``: the scope's buckets and figures and each
/// panel's series, ranked. PulseReports draws the result (``DashboardData``) without reading anything.
public struct DashboardQuery: Sendable {
    /// What the dashboards are read through: the store, its catalogue, levels, time zone and billing terms.
    public let engine: WindowEngine

    /// A query over `engine`; build a new engine (and catalogue) for each round of renders so new hosts and
    /// interfaces appear.
    public init(engine: WindowEngine) {
        self.engine = engine
    }

    /// Reads `spec` for `range` as of `now` (ms since the Unix epoch): whole buckets of the range's level, ending at
    /// the last boundary before `now`.
    /// - Throws: ``DashboardError`` when the store keeps no rollup level for the whole range; errors of the store.
    public func read(_ spec: DashboardSpec, range: DashboardRange, now: Int64) async throws -> DashboardData {
        // The page's coverage line and its ranked panels sum the same interfaces over the same range: once.
        let engine = self.engine.sharingSums()
        guard
            let level = Self.level(
                preferred: range.resolution, length: range.length, now: now, levels: engine.levels,
                requireKept: true)
        else {
            throw DashboardError(
                "dashboard '\(spec.name)', range \(range.name): the store keeps no rollup level for all of the last \(Units.formatDuration(range.length)) (levels: \(engine.levels.map { "\($0.level) kept \($0.keep.map(Units.formatDuration) ?? "for ever")" }.joined(separator: ", "))); keep a level at least that long in [retention]"
            )
        }
        let to = level.bucketStart(now)
        let length = (range.length + level.width - 1) / level.width * level.width
        let timeline = Timeline(from: to - length, to: to, level: level)
        let window = Window(from: timeline.from, to: timeline.to, name: range.name)
        let panels = try await PanelQuery.read(
            spec.panels, scope: spec.scope, engine: engine, timeline: timeline, window: window, now: now,
            figures: true)
        return DashboardData(spec: spec, range: range, panels: panels)
    }

    /// The most buckets a range drawn on demand is read at: its level is the finest kept one that gives no more
    /// (an hour at minutes is 60, a day at five minutes 288, a month at hours 720), so a chart 560 pixels wide never
    /// draws more points than it has pixels for, and a brushed three hours is read at minutes again.
    public static let mostBuckets: Int64 = 720

    /// Reads `spec` from `from` to `to` (ms, a range someone picked or brushed): whole buckets of the level that
    /// range needs (``mostBuckets``) covering it, the start rounded down and the end up, but never past the last
    /// boundary before `now` (a bucket still filling is not drawn).
    /// - Throws: ``DashboardError`` when the range is empty or in the future.
    public func read(
        _ spec: DashboardSpec, from: Int64, to requested: Int64, now: Int64, title: String
    ) async throws -> DashboardData {
        let engine = self.engine.sharingSums()
        let length = requested - from
        guard length > 0 else { throw DashboardError("the range ends before it starts") }
        let kept = engine.levels.filter { retained in retained.keep.map { from >= now - $0 } ?? true }.map(\.level)
        let candidates = kept.isEmpty ? engine.levels.map(\.level) : kept
        let level =
            candidates.sorted().first { length / $0.width <= Self.mostBuckets } ?? candidates.max() ?? engine.finest
        let start = level.bucketStart(from)
        let end = min(level.bucketEnd(covering: requested), level.bucketStart(now))
        guard end > start else {
            throw DashboardError(
                "the range starts at or after the last complete \(Units.formatDuration(level.width)) bucket")
        }
        let timeline = Timeline(from: start, to: end, level: level)
        let window = Window(from: start, to: end, name: "custom")
        let panels = try await PanelQuery.read(
            spec.panels, scope: spec.scope, engine: engine, timeline: timeline, window: window, now: now,
            figures: true)
        let range = DashboardRange(name: "custom", title: title, length: end - start, resolution: level)
        return DashboardData(spec: spec, range: range, panels: panels)
    }

    /// Panels of `scope` over a report's period, at 5-minute buckets for a day and hourly ones for longer periods
    /// when the store keeps them (levels whose buckets start and end the period exactly).
    public func read(
        _ panels: [PanelSpec], scope: DashboardScope, from: Int64, to: Int64, name: String, now: Int64
    ) async throws -> PanelsData {
        let length = to - from
        let preferred: RollupLevel = length <= 2 * 86_400_000 ? .fiveMinutes : .oneHour
        // Levels whose buckets start and end the period exactly (not hours, in a zone half an hour off UTC).
        let aligned = engine.levels.filter { $0.level.bucketStart(from) == from && $0.level.bucketStart(to) == to }
        let level = Self.level(preferred: preferred, length: length, now: now, levels: aligned) ?? engine.finest
        let timeline = Timeline(from: level.bucketStart(from), to: level.bucketStart(to), level: level)
        let window = Window(from: timeline.from, to: timeline.to, name: name)
        return try await PanelQuery.read(
            panels, scope: scope, engine: engine, timeline: timeline, window: window, now: max(now, to),
            figures: false)
    }

    /// The level to read `length` ms ending at the last boundary before `now` at: the coarsest kept level no
    /// coarser than `preferred`, else the finest kept one coarser than it. Without a level kept that long, the
    /// coarsest level (or nil when `requireKept`).
    public static func level(
        preferred: RollupLevel, length: Int64, now: Int64, levels: [RetainedLevel], requireKept: Bool = false
    ) -> RollupLevel? {
        let kept = levels.filter { retained in
            retained.keep.map { retained.level.bucketStart(now) - length >= now - $0 } ?? true
        }.map(\.level)
        if let level = kept.filter({ $0 <= preferred }).max() ?? kept.filter({ $0 > preferred }).min() {
            return level
        }
        return requireKept ? nil : levels.map(\.level).max()
    }
}

/// One dashboard over one range, as read: what ``DashboardQuery/read(_:range:now:)`` gives and the renderer draws.
public struct DashboardData: Sendable {
    public var spec: DashboardSpec
    public var range: DashboardRange
    /// The scope's members, buckets and figures, and each panel's series.
    public var panels: PanelsData

    /// The `now` it was read for (ms): its panels'.
    public var now: Int64 { panels.now }
}

/// Panels of one scope over one timeline, as read.
public struct PanelsData: Sendable {
    /// The level the buckets were read at.
    public var level: RollupLevel
    public var timeline: Timeline
    /// The timeline's window (named for the range or period).
    public var window: Window
    /// The `now` the panels were read for (ms).
    public var now: Int64
    /// The scope's series during the window.
    public var members: ScopeMembers
    /// The store's time zone, and the billing terms' (where billing periods start).
    public var calendar: CivilCalendar
    public var billingCalendar: CivilCalendar
    /// The scope's own buckets over the timeline (all nil when the store has no such scope yet).
    public var scopeValues: [BucketValues?]
    /// The scope's figures over the window (nil when not asked for or when the store has no such scope yet).
    public var figures: WindowFigures?
    /// What each panel shows, in the order of the panels asked for.
    public var panels: [(spec: PanelSpec, data: PanelData)]
}

/// What one panel shows, as read: the renderer names, scales and draws it.
public enum PanelData: Sendable {
    /// The scope's own buckets (``PanelsData/scopeValues``): throughput, errors and drops.
    case scope
    /// Rates in + out by weekday and hour: the scope's buckets over `timeline` (a week at least) at its level.
    case busyHours(timeline: Timeline, values: [BucketValues?])
    /// The scope's 95th percentile this billing period and its 5-minute buckets so far (nil: no such scope).
    case percentile(PercentileData?)
    /// Series of a kind with their sums over the window, most bytes first (ties by name).
    case totals([(series: SeriesRecord, values: BucketValues)])
    /// Series of a kind with their bill so far, highest first (ties by name).
    case bills([(series: SeriesRecord, value: Int64)])
    /// The top series slot by slot and the rest summed.
    case lanes(RankedSelection)
}

/// A scope's bill so far and the buckets it is taken from.
public struct PercentileData: Sendable {
    public var line: BillLine
    /// The billing period so far, in 5-minute slots.
    public var timeline: Timeline
    public var values: [BucketValues?]
}

/// A dashboard that cannot be drawn as configured: what was wrong and what to do.
public struct DashboardError: Error, Sendable, CustomStringConvertible {
    /// One line: what was wrong and what to do.
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Reads each panel of one scope over one timeline.
struct PanelQuery: Sendable {
    let engine: WindowEngine
    let members: ScopeMembers
    let timeline: Timeline
    let level: RollupLevel
    let now: Int64
    /// The scope's own buckets over the timeline, read once for the panels that draw the scope.
    let scopeValues: [BucketValues?]

    var window: Window { Window(from: timeline.from, to: timeline.to) }

    static func read(
        _ panels: [PanelSpec], scope: DashboardScope, engine: WindowEngine, timeline: Timeline, window: Window,
        now: Int64, figures withFigures: Bool
    ) async throws -> PanelsData {
        let level = RollupLevel(width: timeline.width)
        let members = ScopeMembers(scope, catalogue: engine.catalogue, window: window)
        var scopeValues = [BucketValues?](repeating: nil, count: timeline.count)
        var figures: WindowFigures?
        if let record = members.record {
            let buckets = try await engine.store.buckets(
                level: level, series: [record.id], from: timeline.from, to: timeline.to)
            scopeValues = timeline.values(buckets[record.id] ?? [])
            if withFigures {
                figures =
                    try await engine.figures([record], window: window, now: now, resolution: level).first?.figures
            }
        }
        let query = PanelQuery(
            engine: engine, members: members, timeline: timeline, level: level, now: now, scopeValues: scopeValues)
        // The panels are read at once: the store's reads (a billing period of 5-minute buckets, the hosts' bills)
        // go on its reader connections while the interfaces are ranked on another core.
        let read = try await withThrowingTaskGroup(of: (Int, PanelData).self) { group in
            for (index, panel) in panels.enumerated() { group.addTask { (index, try await query.data(for: panel)) } }
            var data = [PanelData?](repeating: nil, count: panels.count)
            for try await (index, panel) in group { data[index] = panel }
            return zip(panels, data).map { (spec: $0, data: $1!) }
        }
        return PanelsData(
            level: level, timeline: timeline, window: window, now: now, members: members, calendar: engine.calendar,
            billingCalendar: engine.billing.calendar, scopeValues: scopeValues, figures: figures, panels: read)
    }

    func data(for panel: PanelSpec) async throws -> PanelData {
        switch panel.kind {
        case .throughput, .errorsAndDrops: return .scope
        case .topTalkers(let kind): return .totals(try await totals(of: members.series(of: kind)))
        case .trafficByGroup(let key):
            let groups = members.groups.filter { $0.group?.key == key }
            return .lanes(try await ranked(groups, limit: panel.limit, rank: Self.byBytes))
        case .trafficByInterface:
            return .lanes(try await ranked(members.counted, limit: panel.limit, rank: Self.byBytes))
        case .utilisation: return .lanes(try await utilisation(limit: panel.limit))
        case .weekdayHourHeatmap: return try await busyHours()
        case .billingPercentile: return .percentile(try await percentile())
        case .bills(let kind): return .bills(try await bills(of: members.series(of: kind)))
        }
    }

    func busyHours() async throws -> PanelData {
        // Busy hours need a week at least; hourly buckets or finer ones that fit in an hour.
        let span = max(timeline.to - timeline.from, 7 * 86_400_000)
        let hourly = engine.levels.filter { $0.level.width <= 3_600_000 && 3_600_000 % $0.level.width == 0 }
        let level = DashboardQuery.level(preferred: .oneHour, length: span, now: now, levels: hourly) ?? .oneHour
        let to = level.bucketStart(timeline.to)
        let heat = Timeline(from: to - span, to: to, level: level)
        var values = [BucketValues?](repeating: nil, count: heat.count)
        if let record = members.record {
            let buckets =
                try await engine.store.buckets(
                    level: level, series: [record.id], from: heat.from, to: heat.to)[record.id] ?? []
            values = heat.values(buckets)
        }
        return .busyHours(timeline: heat, values: values)
    }

    func percentile() async throws -> PercentileData? {
        guard let record = members.record else { return nil }
        let line = try await engine.bill(record, containing: now, now: now)
        let period = line.bill.period
        let interval = RollupLevel(width: Bill.interval)
        let end = min(period.to, interval.bucketStart(now))
        let span = Timeline(from: period.from, to: end, level: interval)
        // Only the bytes are drawn: a month of 5-minute buckets is 8,928 rows, and their other twenty columns took
        // most of the read.
        let buckets =
            try await engine.store.reduceBuckets(
                level: interval, series: [record.id], from: span.from, to: span.to, fields: .bytes
            ) { $1 }[record.id] ?? []
        return PercentileData(line: line, timeline: span, values: span.values(buckets))
    }

    func totals(of candidates: [SeriesRecord]) async throws -> [(series: SeriesRecord, values: BucketValues)] {
        let sums = try await engine.sums(
            candidates.map(\.id), window: window, now: now, fields: SumsMemo.fields)
        let ordered = ScopeMembers.highestFirst(candidates, name: \.name) { record in
            sums[record.id].flatMap { $0.hasData ? $0.traffic[.rxBytes] &+ $0.traffic[.txBytes] : nil }
        }
        return ordered.map { ($0, sums[$0.id]!) }
    }

    func bills(of candidates: [SeriesRecord]) async throws -> [(series: SeriesRecord, value: Int64)] {
        let now = self.now
        let lines = try await engine.bills(candidates, containing: { _ in now }, now: now)
        let ordered = ScopeMembers.highestFirst(lines, name: \.series.name, value: \.bill.value)
        return ordered.map { ($0.series, $0.bill.value!) }
    }

    func utilisation(limit: Int) async throws -> RankedSelection {
        let candidates = members.counted.filter { Self.speed($0) > 0 }
        guard candidates.count > limit else {
            let speeds = Dictionary(candidates.map { ($0.id, Self.speed($0)) }) { _, last in last }
            return try await ranked(candidates, limit: limit, speeds: speeds, rank: Self.byUtilisation)
        }
        return try await rankedByWindowUtilisation(candidates, limit: limit)
    }

    /// An interface's link speed in Mbit/s (0: unknown).
    static func speed(_ interface: SeriesRecord) -> Int64 { Int64(interface.facts?.speedMbps ?? 0) }

    /// The busiest of many interfaces without reading every one's buckets: ranked by their utilisation over the
    /// whole range (the larger direction's bytes over the time their data covers and their link speed), from sums
    /// the store keeps at coarse levels; only the shown ones are read slot by slot. "Other" is the rest together:
    /// per slot, the scope's counted bytes less the shown interfaces', over the rest's link speeds — so bytes of a
    /// counted interface of unknown speed count toward it, and a slot where some of the rest did not report reads
    /// a little low. (Ranking all of 10,000 interfaces slot by slot took 7 million rows for the last 30 days.)
    func rankedByWindowUtilisation(_ candidates: [SeriesRecord], limit: Int) async throws -> RankedSelection {
        let sums = try await engine.sums(
            candidates.map(\.id), window: window, now: now, fields: SumsMemo.fields)
        // By position in `candidates` (10,000 records are not copied to be ranked).
        var values = [Int64?](repeating: nil, count: candidates.count)
        for (position, record) in candidates.enumerated() {
            guard let sum = sums[record.id], sum.hasData, case let speed = Self.speed(record),
                let rate = RateMath.rate(
                    bytes: max(sum.traffic[.rxBytes], sum.traffic[.txBytes]), milliseconds: sum.coveredMilliseconds),
                let share = RateMath.utilisation(rate: rate, speedMbps: speed)
            else { continue }
            values[position] = share
        }
        let ordered = ScopeMembers.highestFirst(Array(candidates.indices), name: { candidates[$0].name }) {
            values[$0]
        }
        let top = ordered.prefix(limit).map { candidates[$0] }
        let buckets = try await engine.store.buckets(
            level: level, series: top.map(\.id), from: timeline.from, to: timeline.to)
        var rest = scopeValues.map { values in
            values.map { SIMD4($0.traffic[.rxBytes], $0.traffic[.txBytes], 0, 1) }
        }
        let shown = top.map { record in
            let lanes = timeline.lanes(buckets[record.id] ?? [], speed: Self.speed(record))
            for index in lanes.indices {
                if let lane = lanes[index], let left = rest[index] {
                    rest[index] = left &- SIMD4(lane[0], lane[1], 0, 0)
                }
            }
            return RankedLanes(record: record, lanes: lanes)
        }
        let others = ordered.dropFirst(limit)
        guard !others.isEmpty else { return RankedSelection(shown: shown, other: nil, otherCount: 0) }
        let speed = others.reduce(0) { $0 + Self.speed(candidates[$1]) }
        let other = rest.map { lane in
            lane.map { SIMD4(max($0[0], 0), max($0[1], 0), speed, 1) }
        }
        return RankedSelection(shown: shown, other: other, otherCount: others.count)
    }
}
