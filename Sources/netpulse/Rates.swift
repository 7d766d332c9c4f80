import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import PulseStore

/// Each interface's current rates and today's totals, from the rollups (no raw data is decoded).
struct Rates: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Each interface's current rates and today's totals, read from the daemon's rollups.",
        discussion: """
            The rate is the newest bucket of the finest rollup level (1 minute) over the time its samples cover.
            """)

    @OptionGroup var options: QueryOptions

    func run() async throws {
        try await runQuery(options) {
            let now = Netpulse.clock.now()
            let (engine, _) = try await options.engine(now: now)
            let interfaces = try engine.catalogue.select(options.selection(.interface))
            let current = try await engine.currentRates(interfaces, now: now)
            let finest = engine.finest
            let day = engine.calendar.span(of: .day, containing: now)
            let today = try await engine.sums(
                interfaces.map(\.id), window: Window(from: day.from, to: finest.bucketStart(now) + finest.width),
                now: now)
            switch options.format {
            case .table:
                guard !interfaces.isEmpty else {
                    print("no interfaces stored yet")
                    return
                }
                var rows = [["AGENT", "INTERFACE", "KIND", "RX RATE", "TX RATE", "TODAY RX", "TODAY TX", "LAST SEEN"]]
                for interface in interfaces {
                    let figures = current[interface.id]
                    let totals = today[interface.id] ?? .empty
                    rows.append([
                        interface.agent ?? "", TerminalText.safe(interface.interface?.description ?? ""),
                        interface.facts?.kind.name ?? "unknown", TerminalText.rate(figures?.rx ?? nil),
                        TerminalText.rate(figures?.tx ?? nil), TerminalText.bytes(totals.traffic[.rxBytes]),
                        TerminalText.bytes(totals.traffic[.txBytes]),
                        "\(Units.formatDuration(max(0, now - interface.lastSeen) / 1_000 * 1_000)) ago",
                    ])
                }
                print(TerminalText.table(rows, numeric: [3, 4, 5, 6, 7]), terminator: "")
            case .csv:
                var out = CSVText.row([
                    "agent", "interface", "kind", "speed_mbps", "rx_bytes_per_second", "tx_bytes_per_second",
                    "today_rx_bytes", "today_tx_bytes", "last_seen_utc",
                ])
                for interface in interfaces {
                    let figures = current[interface.id]
                    let totals = today[interface.id] ?? .empty
                    out += CSVText.row([
                        interface.agent ?? "", interface.interface?.description ?? "",
                        interface.facts?.kind.name ?? "unknown",
                        interface.facts?.speedMbps.map { "\($0)" } ?? "",
                        (figures?.rx ?? nil).map { FixedPoint.text($0, places: 3) } ?? "",
                        (figures?.tx ?? nil).map { FixedPoint.text($0, places: 3) } ?? "",
                        "\(totals.traffic[.rxBytes])", "\(totals.traffic[.txBytes])", RFC3339.text(interface.lastSeen),
                    ])
                }
                print(out, terminator: "")
            case .json:
                print(
                    JSONText.array(
                        interfaces.map { interface in
                            let figures = current[interface.id]
                            let totals = today[interface.id] ?? .empty
                            return JSONText.object([
                                ("series", FigureFormat.seriesJSON(interface)),
                                ("rx_bytes_per_second", JSONText.decimal(figures?.rx ?? nil, places: 3)),
                                ("tx_bytes_per_second", JSONText.decimal(figures?.tx ?? nil, places: 3)),
                                ("today_rx_bytes", "\(totals.traffic[.rxBytes])"),
                                ("today_tx_bytes", "\(totals.traffic[.txBytes])"),
                                ("last_seen", JSONText.string(RFC3339.text(interface.lastSeen))),
                            ])
                        }))
            }
        }
    }
}
