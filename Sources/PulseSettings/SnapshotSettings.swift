import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// `[snapshots]`: which analytics snapshots the daemon writes, where and how often (`docs/snapshots.md`).
public struct SnapshotSettings: Sendable, Hashable {
    public var enabled: Bool
    public var directory: String
    /// Milliseconds between snapshots.
    public var interval: Int64
    public var windows: [WindowSpec]
    /// How many hosts, interfaces and groups each top-N list holds.
    public var top: Int
    /// Snapshots kept per format (older ones are deleted); `latest` always names the newest.
    public var keep: Int
    public var json: Bool
    public var csv: Bool
    /// Scopes whose figures are written for every window; top-N rankings; scopes whose open bills are written.
    public var scopes: Set<SeriesKind>
    public var rankings: [Ranking]
    public var bills: Set<SeriesKind>

    /// What goes into each snapshot.
    public var contents: SnapshotQuery.Contents {
        SnapshotQuery.Contents(windows: windows, scopes: scopes, top: top, rankings: rankings, bills: bills)
    }

    public init(directory: String) {
        enabled = true
        self.directory = directory
        interval = 300_000
        windows = [
            .last(3_600_000), .last(86_400_000), .calendar(.day, offset: 0), .calendar(.month, offset: 0),
            .billingPeriod(offset: 0),
        ]
        top = 10
        keep = 288
        json = true
        csv = true
        scopes = [.fleet, .group, .host]
        rankings = [.bytes, .peak, .errors]
        bills = [.fleet, .group, .host]
    }

    /// `fleet`, `groups`, `hosts`, `interfaces` → kinds.
    static func kinds(_ reader: inout ConfigReader, _ key: String, default fallback: Set<SeriesKind>)
        throws(ConfigError)
        -> Set<SeriesKind>
    {
        let names: [String: SeriesKind] = ["fleet": .fleet, "groups": .group, "hosts": .host, "interfaces": .interface]
        let chosen = try reader.stringArray(
            "snapshots", key, default: names.filter { fallback.contains($0.value) }.map(\.key).sorted())
        var kinds = Set<SeriesKind>()
        for name in chosen {
            guard let kind = names[name] else {
                throw reader.invalid("snapshots", key, "has \"\(name)\"; use fleet, groups, hosts and/or interfaces")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    static func parse(_ reader: inout ConfigReader, stateDirectory: String) throws(ConfigError) -> SnapshotSettings {
        var settings = SnapshotSettings(directory: "\(stateDirectory)/snapshots")
        settings.enabled = try reader.boolean("snapshots", "enabled", default: true)
        let directory = try reader.string("snapshots", "directory", default: "snapshots")
        settings.directory = directory.hasPrefix("/") ? directory : "\(stateDirectory)/\(directory)"
        settings.interval = try reader.duration("snapshots", "interval", default: 300_000, range: 10_000...86_400_000)
        let names = try reader.stringArray(
            "snapshots", "windows", default: settings.windows.map(\.description), allowEmpty: false)
        var windows = [WindowSpec]()
        for name in names {
            guard let window = WindowSpec(parsing: name) else {
                throw reader.invalid(
                    "snapshots", "windows",
                    "has \"\(name)\"; use last-DURATION (last-1h), today, yesterday, this-week, last-week, this-month, last-month, this-year, billing-period or last-billing-period"
                )
            }
            windows.append(window)
        }
        settings.windows = windows
        settings.top = Int(try reader.integer("snapshots", "top", default: 10, range: 1...1_000))
        settings.keep = Int(try reader.integer("snapshots", "keep", default: 288, range: 1...100_000))
        let formats = try reader.stringArray("snapshots", "formats", default: ["json", "csv"], allowEmpty: false)
        for format in formats where format != "json" && format != "csv" {
            throw reader.invalid("snapshots", "formats", "has \"\(format)\"; use \"json\" and/or \"csv\"")
        }
        settings.json = formats.contains("json")
        settings.csv = formats.contains("csv")
        settings.scopes = try kinds(&reader, "scopes", default: settings.scopes)
        settings.bills = try kinds(&reader, "bills", default: settings.bills)
        let rankings = try reader.stringArray(
            "snapshots", "rank_by", default: settings.rankings.map(\.rawValue), allowEmpty: true)
        settings.rankings = []
        for name in rankings {
            guard let ranking = Ranking(rawValue: name) else {
                throw reader.invalid("snapshots", "rank_by", "has \"\(name)\"; use bytes, peak, p95 and/or errors")
            }
            settings.rankings.append(ranking)
        }
        return settings
    }
}
