import PulseCore
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

    public init(directory: String) {
        enabled = true
        self.directory = directory
        ranges = Self.defaultIntervals
        retention = DashboardRetention(keep: 48, maximumAge: nil)
        hostPages = true
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
        return settings
    }
}
