import PulseCore

/// `[reports]`: where `netpulse report` writes and how long it lets late data arrive (`docs/reports.md`). The
/// daemon itself does not make reports; the report timer runs `netpulse report` against its store.
public struct ReportSettings: Sendable, Hashable {
    public var directory: String
    /// A period is reported once it ended this long ago (milliseconds), so that late data has arrived.
    public var settle: Int64
    /// Interfaces in the top list.
    public var top: Int

    public init(directory: String) {
        self.directory = directory
        settle = 3_600_000
        top = 10
    }

    static func parse(_ reader: inout ConfigReader, stateDirectory: String) throws(ConfigError) -> ReportSettings {
        let directory = try reader.string("reports", "directory", default: "reports")
        var settings = ReportSettings(
            directory: directory.hasPrefix("/") ? directory : "\(stateDirectory)/\(directory)")
        settings.settle = try reader.duration("reports", "settle", default: 3_600_000, range: 0...7 * 86_400_000)
        settings.top = Int(try reader.integer("reports", "top", default: 10, range: 1...1_000))
        return settings
    }
}
