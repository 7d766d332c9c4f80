import PulseAnalytics
import PulseCore
import PulseStore

/// Reads what one report says through a ``WindowEngine`` (`docs/reports.md`): the scope's figures, every group's
/// and host's, the top interfaces, each hour's traffic, the alert events of the period and the panels' series.
/// PulseReports draws and writes the result (``ReportData``) without reading anything.
public struct ReportQuery: Sendable {
    public let engine: WindowEngine
    /// How many interfaces the top list has.
    public var top = 10
    /// Called with a step's name as the work goes on (progress on a terminal).
    public var progress: @Sendable (String) -> Void = { _ in }

    public init(engine: WindowEngine) {
        self.engine = engine
    }

    /// The panels every report draws for its scope: throughput, the top hosts, traffic per group of the first
    /// group key (for the fleet), errors and drops.
    static func panels(groupKey: String?) -> [PanelSpec] {
        var panels: [PanelSpec] = [PanelSpec(.throughput), PanelSpec(.topTalkers(.host), limit: 10)]
        if let groupKey { panels.append(PanelSpec(.trafficByGroup(key: groupKey))) }
        panels.append(PanelSpec(.errorsAndDrops))
        return panels
    }

    /// Reads the report of `period` for `group` (nil: the fleet) as of `now`.
    /// - Throws: ``QueryError`` when the period cannot be read at the store's levels; errors of the store.
    public func read(period: ReportPeriod, group: GroupKey?, now: Int64) async throws -> ReportData {
        let catalogue = engine.catalogue
        let window = Window(from: period.from, to: period.to, name: period.kind.rawValue)
        let scope: DashboardScope = group.map { .group($0) } ?? .fleet
        let members = ScopeMembers(scope, catalogue: catalogue, window: window)
        progress("figures of \(members.label)")
        let groups: [SeriesRecord]
        if let record = members.record, record.kind == .group {
            groups = [record]
        } else {
            groups = catalogue.groups.sorted { $0.name < $1.name }
        }
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
        progress("alert history")
        let agents = Set(hosts.compactMap(\.agent))
        let alerts = try await engine.store.alertEvents(from: period.from, to: period.to).filter { event in
            guard event.status != .pending else { return false }
            guard let group else { return true }
            return event.labels["host"].map(agents.contains) ?? (event.labels["group"] == group.description)
        }
        progress("charts")
        let groupKey = members.record?.kind == .group ? nil : groups.compactMap(\.group?.key).first
        let panels = try await DashboardQuery(engine: engine).read(
            Self.panels(groupKey: groupKey), scope: scope, from: period.from, to: period.to,
            name: period.kind.rawValue, now: now)
        let figures = all + topInterfaces
        return ReportData(
            period: period, group: group, scopeLabel: members.label, scopeKey: group.map { "group:\($0)" } ?? "fleet",
            calendar: engine.calendar, scope: members.record.flatMap { byID[$0.id] },
            groups: groups.compactMap { byID[$0.id] }, hosts: hosts.compactMap { byID[$0.id] },
            topInterfaces: topInterfaces, hours: hours, alerts: alerts,
            revision: figures.map(\.figures.revision).max() ?? 0, panels: panels)
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

    /// The ledger figures (``ledgerValues(_:)``) of the scopes named `keys` (``ledgerKey(_:)``) over an earlier
    /// report's period, read again now at the resolution (bucket width, ms) that report was read at.
    public func ledgerFigures(
        keys: Set<String>, from: Int64, to: Int64, resolution: Int64?, now: Int64
    ) async throws -> [String: [Int64?]] {
        let catalogue = engine.catalogue
        let records = (catalogue.fleet.map { [$0] } ?? []) + catalogue.groups + catalogue.hosts
        let wanted = records.filter { keys.contains(Self.ledgerKey($0)) }
        var result = [String: [Int64?]]()
        let window = Window(from: from, to: to)
        let level = resolution.map { RollupLevel(width: $0) }
        for scope in try await engine.figures(wanted, window: window, now: now, resolution: level) {
            result[Self.ledgerKey(scope.series)] = Self.ledgerValues(scope.figures)
        }
        return result
    }

    /// The figures of earlier reports as the store gives them now, by report name; a report the store can no longer
    /// read at its resolution (its buckets have gone) is left out.
    public func ledgerFigures(of reports: [IssuedReport], now: Int64) async -> [String: [String: [Int64?]]] {
        var result = [String: [String: [Int64?]]]()
        for report in reports {
            result[report.name] = try? await ledgerFigures(
                keys: report.keys, from: report.from, to: report.to, resolution: report.resolution, now: now)
        }
        return result
    }

    /// How the reports' ledger names a scope: `fleet`, `host:web-01`, `group:site=fra1`.
    public static func ledgerKey(_ series: SeriesRecord) -> String {
        switch series.kind {
        case .fleet: "fleet"
        case .host: "host:\(series.agent ?? "")"
        case .group: "group:\(series.group?.description ?? "")"
        case .interface: "interface:\(series.name)"
        }
    }

    /// The figures the ledger keeps of a scope: rx bytes, tx bytes, rx p95, tx p95 (milli-bytes/s).
    public static func ledgerValues(_ figures: WindowFigures) -> [Int64?] {
        [figures.bytes.rx, figures.bytes.tx, figures.p95.rx, figures.p95.tx]
    }
}

/// One report as read (``ReportQuery/read(period:group:now:)``): what PulseReports draws and writes.
public struct ReportData: Sendable {
    public var period: ReportPeriod
    /// The group reported on; nil for the fleet.
    public var group: GroupKey?
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
    /// Alert transitions during the period, oldest first.
    public var alerts: [AlertEvent]
    /// The highest store revision of the data read: the same revision and period give the same report.
    public var revision: Int64
    /// The report's panels over the period.
    public var panels: PanelsData
}

/// An earlier report whose figures a run reads again: its name, its scopes' ledger keys, its period and the
/// bucket width it was read at.
public struct IssuedReport: Sendable, Hashable {
    public var name: String
    public var keys: Set<String>
    public var from: Int64
    public var to: Int64
    public var resolution: Int64?

    public init(name: String, keys: Set<String>, from: Int64, to: Int64, resolution: Int64?) {
        self.name = name
        self.keys = keys
        self.from = from
        self.to = to
        self.resolution = resolution
    }
}
