import PulseAnalytics
import PulseCore
import PulseQuery
import PulseReports

/// `[dashboards]`: the dashboard SVGs and `index.html` the daemon keeps fresh on disk (`docs/dashboards.md`).
public struct DashboardSettings: Sendable, Hashable {
    public var enabled: Bool
    public var directory: String
    /// The ranges drawn, each with how often it is drawn again: the last hour often, the month rarely.
    public var ranges: [Scheduled]
    public var retention: DashboardRetention
    /// Whether each host gets a page of its own beside the fleet overview.
    public var hostPages: Bool
    /// Whether the built-in fleet overview (and host pages) are drawn besides the declared dashboards.
    public var defaults: Bool
    /// Dashboards declared as `[dashboard.NAME]`, in file order.
    public var declared: [DashboardSpec]
    /// The largest share of the wall time drawing works while the CPUs are contended (`busy_share`; 1: drawing
    /// never rests). See ``DashboardService/Pacer``.
    public var busyShare: Double

    public init(directory: String) {
        enabled = true
        self.directory = directory
        ranges = Self.defaultIntervals
        retention = DashboardRetention(keep: 48, maximumAge: nil)
        hostPages = true
        defaults = true
        declared = []
        busyShare = Self.defaultBusyShare
    }

    /// A twentieth: at half of the maximum ingest on two cores (the CPUs always contended), drawing that works a
    /// twentieth of the time moved the median acknowledgement by -0.3 to +0.4 ms (0.1 ms on average, within the
    /// spread of runs without drawing); working a tenth raised it by 0.1–0.4 ms, a quarter by 1 ms, and drawing
    /// without rest by about 2 ms (docs/benchmarks.md, Ack latency while drawing). The price is drawing's time
    /// while contended: about twenty times as long.
    public static let defaultBusyShare = 0.05

    /// What is drawn: the built-in dashboards (unless `defaults = false`), then the declared ones.
    public func dashboards(for catalogue: Catalogue, groupBy: [String]) -> [DashboardSpec] {
        var specs = defaults ? DashboardSpec.defaults(for: catalogue, groupBy: groupBy) : []
        if !hostPages { specs = specs.filter { $0.scope == .fleet } }
        return specs + declared
    }

    /// Hour every minute, day every 5 minutes, week every hour, month every 6 hours: about one new bucket per
    /// render at each range's resolution, less often for the month.
    static let defaultIntervals: [Scheduled] = [
        Scheduled(range: .hour, interval: 60_000), Scheduled(range: .day, interval: 300_000),
        Scheduled(range: .week, interval: 3_600_000), Scheduled(range: .month, interval: 21_600_000),
    ]

    /// A range and how often it is drawn (ms).
    public struct Scheduled: Sendable, Hashable {
        public var range: DashboardRange
        public var interval: Int64
    }

    static func parse(_ reader: inout ConfigReader, stateDirectory: String) throws(ConfigError) -> DashboardSettings {
        var settings = DashboardSettings(directory: "\(stateDirectory)/dashboards")
        settings.enabled = try reader.boolean("dashboards", "enabled", default: true)
        let directory = try reader.string("dashboards", "directory", default: "dashboards")
        settings.directory = directory.hasPrefix("/") ? directory : "\(stateDirectory)/\(directory)"
        let known = Self.defaultIntervals
        let names = try reader.stringArray(
            "dashboards", "ranges", default: known.map(\.range.name), allowEmpty: false)
        var ranges = [Scheduled]()
        for name in names {
            guard let entry = known.first(where: { $0.range.name == name }) else {
                throw reader.invalid("dashboards", "ranges", "has \"\(name)\"; use hour, day, week and/or month")
            }
            guard !ranges.contains(where: { $0.range.name == name }) else {
                throw reader.invalid("dashboards", "ranges", "names \"\(name)\" twice")
            }
            ranges.append(entry)
        }
        // Every range's interval can be set, drawn or not, so that a config stays valid when ranges change.
        var intervals = [String: Int64]()
        for entry in known {
            intervals[entry.range.name] = try reader.duration(
                "dashboards", "\(entry.range.name)_interval", default: entry.interval, range: 10_000...604_800_000)
        }
        settings.ranges = ranges.map { Scheduled(range: $0.range, interval: intervals[$0.range.name] ?? $0.interval) }
        let keep = Int(try reader.integer("dashboards", "keep", default: 48, range: 1...100_000))
        let age = try reader.duration("dashboards", "max_age", default: 0, range: 0...3_650 * 86_400_000)
        settings.retention = DashboardRetention(keep: keep, maximumAge: age == 0 ? nil : age)
        settings.hostPages = try reader.boolean("dashboards", "host_pages", default: true)
        settings.defaults = try reader.boolean("dashboards", "defaults", default: true)
        settings.busyShare = try reader.number(
            "dashboards", "busy_share", default: Self.defaultBusyShare, range: 0.01...1)
        for (name, line) in reader.subtables(of: "dashboard") where !name.contains(".") {
            settings.declared.append(try parseDashboard(&reader, name: name, line: line, defaults: settings.defaults))
        }
        return settings
    }

    /// The panel names of `[dashboard.NAME] panels`, as `docs/dashboards.md` lists them.
    static let panelNames =
        "throughput, top_hosts, top_groups, top_interfaces, traffic_by_group:KEY, traffic_by_interface, errors, utilisation, heatmap, billing_p95, bills_hosts, bills_groups"

    /// One `[dashboard.NAME]`: a title, a scope, panels by name, columns and how many series a panel draws.
    static func parseDashboard(_ reader: inout ConfigReader, name: String, line: Int, defaults: Bool)
        throws(ConfigError) -> DashboardSpec
    {
        let table = "dashboard.\(name)"
        func refuse(_ message: String) -> ConfigError {
            ConfigError(file: reader.document.file, line: line, key: nil, "[\(table)]: \(message)")
        }
        guard !name.isEmpty, name.utf8.count <= 128 else { throw refuse("the name must be 1 to 128 characters") }
        if defaults && (name == "fleet" || name.hasPrefix("host-")) {
            throw refuse(
                "\"\(name)\" is a built-in dashboard's name (fleet, host-AGENT); choose another, or set [dashboards] defaults = false"
            )
        }
        let title = try reader.string(table, "title", default: name)
        let description = try reader.optionalString(table, "description")
        let scopeText = try reader.string(table, "scope", default: "fleet")
        let scope: DashboardScope
        if scopeText == "fleet" {
            scope = .fleet
        } else if scopeText.hasPrefix("host:"), scopeText.count > 5 {
            scope = .host(String(scopeText.dropFirst(5)))
        } else if scopeText.hasPrefix("group:"), let group = GroupKey(parsing: String(scopeText.dropFirst(6))) {
            scope = .group(group)
        } else {
            throw reader.invalid(table, "scope", "is \"\(scopeText)\"; use fleet, host:AGENT or group:KEY=VALUE")
        }
        let columns = Int(try reader.integer(table, "columns", default: 2, range: 1...6))
        let limit = Int(try reader.integer(table, "limit", default: 8, range: 1...50))
        var panels = [PanelSpec]()
        let names = try reader.stringArray(table, "panels", default: [], allowEmpty: false)
        guard !names.isEmpty else {
            throw reader.invalid(
                table, "panels", "is missing: list what to draw, such as panels = [\"throughput\", \"top_hosts\"]")
        }
        for panel in names {
            let kind: PanelSpec.Kind
            switch panel {
            case "throughput": kind = .throughput
            case "top_hosts": kind = .topTalkers(.host)
            case "top_groups": kind = .topTalkers(.group)
            case "top_interfaces": kind = .topTalkers(.interface)
            case "traffic_by_interface": kind = .trafficByInterface
            case "errors": kind = .errorsAndDrops
            case "utilisation": kind = .utilisation
            case "heatmap": kind = .weekdayHourHeatmap
            case "billing_p95": kind = .billingPercentile
            case "bills_hosts": kind = .bills(.host)
            case "bills_groups": kind = .bills(.group)
            case _ where panel.hasPrefix("traffic_by_group:") && panel.count > 17:
                kind = .trafficByGroup(key: String(panel.dropFirst(17)))
            default:
                throw reader.invalid(table, "panels", "has \"\(panel)\"; panels are \(panelNames)")
            }
            panels.append(PanelSpec(kind, limit: limit))
        }
        return DashboardSpec(
            name: name, title: title, description: description, scope: scope, panels: panels, columns: columns)
    }
}
