import PulseCore
import PulseQuery

/// `[reports]`: where `netpulse report` writes and how long it lets late data arrive (`docs/reports.md`). The
/// daemon itself does not make reports; the report timer runs `netpulse report` against its store.
public struct ReportSettings: Sendable, Hashable {
    public var directory: String
    /// A period is reported once it ended this long ago (milliseconds), so that late data has arrived.
    public var settle: Int64
    /// Interfaces in the top list.
    public var top: Int
    /// What `netpulse report --due` (the timer) makes.
    public var periods: [ReportPeriod.Kind]

    public init(directory: String) {
        self.directory = directory
        settle = 3_600_000
        top = 10
        periods = [.day, .week, .month]
    }

    static func parse(_ reader: inout ConfigReader, stateDirectory: String) throws(ConfigError) -> ReportSettings {
        let directory = try reader.string("reports", "directory", default: "reports")
        var settings = ReportSettings(
            directory: directory.hasPrefix("/") ? directory : "\(stateDirectory)/\(directory)")
        settings.settle = try reader.duration("reports", "settle", default: 3_600_000, range: 0...7 * 86_400_000)
        settings.top = Int(try reader.integer("reports", "top", default: 10, range: 1...1_000))
        settings.periods = []
        for name in try reader.stringArray("reports", "periods", default: ["day", "week", "month"]) {
            guard let kind = ReportPeriod.Kind(rawValue: name), kind != .range else {
                throw reader.invalid("reports", "periods", "has \"\(name)\"; use day, week and/or month")
            }
            guard !settings.periods.contains(kind) else {
                throw reader.invalid("reports", "periods", "names \"\(name)\" twice")
            }
            settings.periods.append(kind)
        }
        return settings
    }
}
