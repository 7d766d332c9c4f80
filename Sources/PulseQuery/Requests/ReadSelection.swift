import Foundation
import PulseAnalytics
import PulseCore
import PulseStore

/// What every read of series shares: which series (`agent`, `interface`, `group`) and over which time (`last`,
/// `window`, or `from` and `to`), checked once for the CLI and the HTTP API alike.
public struct ReadSelection: Sendable, Hashable {
    public var agent: String?
    /// A shell glob of interface names.
    public var interface: String?
    public var group: GroupKey?
    public var last: Int64?
    public var window: WindowSpec?
    public var from: String?
    public var to: String?

    /// The parameters this part of a read takes.
    public static let names: Set<String> = ["agent", "interface", "group", "last", "window", "from", "to"]
    /// The names that pick series only, for reads whose time is their own (rates: now; bills: a billing period).
    public static let seriesNames: Set<String> = ["agent", "interface", "group"]

    public init(_ parameters: ReadParameters) throws(QueryError) {
        agent = parameters["agent"]
        interface = parameters["interface"]
        from = parameters["from"]
        to = parameters["to"]
        if let text = parameters["last"] {
            guard let length = Units.parseDuration(text), length > 0 else {
                throw QueryError(
                    parameter: "last", value: text, "not a duration; use a number and a unit, such as 30m, 24h or 7d")
            }
            last = length
        }
        if last != nil && (from != nil || parameters["window"] != nil) || parameters["window"] != nil && from != nil {
            throw QueryError("use one of --last, --window or --from/--to", about: "window")
        }
        if let text = parameters["window"] {
            guard let spec = WindowSpec(parsing: text) else {
                throw QueryError(
                    parameter: "window", value: text,
                    "unknown; use today, yesterday, this-week, last-week, this-month, last-month, this-year, billing-period, last-billing-period or last-DURATION"
                )
            }
            window = spec
        }
        if let text = parameters["group"] {
            guard let key = GroupKey(parsing: text) else {
                throw QueryError(parameter: "group", value: text, "use key=value, such as site=fra1")
            }
            group = key
        }
    }

    /// Whether the time was given as a range or a named window (rather than a length ending now, or nothing).
    public var namesItsStart: Bool { from != nil || window != nil }

    /// The window the selection names, or `fallback` (a `last` length) when it names none.
    public func window(_ engine: WindowEngine, now: Int64, fallback: WindowSpec) throws(QueryError) -> Window {
        if let last { return engine.window(.last(last), now: now) }
        if let window { return engine.window(window, now: now) }
        guard from != nil || to != nil else { return engine.window(fallback, now: now) }
        let finest = engine.finest
        let start =
            try from.map { text throws(QueryError) in try Self.time(text, engine.calendar, "from", now: now) }
            ?? engine.window(fallback, now: now).from
        let end = try to.map { text throws(QueryError) in try Self.time(text, engine.calendar, "to", now: now) } ?? now
        guard start < end else {
            throw QueryError(
                "--from \(RFC3339.text(start)) is not before --to \(RFC3339.text(end)): the window is empty",
                about: "from")
        }
        // Whole buckets of the finest level: the start rounded down, the end up.
        return Window(from: finest.bucketStart(start), to: finest.bucketEnd(covering: end), name: "range")
    }

    /// Parses a time; one without a zone is in the configured zone, and `now` is `now`.
    public static func time(_ text: String, _ calendar: CivilCalendar, _ parameter: String, now: Int64)
        throws(QueryError) -> Int64
    {
        if text == "now" { return now }
        guard let parsed = RFC3339.parse(text) else {
            throw QueryError(
                parameter: parameter, value: text,
                "not a time; use 2026-11-01, \"2026-11-01 08:00\" or 2026-11-01T08:00:00Z")
        }
        let hasZone =
            text.hasSuffix("Z") || text.hasSuffix("z") || text.dropFirst(10).contains("+")
            || text.dropFirst(16).contains("-")
        guard !hasZone else { return parsed }
        // Local: move by the zone's offset at that time.
        let offset =
            Int64(calendar.timeZone.secondsFromGMT(for: .init(timeIntervalSince1970: Double(parsed) / 1_000))) * 1_000
        return parsed - offset
    }

    /// The series the selection names of `kind`.
    public func selection(_ kind: SeriesKind) -> Selection {
        Selection(kind: kind, agent: agent, interface: interface, group: group)
    }

    /// The scope a read defaults to: interfaces when one is named, the host of an agent, a group, or the fleet.
    public var defaultScope: SeriesKind {
        if interface != nil { return .interface }
        if agent != nil { return .host }
        if group != nil { return .group }
        return .fleet
    }
}

/// `scope=interface|host|group|fleet`.
public enum ScopeChoice: String, Sendable, CaseIterable {
    case interface, host, group, fleet

    public var kind: SeriesKind {
        switch self {
        case .interface: .interface
        case .host: .host
        case .group: .group
        case .fleet: .fleet
        }
    }
}
