import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import PulseStore

/// The top talkers: interfaces, hosts or groups ranked by bytes, peak rate, 95th percentile or error ratio.
struct Top: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Top interfaces, hosts or groups by bytes, peak rate, 95th percentile or error ratio.")

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "bytes, peak, p95 or errors.")
    var by = Ranking.bytes

    @Option(name: .long, help: "How many.")
    var top = 10

    @Option(name: .long, help: "Rank interfaces, hosts or groups.")
    var scope = ScopeOption.interface

    func run() async throws {
        try await runQuery(options) {
            guard top >= 1 else { throw QueryError("--top must be at least 1") }
            guard scope != .fleet else { throw QueryError("--scope: rank interfaces, hosts or groups") }
            let now = Netpulse.clock.now()
            let (engine, _) = try await options.engine(now: now)
            let window = try options.window(engine, now: now, fallback: .last(86_400_000))
            _ = try engine.resolution(for: window, now: now)
            let candidates = try engine.catalogue.select(options.selection(scope.kind))
            let ranked = try await engine.top(candidates, by: by, window: window, now: now, count: top)
            let figures = Dictionary(
                try await engine.figures(ranked.map(\.series), window: window, now: now).map {
                    ($0.series.id, $0.figures)
                },
                uniquingKeysWith: { first, _ in first })
            switch options.format {
            case .table:
                print(
                    "top \(top) \(scope.rawValue)s by \(by.rawValue), \(engine.calendar.localText(window.from)) … \(engine.calendar.localText(window.to))"
                )
                var rows = [
                    [
                        "#", scope.rawValue.uppercased(), by.rawValue.uppercased(), "RX", "TX", "AVG RX", "AVG TX",
                        "COVERAGE",
                    ]
                ]
                for (index, entry) in ranked.enumerated() {
                    let figure = figures[entry.series.id]
                    rows.append([
                        "\(index + 1)", TerminalText.safe(entry.series.name), Self.text(entry.value, by),
                        figure.map { TerminalText.bytes($0.bytes.rx) } ?? "-",
                        figure.map { TerminalText.bytes($0.bytes.tx) } ?? "-",
                        TerminalText.rate(figure?.average.rx ?? nil), TerminalText.rate(figure?.average.tx ?? nil),
                        TerminalText.percent(ppm: figure?.coverage),
                    ])
                }
                print(TerminalText.table(rows, numeric: [0, 2, 3, 4, 5, 6, 7]), terminator: "")
            case .csv:
                var out = CSVText.row(
                    ["rank", "ranking", "ranking_value", "ranking_unit"] + FigureFormat.figuresCSVHeader)
                for (index, entry) in ranked.enumerated() {
                    guard let figure = figures[entry.series.id] else { continue }
                    out += CSVText.row(
                        ["\(index + 1)", by.rawValue, Snapshot.rankingValue(entry.value, by), Self.unit(by)]
                            + FigureFormat.figuresCSV(entry.series, figure))
                }
                print(out, terminator: "")
            case .json:
                print(
                    JSONText.object([
                        ("window", FigureFormat.windowJSON(window, calendar: engine.calendar, resolution: nil)),
                        ("ranking", JSONText.string(by.rawValue)), ("unit", JSONText.string(Self.unit(by))),
                        (
                            "top",
                            JSONText.array(
                                ranked.enumerated().map { index, entry in
                                    JSONText.object([
                                        ("rank", "\(index + 1)"), ("series", FigureFormat.seriesJSON(entry.series)),
                                        ("value", Snapshot.rankingValue(entry.value, by)),
                                        ("figures", figures[entry.series.id].map(FigureFormat.figuresJSON) ?? "null"),
                                    ])
                                })
                        ),
                    ]))
            }
        }
    }

    static func unit(_ ranking: Ranking) -> String {
        switch ranking {
        case .bytes: "bytes"
        case .peak, .p95: "bytes_per_second"
        case .errors: "ppm"
        }
    }

    static func text(_ value: Int64, _ ranking: Ranking) -> String {
        switch ranking {
        case .bytes: TerminalText.bytes(value)
        case .peak, .p95: TerminalText.rate(value)
        case .errors: "\(FixedPoint.text(value / 100, places: 4)) %"
        }
    }
}

extension Ranking: ExpressibleByArgument {}
