import ArgumentParser
import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore
import PulseStoreBackends

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon's config and store are: every command that reads the store takes these.
struct StoreLocation: ParsableArguments {
    @Option(name: .long, help: "The daemon's config (for the store, levels, retention, time zone, billing).")
    var config = "/etc/netpulse/netpulsed.toml"

    @Option(name: .long, help: "Read this store instead of the one the config names.")
    var store: String?

    /// The daemon's config (for the store's path and the query settings).
    func daemonConfig() throws -> DaemonConfig {
        do {
            return try DaemonConfig.load(path: config)
        } catch {
            // Without a config file, a store given by --store is read with the defaults.
            guard store != nil, !FileIO.exists(config) else { throw error }
            return DaemonConfig(
                stateDirectory: ".", listen: Endpoint(host: "127.0.0.1", port: 7420),
                tls: TLSFiles(ca: "", certificate: "", key: ""))
        }
    }

    /// Opens the store the options name: read-only for queries (reads never block the daemon's ingest); the
    /// daemon's PostgreSQL database when its config names one and no `--store` file is given.
    func open(_ daemon: DaemonConfig, access: StoreAccess = .reader) async throws -> any MetricStore {
        try await StoreBackends.open(
            path: store ?? daemon.storePath, postgres: store == nil ? daemon.postgresLocation() : nil,
            settings: daemon.store, access: access)
    }
}

/// Options every query command shares: where the store is, what to look at, over which time, in which format.
struct QueryOptions: ParsableArguments {
    @OptionGroup var location: StoreLocation

    @Option(name: .long, help: "table, json or csv.")
    var format = Format.table

    @Option(name: .long, help: "Only this agent.")
    var agent: String?

    @Option(name: .long, help: "Only interfaces matching this glob (eth*, a<b&c).")
    var interface: String?

    @Option(name: .long, help: "Only this group, as key=value (site=fra1).")
    var group: String?

    @Option(name: .long, help: "A window ending now: 30m, 24h, 7d (rounded to whole minutes).")
    var last: String?

    @Option(name: .long, help: "Start: 2026-11-01, \"2026-11-01 08:00\" (the configured zone) or RFC 3339.")
    var from: String?

    @Option(name: .long, help: "End (exclusive), in the same forms as --from; default now.")
    var to: String?

    @Option(
        name: .long,
        help:
            "A named window: today, yesterday, this-week, last-week, this-month, last-month, this-year, billing-period, last-billing-period, or last-DURATION."
    )
    var window: String?

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, csv
    }

    /// Checks what ArgumentParser cannot (run first by every query command, so a mistake is one line of error,
    /// not a usage screen).
    func check() throws {
        if let last, Units.parseDuration(last).map({ $0 > 0 }) != true {
            throw QueryError("--last \(last): not a duration; use a number and a unit, such as 30m, 24h or 7d")
        }
        if last != nil && (from != nil || window != nil) || window != nil && from != nil {
            throw QueryError("use one of --last, --window or --from/--to")
        }
        if let window, WindowSpec(parsing: window) == nil {
            throw QueryError(
                "--window \(window): unknown; use today, yesterday, this-week, last-week, this-month, last-month, this-year, billing-period, last-billing-period or last-DURATION"
            )
        }
        if let group, GroupKey(parsing: group) == nil {
            throw QueryError("--group \(group): use key=value, such as site=fra1")
        }
    }

    /// Opens the store read-only (it never blocks the daemon's ingest) and loads what it holds.
    func engine(now: Int64) async throws -> (WindowEngine, DaemonConfig) {
        let daemon = try location.daemonConfig()
        let store = try await location.open(daemon)
        let engine = try await WindowEngine.load(
            store, rules: daemon.store.rules, retention: daemon.retention, calendar: daemon.calendar,
            billing: daemon.billing)
        return (engine, daemon)
    }

    /// The window the options name, or `fallback` (a `last` length) when they name none.
    func window(_ engine: WindowEngine, now: Int64, fallback: WindowSpec) throws -> Window {
        if let last, let length = Units.parseDuration(last) {
            return engine.window(.last(length), now: now)
        }
        if let window, let spec = WindowSpec(parsing: window) {
            return engine.window(spec, now: now)
        }
        guard from != nil || to != nil else { return engine.window(fallback, now: now) }
        let finest = engine.finest
        let start =
            try from.map { try Self.time($0, engine.calendar, "--from", now: now) }
            ?? engine.window(fallback, now: now).from
        let end = try to.map { try Self.time($0, engine.calendar, "--to", now: now) } ?? now
        guard start < end else {
            throw QueryError(
                "--from \(RFC3339.text(start)) is not before --to \(RFC3339.text(end)): the window is empty")
        }
        // Whole buckets of the finest level: the start rounded down, the end up.
        let to = finest.bucketStart(end) == end ? end : finest.bucketStart(end) + finest.width
        return Window(from: finest.bucketStart(start), to: to, name: "range")
    }

    /// Parses a time; one without a zone is in the configured zone, and `now` is `now`.
    static func time(_ text: String, _ calendar: CivilCalendar, _ option: String, now: Int64) throws -> Int64 {
        if text == "now" { return now }
        guard let parsed = RFC3339.parse(text) else {
            throw QueryError(
                "\(option) \(text): not a time; use 2026-11-01, \"2026-11-01 08:00\" or 2026-11-01T08:00:00Z")
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

    /// The series the options select for `kind`.
    func selection(_ kind: SeriesKind) -> Selection {
        Selection(kind: kind, agent: agent, interface: interface, group: group.flatMap(GroupKey.init(parsing:)))
    }

    /// The scope a query defaults to: interfaces when one is named, the host of an agent, a group, or the fleet.
    var defaultScope: SeriesKind {
        if interface != nil { return .interface }
        if agent != nil { return .host }
        if group != nil { return .group }
        return .fleet
    }
}

/// Runs an async query command's body after checking its options, turning errors into one line on stderr and a
/// non-zero exit.
func runQuery(_ options: QueryOptions, _ body: () async throws -> Void) async throws {
    try await reportingErrors {
        try options.check()
        try await body()
    }
}

/// Whether standard error is a terminal (for progress bars).
var standardErrorIsTerminal: Bool { isatty(2) == 1 }
