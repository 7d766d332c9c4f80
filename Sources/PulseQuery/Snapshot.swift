import PulseAnalytics
import PulseCore
import PulseStore

/// An analytics snapshot (`docs/snapshots.md`, schema `docs/snapshot.schema.json`): figures of the chosen
/// scopes for each window, top-N lists, the open bills and the agents, as JSON; and the figures as CSV.
public struct Snapshot: Sendable {
    public static let schemaVersion = 1

    public struct Contents: Sendable, Hashable {
        public var windows: [WindowSpec]
        /// Scopes whose figures are written for every window (`fleet`, `groups`, `hosts`, `interfaces`).
        public var scopes: Set<SeriesKind>
        public var top: Int
        public var rankings: [Ranking]
        /// Scopes whose open bills are written.
        public var bills: Set<SeriesKind>

        public init(
            windows: [WindowSpec], scopes: Set<SeriesKind> = [.fleet, .group, .host], top: Int = 10,
            rankings: [Ranking] = [.bytes, .peak], bills: Set<SeriesKind> = [.fleet, .group, .host]
        ) {
            self.windows = windows
            self.scopes = scopes
            self.top = top
            self.rankings = rankings
            self.bills = bills
        }
    }

    public var json: String
    public var csv: String
    public var revision: Int64

    /// Computes a snapshot at `now`.
    ///
    /// - Parameter source: the daemon's name, written in the snapshot.
    public static func make(
        engine: WindowEngine, contents: Contents, now: Int64, source: String
    ) async throws -> Snapshot {
        let catalogue = engine.catalogue
        let calendar = engine.calendar
        let revision = try await engine.store.totals().revision
        var windowsJSON = [String]()
        var csv = CSVText.row(FigureFormat.figuresCSVHeader)
        for spec in contents.windows {
            let window = engine.window(spec, now: now)
            let chosen = catalogue.series.filter { contents.scopes.contains($0.kind) }
            let resolution = try? engine.resolution(for: window, now: now)
            var figuresJSON = [String]()
            if resolution != nil {
                for scope in try await engine.figures(chosen, window: window, now: now) {
                    figuresJSON.append(
                        JSONText.object([
                            ("series", FigureFormat.seriesJSON(scope.series)),
                            ("figures", FigureFormat.figuresJSON(scope.figures)),
                        ]))
                    csv += CSVText.row(FigureFormat.figuresCSV(scope.series, scope.figures))
                }
            }
            var topJSON = [(String, String)]()
            for (name, kind) in [("interfaces", SeriesKind.interface), ("hosts", .host), ("groups", .group)] {
                let candidates = catalogue.series.filter { $0.kind == kind }
                var lists = [(String, String)]()
                for ranking in contents.rankings where resolution != nil && !candidates.isEmpty {
                    let ranked = try await engine.top(
                        candidates, by: ranking, window: window, now: now, count: contents.top)
                    lists.append(
                        (
                            ranking.rawValue,
                            JSONText.array(
                                ranked.enumerated().map { index, entry in
                                    JSONText.object([
                                        ("rank", "\(index + 1)"), ("series", FigureFormat.seriesJSON(entry.series)),
                                        ("value", rankingValue(entry.value, ranking)),
                                    ])
                                })
                        ))
                }
                topJSON.append((name, JSONText.object(lists)))
            }
            // Counts received on the window's days whose time could not be placed: in no figure above.
            let received = Window(from: RollupLevel.oneDay.bucketStart(window.from), to: window.to)
            let unplaced = try await engine.store.unplaced(
                series: chosen.map(\.id), from: received.from, to: received.to)
            var unplacedJSON = [String]()
            for series in chosen {
                guard let totals = unplaced[series.id] else { continue }
                unplacedJSON.append(
                    JSONText.object([
                        ("series", FigureFormat.seriesJSON(series)),
                        ("counts", FigureFormat.unplacedJSON(totals, received: received)),
                    ]))
                csv += CSVText.row(FigureFormat.unplacedCSV(series, totals, window: window, received: received))
            }
            windowsJSON.append(
                JSONText.object([
                    ("window", FigureFormat.windowJSON(window, calendar: calendar, resolution: resolution)),
                    ("readable", resolution == nil ? "false" : "true"),
                    ("figures", JSONText.array(figuresJSON)),
                    ("top", JSONText.object(topJSON)),
                    ("unplaced", JSONText.array(unplacedJSON)),
                ]))
        }
        let billed = catalogue.series.filter { contents.bills.contains($0.kind) }
        let billsJSON = try await engine.bills(billed, containing: { _ in now }, now: now).map {
            FigureFormat.billJSON($0, calendar: engine.billing.calendar)
        }
        let agentsJSON = catalogue.agents.map { agent in
            JSONText.object([
                ("name", JSONText.string(agent.name)), ("hostname", JSONText.string(agent.hostname)),
                ("version", JSONText.string(agent.version)),
                ("labels", JSONText.object(agent.labels.pairs.map { ($0.key, JSONText.string($0.value)) })),
                ("first_seen", JSONText.string(RFC3339.text(agent.firstSeen))),
                ("last_seen", JSONText.string(RFC3339.text(agent.lastSeen))),
                ("dropped_batches", "\(agent.droppedBatches)"),
            ])
        }
        let json = JSONText.object([
            ("schema", JSONText.string("netpulse-snapshot")), ("schema_version", "\(schemaVersion)"),
            ("generated_at", JSONText.string(RFC3339.text(now))),
            ("generated_at_local", JSONText.string(calendar.localText(now))),
            ("time_zone", JSONText.string(calendar.name)), ("source", JSONText.string(source)),
            ("netpulse_version", JSONText.string(NetpulseVersion.string)), ("store_revision", "\(revision)"),
            ("windows", JSONText.array(windowsJSON)), ("bills", JSONText.array(billsJSON)),
            ("agents", JSONText.array(agentsJSON)),
        ])
        return Snapshot(json: json + "\n", csv: csv, revision: revision)
    }

    /// A ranking's value as JSON: bytes and ratios as integers, rates as bytes per second with three decimals.
    public static func rankingValue(_ value: Int64, _ ranking: Ranking) -> String {
        switch ranking {
        case .bytes, .errors: "\(value)"
        case .peak, .p95: FixedPoint.text(value, places: 3)
        }
    }
}
