import PulseAnalytics
import PulseQuery

/// How a read is written: aligned columns for a terminal, or the machine formats.
public enum ReadFormat: String, Sendable, CaseIterable {
    case table, json, csv

    /// The media type the HTTP API answers with.
    public var mediaType: String {
        switch self {
        case .table: "text/plain; charset=utf-8"
        case .json: "application/json"
        case .csv: "text/csv; charset=utf-8"
        }
    }
}

/// The reads `netpulse` and the daemon's HTTP API answer alike, by the name they share (`netpulse top`,
/// `/api/v1/top`): parsed from the same parameters, asked of the same window engine and written by the same code,
/// so the output is the same bytes wherever it was asked for.
public enum Read: String, Sendable, CaseIterable {
    case rates, traffic, top, bill, export, snapshot, alerts, events

    /// The parameters the read takes (`format` included).
    public var names: Set<String> {
        let own =
            switch self {
            case .rates: RatesRead.names
            case .traffic: TrafficRead.names
            case .top: TopRead.names
            case .bill: BillRead.names
            case .export: ExportRead.names
            case .snapshot: SnapshotRead.names
            case .alerts, .events: AlertsRead.names
            }
        return own.union(["format"])
    }

    /// The command that makes the read on the daemon's host.
    public var command: String {
        switch self {
        case .alerts: "alerts"
        case .events: "alerts events"
        default: rawValue
        }
    }

    /// Formats the read can be written in, the first where a default is not one of them.
    public var formats: [ReadFormat] {
        switch self {
        case .export, .snapshot: [.json, .csv]
        case .alerts: [.table, .json]
        default: [.table, .json, .csv]
        }
    }

    /// The format `parameters` ask for, or `fallback` (or the read's first format, if it cannot write `fallback`).
    public func format(_ parameters: ReadParameters, default fallback: ReadFormat) throws(QueryError) -> ReadFormat {
        let format = try parameters.choice("format", default: formats.contains(fallback) ? fallback : formats[0])
        guard formats.contains(format) else {
            throw QueryError(
                parameter: "format", value: format.rawValue,
                "\(rawValue) writes \(formats.map(\.rawValue).joined(separator: " or "))")
        }
        return format
    }

    /// Parses `parameters` (the read's own first, then `format`), and reads what they ask for from `engine`: all of
    /// it, or for an export what it covers. Every error about the request comes from here, before anything is
    /// written; the export's rows are read as ``Prepared/write(progress:to:)`` writes them.
    public func prepare(
        _ parameters: ReadParameters, defaultFormat: ReadFormat, settings: ReadSettings,
        engine: () async throws -> WindowEngine, now: Int64
    ) async throws -> Prepared {
        try parameters.check(known: names)
        switch self {
        case .rates:
            let read = try RatesRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            return Prepared(format: format, text: try await read.answer(engine(), now: now).text(format))
        case .traffic:
            let read = try TrafficRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            return Prepared(format: format, text: try await read.answer(engine(), now: now).text(format))
        case .top:
            let read = try TopRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            return Prepared(format: format, text: try await read.answer(engine(), now: now).text(format))
        case .bill:
            let read = try BillRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            return Prepared(format: format, text: try await read.answer(engine(), now: now).text(format))
        case .export:
            let read = try ExportRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            return Prepared(format: format, export: try read.plan(await engine(), now: now))
        case .snapshot:
            let read = try SnapshotRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            let snapshot = Snapshot(
                try await read.answer(engine(), contents: settings.snapshot, now: now), source: "netpulse")
            return Prepared(format: format, text: format == .json ? snapshot.json : snapshot.csv)
        case .alerts, .events:
            let read = try AlertsRead(parameters)
            let format = try self.format(parameters, default: defaultFormat)
            let engine = try await engine()
            let state = try await read.answer(engine.store, now: now)
            let listing = AlertListing(
                now: now, rules: Dictionary(settings.alertRules.map { ($0.name, $0) }) { first, _ in first },
                instances: state.instances, events: state.events, silences: state.silences, queued: state.queued)
            let text =
                switch (self, format) {
                case (.alerts, .json): listing.json
                case (.alerts, _): listing.table(engine.calendar)
                case (_, .json): listing.eventsJSON
                case (_, .csv): listing.eventsCSV
                default: listing.eventsTable(engine.calendar)
                }
            return Prepared(format: format, text: text)
        }
    }

    /// A read whose request was good: its format, and its text or what it will stream.
    public struct Prepared: Sendable {
        public let format: ReadFormat
        let text: String?
        let export: ExportRead.Plan?

        init(format: ReadFormat, text: String) {
            self.format = format
            self.text = text
            export = nil
        }

        init(format: ReadFormat, export: ExportRead.Plan) {
            self.format = format
            text = nil
            self.export = export
        }

        /// Hands the text to `write` in pieces: all at once, or an export slice by slice (so it streams).
        public func write(progress: ReadProgress? = nil, to write: (String) async throws -> Void) async throws {
            if let text { try await write(text) }
            if let export { try await ExportText.write(export, json: format == .json, progress: progress, to: write) }
        }
    }
}

/// What some reads take from the daemon's config rather than from their parameters: what a snapshot holds
/// (`[snapshots]`), and the alert rules (how an alert's value is written).
public struct ReadSettings: Sendable {
    public var snapshot: SnapshotQuery.Contents
    public var alertRules: [AlertRule]

    public init(snapshot: SnapshotQuery.Contents, alertRules: [AlertRule]) {
        self.snapshot = snapshot
        self.alertRules = alertRules
    }
}

/// Told how far a long read (an export) has come, series by series: the CLI draws a bar on a terminal.
public protocol ReadProgress: Sendable {
    func start(total: Int)
    func advance()
    func finish()
}
