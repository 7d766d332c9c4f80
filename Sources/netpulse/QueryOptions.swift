import ArgumentParser
import Foundation
import PulseAnalytics
import PulseCore
import PulseFormats
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

    /// The daemon's config with the zone the daemon uses settled as it settles it (the file's, the one the store
    /// recorded, or the system's: ``DaemonConfig/resolvingTimeZone(recorded:system:)``), and the store opened.
    func openZoned(access: StoreAccess = .reader) async throws -> (DaemonConfig, any MetricStore) {
        let daemon = try daemonConfig()
        let store = try await open(daemon, access: access)
        return (daemon.resolvingTimeZone(recorded: try await store.recordedTimeZone()).config, store)
    }
}

/// Options every query command shares: where the store is, what to look at, over which time, in which format.
/// They are the read's parameters by their names (``ReadParameters``), checked by the same code as the HTTP API's.
struct QueryOptions: ParsableArguments {
    @OptionGroup var location: StoreLocation

    @Option(name: .long, help: "table, json or csv (default: table; csv for export, which writes no tables).")
    var format: Format?

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

    @OptionGroup var remote: DaemonOption

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, csv
    }

    /// Refuses a time range for a command whose time is its own (`rates`: now; `bill`: `--period`), naming the
    /// option given and why, rather than ignoring it.
    func refuseTimeRange(_ command: String, because reason: String) throws {
        let given = [("last", last), ("from", from), ("to", to), ("window", window)].filter { $0.1 != nil }
        if let (option, value) = given.first {
            throw fail(QueryError(parameter: option, value: value, "does not apply to \(command): \(reason)"), code: 64)
        }
    }

    /// The options as a read's parameters, with a command's own after them; `--format` defaults to `format`.
    func parameters(_ own: [(String, String?)] = [], format fallback: Format = .table) -> ReadParameters {
        ReadParameters(
            [
                ("format", (format ?? fallback).rawValue), ("agent", agent), ("interface", interface), ("group", group),
                ("last", last), ("from", from), ("to", to), ("window", window),
            ] + own)
    }

    /// Runs `read` with these options and a command's own parameters, printing what it writes; errors become one
    /// line on stderr and a non-zero exit.
    func run(_ read: Read, _ own: [(String, String?)] = [], format fallback: Format = .table) async throws {
        try await location.run(read, parameters(own, format: fallback), daemon: remote.url)
    }
}

/// `--daemon URL`: every read can be asked of a daemon over HTTP instead.
struct DaemonOption: ParsableArguments {
    @Option(
        name: .long,
        help:
            "Ask this daemon's HTTP API instead of reading the store: unix:/run/netpulsed/http.sock, https://HOST:9470 (default: $NETPULSE_DAEMON)."
    )
    var daemon: String?

    /// The daemon to ask: `--daemon`, else `$NETPULSE_DAEMON`; nil to read the store here.
    var url: String? {
        guard let url = daemon ?? ProcessInfo.processInfo.environment["NETPULSE_DAEMON"], !url.isEmpty else {
            return nil
        }
        return url
    }
}

extension StoreLocation {
    /// Runs `read` on `parameters`: asked of the daemon at `url` (``DaemonOption/url``) when there is one, else
    /// read from the store here; what it writes is printed, and errors become one line on stderr and a non-zero
    /// exit.
    func run(_ read: Read, _ parameters: ReadParameters, daemon url: String?) async throws {
        try await reportingErrors {
            if let url {
                try await DaemonClient(url: url).run(read, parameters)
                return
            }
            if let socket = try socketForReader() {
                try await DaemonClient(url: "unix:" + socket).run(read, parameters)
                return
            }
            let now = Netpulse.clock.now()
            let (daemon, store) = try await openZoned()
            let prepared = try await read.prepare(
                parameters, defaultFormat: .table, settings: daemon.readSettings,
                engine: { try await daemon.readerEngine(over: store) }, now: now)
            try await prepared.write(progress: standardErrorIsTerminal ? ProgressBar() : nil) {
                print($0, terminator: "")
            }
        }
    }
}

extension StoreLocation {
    /// On the daemon's host, for someone who may not read its config (it and the store are the daemon's group's,
    /// `netpulse-daemon`): the daemon's socket, which the readers' group `netpulse` may use, so that its members
    /// get the same answers as root without `--daemon`. Nil when the config can be read, or a store is named.
    ///
    /// - Throws: when neither the config nor the socket can be used, saying which permission is missing.
    func socketForReader() throws -> String? {
        guard store == nil, FileIO.exists(config), access(config, R_OK) != 0 else { return nil }
        let socket = HTTPSettings.defaultSocket
        if access(socket, R_OK | W_OK) == 0 { return socket }
        // Its directory is the group's too (0750): someone outside cannot even see whether it is there.
        var status = stat()
        let missing = stat(socket, &status) != 0 && errno == ENOENT
        let why =
            !missing
            ? "and may not use the daemon's socket \(socket) either: add yourself to its group, netpulse (usermod -aG netpulse $USER, then log in again)"
            : "and the daemon serves no socket at \(socket) (is it running? [http] socket)"
        throw QueryError(
            "cannot read \(config) (it is for root and the group netpulse-daemon) \(why); or run as root, or ask another daemon with --daemon URL"
        )
    }
}

/// Whether standard error is a terminal (for progress bars).
var standardErrorIsTerminal: Bool { isatty(2) == 1 }
