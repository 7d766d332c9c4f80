import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import PulseStore

/// vnStat's views: traffic per 5 minutes, hour, day, month or year, for the fleet, a group, a host or interfaces.
struct Traffic: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Traffic per 5 minutes, hour, day, month or year (like vnstat -5/-h/-d/-m/-y).",
        discussion: """
            Without --agent, --interface or --group it shows the fleet (counted interfaces of every host); with
            --agent the host, with --interface each matching interface, with --group the group.
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "5min, hour, day, month or year.")
    var by = TrafficUnit.day

    @Option(name: .long, help: "Show interfaces, hosts, groups or the fleet (default: from the other options).")
    var scope: ScopeOption?

    func run() async throws {
        try await runQuery(options) {
            let now = Netpulse.clock.now()
            let (engine, _) = try await options.engine(now: now)
            let fallback: WindowSpec =
                switch by {
                case .fiveMinutes: .last(3_600_000)
                case .hour: .last(86_400_000)
                case .day: .last(30 * 86_400_000)
                case .month: .last(366 * 86_400_000)
                case .year: .last(3_650 * 86_400_000)
                }
            var window = try options.window(engine, now: now, fallback: fallback)
            // Whole calendar units where the range was not given explicitly.
            if options.from == nil && options.window == nil, by == .day || by == .month || by == .year {
                let unit: CivilCalendar.Unit = by == .day ? .day : by == .month ? .month : .year
                window.from = engine.calendar.span(of: unit, containing: window.from).from
                window.to = engine.calendar.span(of: unit, containing: now).to
            }
            let kind = scope?.kind ?? options.defaultScope
            let series = try engine.catalogue.select(options.selection(kind))
            guard !series.isEmpty else { throw QueryError("nothing stored yet for this selection") }
            var tables = [(SeriesRecord, [TrafficRow])]()
            for record in series {
                tables.append((record, try await engine.traffic(record, unit: by, window: window, now: now)))
            }
            // Counts whose time could not be placed, received on the days the range touches: in no row, so shown
            // as one of their own (`docs/windows.md`, "Time that cannot be placed").
            let received = Window(from: RollupLevel.oneDay.bucketStart(window.from), to: window.to)
            let unplaced = try await engine.unplaced(series, received: received)
            switch options.format {
            case .table:
                print(Self.table(tables, unplaced: unplaced, calendar: engine.calendar, unit: by), terminator: "")
            case .csv: print(Self.csv(tables, unplaced: unplaced, received: received), terminator: "")
            case .json:
                print(Self.json(tables, unplaced: unplaced, received: received, calendar: engine.calendar))
            }
        }
    }

    static func label(_ window: Window, _ unit: TrafficUnit, _ calendar: CivilCalendar) -> String {
        switch unit {
        case .fiveMinutes, .hour: calendar.localMinute(window.from)
        case .day: calendar.localDate(window.from)
        case .month: calendar.localMonth(window.from)
        case .year: String(calendar.localDate(window.from).prefix(4))
        }
    }

    static func table(
        _ tables: [(SeriesRecord, [TrafficRow])], unplaced: [Int64: UnplacedTotals] = [:], calendar: CivilCalendar,
        unit: TrafficUnit
    ) -> String {
        var out = ""
        var anyUnplaced = false
        for (record, rows) in tables {
            out += "\(TerminalText.safe(record.name)) (\(record.kind.name); times in \(calendar.name))\n"
            let heading = ["5min": "5 MINUTES", "hour": "HOUR", "day": "DAY", "month": "MONTH", "year": "YEAR"][
                unit.rawValue]!
            var lines = [[heading, "RX", "TX", "TOTAL", "AVG RX", "AVG TX", "COVERAGE"]]
            var total = BucketValues()
            for row in rows {
                total.merge(row.values)
                lines.append([
                    label(row.window, unit, calendar), TerminalText.bytes(row.values.traffic[.rxBytes]),
                    TerminalText.bytes(row.values.traffic[.txBytes]),
                    TerminalText.bytes(row.values.traffic[.rxBytes] + row.values.traffic[.txBytes]),
                    TerminalText.rate(row.average.rx), TerminalText.rate(row.average.tx),
                    TerminalText.percent(ppm: row.coverage),
                ])
            }
            lines.append([
                "total", TerminalText.bytes(total.traffic[.rxBytes]), TerminalText.bytes(total.traffic[.txBytes]),
                TerminalText.bytes(total.traffic[.rxBytes] + total.traffic[.txBytes]), "", "", "",
            ])
            if let extra = unplaced[record.id] {
                anyUnplaced = true
                lines.append([
                    "unplaced*", TerminalText.bytes(extra.traffic[.rxBytes]),
                    TerminalText.bytes(extra.traffic[.txBytes]),
                    TerminalText.bytes(extra.traffic[.rxBytes] &+ extra.traffic[.txBytes]), "", "", "",
                ])
            }
            out += TerminalText.table(lines, numeric: Set(1...6)) + "\n"
        }
        if anyUnplaced {
            out +=
                "* received on these days with times that cannot be placed (a clock far off, data older than [ingest] max_age): in no row above\n"
        }
        return out
    }

    /// `row` tells the rows of time (`interval`) from the row of counts whose time could not be placed
    /// (`unplaced`: its range is the days they were received on).
    static let csvHeader = [
        "kind", "series", "from_utc", "to_utc", "rx_bytes", "tx_bytes", "rx_average_bytes_per_second",
        "tx_average_bytes_per_second", "coverage_percent", "row",
    ]

    static func csv(
        _ tables: [(SeriesRecord, [TrafficRow])], unplaced: [Int64: UnplacedTotals] = [:], received: Window? = nil
    ) -> String {
        var out = CSVText.row(csvHeader)
        for (record, rows) in tables {
            for row in rows {
                out += CSVText.row([
                    record.kind.name, record.name, RFC3339.text(row.window.from), RFC3339.text(row.window.to),
                    "\(row.values.traffic[.rxBytes])", "\(row.values.traffic[.txBytes])",
                    row.average.rx.map { FixedPoint.text($0, places: 3) } ?? "",
                    row.average.tx.map { FixedPoint.text($0, places: 3) } ?? "",
                    FixedPoint.text(row.coverage, places: 4), "interval",
                ])
            }
            if let extra = unplaced[record.id], let received {
                out += CSVText.row([
                    record.kind.name, record.name, RFC3339.text(received.from), RFC3339.text(received.to),
                    "\(extra.traffic[.rxBytes])", "\(extra.traffic[.txBytes])", "", "", "", "unplaced",
                ])
            }
        }
        return out
    }

    static func json(
        _ tables: [(SeriesRecord, [TrafficRow])], unplaced: [Int64: UnplacedTotals] = [:], received: Window? = nil,
        calendar: CivilCalendar
    ) -> String {
        JSONText.array(
            tables.map { record, rows in
                JSONText.object([
                    ("series", FigureFormat.seriesJSON(record)),
                    (
                        "unplaced",
                        unplaced[record.id].map { FigureFormat.unplacedJSON($0, received: received) } ?? "null"
                    ),
                    (
                        "rows",
                        JSONText.array(
                            rows.map { row in
                                JSONText.object([
                                    ("from", JSONText.string(RFC3339.text(row.window.from))),
                                    ("to", JSONText.string(RFC3339.text(row.window.to))),
                                    ("from_local", JSONText.string(calendar.localText(row.window.from))),
                                    ("rx_bytes", "\(row.values.traffic[.rxBytes])"),
                                    ("tx_bytes", "\(row.values.traffic[.txBytes])"),
                                    ("rx_average_bytes_per_second", JSONText.decimal(row.average.rx, places: 3)),
                                    ("tx_average_bytes_per_second", JSONText.decimal(row.average.tx, places: 3)),
                                    ("coverage_percent", JSONText.decimal(row.coverage, places: 4)),
                                ])
                            })
                    ),
                ])
            })
    }
}

extension TrafficUnit: ExpressibleByArgument {}

/// `--scope interface|host|group|fleet`.
enum ScopeOption: String, ExpressibleByArgument, CaseIterable {
    case interface, host, group, fleet

    var kind: SeriesKind {
        switch self {
        case .interface: .interface
        case .host: .host
        case .group: .group
        case .fleet: .fleet
        }
    }
}
