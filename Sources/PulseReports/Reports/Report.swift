import PulseAnalytics
import PulseCharts
import PulseCore
import PulseQuery
import PulseStore

/// Everything one report says, read from the store through the window engine (`docs/reports.md`): the scope's
/// figures, every group's and host's, the top interfaces, each hour's traffic, the weekday × hour means, the
/// alert events of the period, and what changed in earlier reports. Formats (HTML, CSV, JSON) are drawn from this
/// alone, so they always agree.
public struct Report: Sendable {
    /// The report's name in files: `day-2026-11-22`, `month-2026-11-site_fra1-…` (``FileName/safe(_:)``).
    public var name: String
    public var period: ReportPeriod
    /// What it covers, for people: `the fleet`, `group site=fra1`.
    public var scopeLabel: String
    /// What it covers, for the ledger: `fleet`, `group:site=fra1`.
    public var scopeKey: String
    public var calendar: CivilCalendar
    /// The scope's own figures (nil: the store has no such scope yet).
    public var scope: ScopeFigures?
    public var groups: [ScopeFigures]
    public var hosts: [ScopeFigures]
    /// The counted interfaces with the most bytes, most first.
    public var topInterfaces: [ScopeFigures]
    /// Every hour of the period with the scope's traffic (hours before the first data left out).
    public var hours: [TrafficRow]
    /// Mean rate (bit/s, in + out) by local weekday and hour over the period.
    public var heatmap: WeekdayHourBins
    /// Alert transitions during the period, oldest first.
    public var alerts: [AlertEvent]
    /// Changes to the figures of earlier reports found by this run (and, for a report made again, the ones its
    /// first run found).
    public var adjustments: [ReportAdjustment]
    /// The highest store revision of the data read: the same revision and period give the same report.
    public var revision: Int64
    /// Charts, each a standalone SVG, drawn into the HTML.
    public var charts: [String]

    /// The busiest hours, most bytes first (ties: the earlier hour).
    public func busiestHours(_ count: Int) -> [TrafficRow] {
        Array(
            hours.filter(\.values.hasData).sorted {
                let left = $0.values.traffic[.rxBytes] + $0.values.traffic[.txBytes]
                let right = $1.values.traffic[.rxBytes] + $1.values.traffic[.txBytes]
                return left != right ? left > right : $0.window.from < $1.window.from
            }.prefix(count))
    }

    /// The figures a later run compares to find adjustments: each scope's bytes and 95th percentiles.
    public var ledgerFigures: [String: [Int64?]] {
        var result = [String: [Int64?]]()
        for entry in [scope].compactMap({ $0 }) + groups + hosts {
            result[ReportLedger.key(entry.series)] = ReportLedger.values(entry.figures)
        }
        return result
    }
}

/// A figure of an earlier report that changed because data arrived after it was made.
public struct ReportAdjustment: Sendable, Hashable {
    /// The report that found it.
    public var foundBy: String
    /// The report whose figure changed.
    public var report: String
    /// `fleet`, `host:web-01`, `group:site=fra1`.
    public var series: String
    /// `rx_bytes`, `tx_bytes`, `rx_p95`, `tx_p95` (rates in milli-bytes per second).
    public var field: String
    public var was: Int64?
    public var now: Int64?
    /// The store revision the new value was read at.
    public var revision: Int64

    public init(
        foundBy: String, report: String, series: String, field: String, was: Int64?, now: Int64?, revision: Int64
    ) {
        self.foundBy = foundBy
        self.report = report
        self.series = series
        self.field = field
        self.was = was
        self.now = now
        self.revision = revision
    }
}

/// Reads a report from the store.
public struct ReportBuilder: Sendable {
    public let engine: WindowEngine
    /// How many interfaces the top list has.
    public var top = 10
    /// Called with a step's name as the work goes on (progress on a terminal).
    public var progress: @Sendable (String) -> Void = { _ in }

    public init(engine: WindowEngine) {
        self.engine = engine
    }

    /// Reads the report of `period` for `group` (nil: the fleet) as of `now`.
    /// - Throws: ``QueryError`` when the period cannot be read at the store's levels; errors of the store.
    public func build(period: ReportPeriod, group: GroupKey?, now: Int64) async throws -> Report {
        let catalogue = engine.catalogue
        let window = Window(from: period.from, to: period.to, name: period.kind.rawValue)
        let scope: DashboardScope = group.map { .group($0) } ?? .fleet
        let members = ScopeMembers(scope, catalogue: catalogue, window: window)
        progress("figures of \(members.label)")
        let groups = members.record?.kind == .group ? [members.record!] : catalogue.groups.sorted { $0.name < $1.name }
        let hosts = members.hosts
        let resolution = Self.resolution(engine, period: period)
        let all = try await engine.figures(
            [members.record].compactMap { $0 } + groups + hosts, window: window, now: now, resolution: resolution)
        let byID = Dictionary(all.map { ($0.series.id, $0) }) { first, _ in first }
        progress("top interfaces")
        let ranked = try await engine.top(members.counted, by: .bytes, window: window, now: now, count: top)
        let topInterfaces = try await engine.figures(
            ranked.map(\.series), window: window, now: now, resolution: resolution)
        progress("hours")
        var hours = [TrafficRow]()
        if let record = members.record {
            hours = try await engine.traffic(record, unit: .hour, window: window, now: now)
        }
        let chartCalendar = DashboardRenderer.chartCalendar(engine.calendar)
        let heatmap = WeekdayHourBins(
            hours.compactMap { row -> (ChartDate, Double)? in
                guard row.values.hasData, let rx = row.average.rx, let tx = row.average.tx else { return nil }
                // Milli-bytes per second to bits per second.
                return (Timeline.date(row.window.from), Double(rx + tx) * 8 / 1_000)
            }, calendar: chartCalendar, aggregation: .mean
        ) { $0 }
        progress("alert history")
        let agents = Set(hosts.compactMap(\.agent))
        let alerts = try await engine.store.alertEvents(from: period.from, to: period.to).filter { event in
            guard event.status != .pending else { return false }
            guard let group else { return true }
            return event.labels["host"].map(agents.contains) ?? (event.labels["group"] == group.description)
        }
        progress("charts")
        let renderer = DashboardRenderer(engine: engine, theme: .light, cellWidth: 900, cellHeight: 300)
        var panels: [PanelSpec] = [PanelSpec(.throughput), PanelSpec(.topTalkers(.host), limit: 10)]
        if let key = groups.compactMap(\.group?.key).first, members.record?.kind != .group {
            panels.append(PanelSpec(.trafficByGroup(key: key)))
        }
        panels.append(PanelSpec(.errorsAndDrops))
        var charts = try await renderer.reportCharts(panels, scope: scope, period: period, now: now)
        let heatmapChart = PanelCharts.heatmap(
            title:
                "Busy hours of \(members.label): mean rate in + out by weekday and hour, \(period.title(engine.calendar).lowercasedFirst)",
            bins: heatmap, calendar: chartCalendar)
        charts.append(renderer.standalone(heatmapChart, idPrefix: "rh"))

        let figures = all + topInterfaces
        let revision = figures.map(\.figures.revision).max() ?? 0
        return Report(
            name: Self.name(period, group: group), period: period, scopeLabel: members.label,
            scopeKey: group.map { "group:\($0)" } ?? "fleet",
            calendar: engine.calendar, scope: members.record.flatMap { byID[$0.id] },
            groups: groups.compactMap { byID[$0.id] }, hosts: hosts.compactMap { byID[$0.id] },
            topInterfaces: topInterfaces, hours: hours, heatmap: heatmap, alerts: alerts, adjustments: [],
            revision: revision, charts: charts)
    }

    /// Reports read their figures at 5-minute buckets — the level 95th-percentile billing uses and the store keeps
    /// longest at that detail (400 days by default) — so a report made again months later reads the same buckets
    /// and gives the same percentiles. A store without that level, or a `--from/--to` range that does not start
    /// and end on 5-minute boundaries, is read at the engine's own choice.
    public static func resolution(_ engine: WindowEngine, period: ReportPeriod) -> RollupLevel? {
        let level = RollupLevel.fiveMinutes
        guard engine.levels.contains(where: { $0.level == level }), level.bucketStart(period.from) == period.from,
            level.bucketStart(period.to) == period.to
        else { return nil }
        return level
    }

    /// The ledger figures of an earlier report's scopes, read again now at the resolution of the report.
    public func ledgerFigures(of entry: ReportLedger.Entry, now: Int64) async throws -> [String: [Int64?]] {
        let catalogue = engine.catalogue
        let records = (catalogue.fleet.map { [$0] } ?? []) + catalogue.groups + catalogue.hosts
        let wanted = records.filter { entry.figures[ReportLedger.key($0)] != nil }
        var result = [String: [Int64?]]()
        let window = Window(from: entry.from, to: entry.to)
        let resolution = entry.resolution.map { RollupLevel(width: $0) }
        for scope in try await engine.figures(wanted, window: window, now: now, resolution: resolution) {
            result[ReportLedger.key(scope.series)] = ReportLedger.values(scope.figures)
        }
        return result
    }

    /// `day-2026-11-22`, or `day-2026-11-22-site=fra1` for a group.
    public static func name(_ period: ReportPeriod, group: GroupKey?) -> String {
        let base = "\(period.kind.rawValue)-\(period.label)"
        return group.map { "\(base)-\(FileName.safe($0.description))" } ?? base
    }
}

extension DashboardRenderer {
    /// Panels of `scope` over a report's period, each a standalone SVG with ids of its own (they share one
    /// HTML page), at 5-minute buckets for a day and hourly ones for longer periods when the store keeps them.
    func reportCharts(_ panels: [PanelSpec], scope: DashboardScope, period: ReportPeriod, now: Int64)
        async throws -> [String]
    {
        let length = period.to - period.from
        let preferred: RollupLevel = length <= 2 * 86_400_000 ? .fiveMinutes : .oneHour
        // Levels whose buckets start and end the period exactly (not hours, in a zone half an hour off UTC).
        let aligned = engine.levels.filter {
            $0.level.bucketStart(period.from) == period.from && $0.level.bucketStart(period.to) == period.to
        }
        let level =
            Self.level(preferred: preferred, length: length, now: now, levels: aligned) ?? engine.finest
        let timeline = Timeline(from: level.bucketStart(period.from), to: level.bucketStart(period.to), level: level)
        let window = Window(from: timeline.from, to: timeline.to, name: period.kind.rawValue)
        let members = ScopeMembers(scope, catalogue: engine.catalogue, window: window)
        var scopeValues = [BucketValues?](repeating: nil, count: timeline.count)
        if let record = members.record {
            let buckets = try await engine.store.buckets(
                level: level, series: [record.id], from: timeline.from, to: timeline.to)
            scopeValues = timeline.values(buckets[record.id] ?? [])
        }
        let reader = PanelReader(
            engine: engine, members: members, timeline: timeline, level: level, now: max(now, period.to),
            frame: ChartFrame(domain: timeline.domain, calendar: chartCalendar), scopeValues: scopeValues)
        var svgs = [String]()
        for (index, panel) in panels.enumerated() {
            svgs.append(standalone(try await reader.chart(for: panel), idPrefix: "r\(index)"))
        }
        return svgs
    }

    /// One chart as a standalone SVG document.
    func standalone(_ chart: Chart, idPrefix: String) -> String {
        Dashboard(columns: 1, cellWidth: cellWidth, cellHeight: cellHeight, theme: theme, charts: [chart])
            .renderSVG(idPrefix: idPrefix)
    }
}
