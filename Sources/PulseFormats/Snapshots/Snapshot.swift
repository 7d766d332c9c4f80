import PulseAnalytics
import PulseCore
import PulseQuery

/// An analytics snapshot (`docs/snapshots.md`, schema `docs/snapshot.schema.json`): figures of the chosen
/// scopes for each window, top-N lists, the open bills and the agents, as JSON; and the figures as CSV. Written
/// from what ``SnapshotQuery`` read: the same data gives the same bytes.
public struct Snapshot: Sendable {
    public static let schemaVersion = 1

    public var json: String
    public var csv: String
    public var revision: Int64

    /// Writes `data` as a snapshot.
    ///
    /// - Parameter source: the daemon's name, written in the snapshot.
    public init(_ data: SnapshotData, source: String) {
        let calendar = data.calendar
        let now = data.now
        var windowsJSON = [String]()
        var csv = CSVText.row(FigureFormat.figuresCSVHeader)
        for read in data.windows {
            let window = read.window
            var figuresJSON = [String]()
            for scope in read.figures {
                figuresJSON.append(
                    JSONText.object([
                        ("series", FigureFormat.seriesJSON(scope.series)),
                        ("figures", FigureFormat.figuresJSON(scope.figures)),
                    ]))
                csv += CSVText.row(FigureFormat.figuresCSV(scope.series, scope.figures))
            }
            let topJSON = read.top.map { name, lists in
                (
                    name,
                    JSONText.object(
                        lists.map { ranking, ranked in
                            (
                                ranking.rawValue,
                                JSONText.array(
                                    ranked.enumerated().map { index, entry in
                                        JSONText.object([
                                            ("rank", "\(index + 1)"),
                                            ("series", FigureFormat.seriesJSON(entry.series)),
                                            ("value", Self.rankingValue(entry.value, ranking)),
                                        ])
                                    })
                            )
                        })
                )
            }
            var unplacedJSON = [String]()
            for (series, totals) in read.unplaced {
                unplacedJSON.append(
                    JSONText.object([
                        ("series", FigureFormat.seriesJSON(series)),
                        ("counts", FigureFormat.unplacedJSON(totals, received: read.received)),
                    ]))
                csv += CSVText.row(FigureFormat.unplacedCSV(series, totals, window: window, received: read.received))
            }
            windowsJSON.append(
                JSONText.object([
                    ("window", FigureFormat.windowJSON(window, calendar: calendar, resolution: read.resolution)),
                    ("readable", read.resolution == nil ? "false" : "true"),
                    ("figures", JSONText.array(figuresJSON)),
                    ("top", JSONText.object(topJSON)),
                    ("unplaced", JSONText.array(unplacedJSON)),
                ]))
        }
        let billsJSON = data.bills.map { FigureFormat.billJSON($0, calendar: data.billingCalendar) }
        let agentsJSON = data.agents.map { agent in
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
            ("schema", JSONText.string("netpulse-snapshot")), ("schema_version", "\(Self.schemaVersion)"),
            ("generated_at", JSONText.string(RFC3339.text(now))),
            ("generated_at_local", JSONText.string(calendar.localText(now))),
            ("time_zone", JSONText.string(calendar.name)), ("source", JSONText.string(source)),
            ("netpulse_version", JSONText.string(NetpulseVersion.string)), ("store_revision", "\(data.revision)"),
            ("windows", JSONText.array(windowsJSON)), ("bills", JSONText.array(billsJSON)),
            ("agents", JSONText.array(agentsJSON)),
        ])
        self.json = json + "\n"
        self.csv = csv
        self.revision = data.revision
    }

    /// A ranking's value as JSON: bytes and ratios as integers, rates as bytes per second with three decimals.
    public static func rankingValue(_ value: Int64, _ ranking: Ranking) -> String {
        switch ranking {
        case .bytes, .errors: "\(value)"
        case .peak, .p95: FixedPoint.text(value, places: 3)
        }
    }
}
