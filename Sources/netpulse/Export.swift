import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// Any range of rollup buckets or raw samples, as CSV or JSON lines, with a progress bar on a terminal.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export rollup buckets (or raw samples) of any range as CSV or JSON.",
        discussion: """
            Buckets are labelled by their start and are half-open; bytes are exact. JSON output is one array.
            Raw samples are kept for [retention] raw (48 h by default).
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "raw, or a rollup level: 1m, 5m, 1h, 1d.")
    var level = "5m"

    @Option(name: .long, help: "Export interfaces, hosts, groups or the fleet (default: from the other options).")
    var scope: ScopeOption?

    func run() async throws {
        try await runQuery(options) {
            guard level == "raw" || Units.parseDuration(level) != nil else {
                throw QueryError("--level \(level): use raw, 1m, 5m, 1h or 1d")
            }
            guard options.format != .table else { throw QueryError("--format: export writes csv or json") }
            let now = WallClock.milliseconds()
            let (engine, _) = try await options.engine(now: now)
            let window = try options.window(engine, now: now, fallback: .last(86_400_000))
            let kind =
                scope?.kind ?? (options.defaultScope == .fleet && level == "raw" ? .interface : options.defaultScope)
            let series = try engine.catalogue.select(options.selection(kind))
            let progress = Progress(total: series.count, enabled: standardErrorIsTerminal)
            let json = options.format == .json
            if level == "raw" {
                guard kind == .interface else {
                    throw QueryError("raw samples exist for interfaces only; use --scope interface")
                }
                print(
                    json
                        ? "["
                        : CSVText.row(
                            [
                                "agent", "interface", "timestamp_utc", "timestamp_ms", "batch_order", "boot_id",
                                "ifindex", "width",
                            ] + Counter.allCases.map(\.name)), terminator: "")
                var first = true
                for record in series {
                    let samples = try await engine.store.samples(series: record.id, from: window.from, to: window.to)
                    var out = ""
                    for sample in samples {
                        if json {
                            out +=
                                (first ? "\n" : ",\n")
                                + JSONText.object(
                                    [
                                        ("series", FigureFormat.seriesJSON(record)),
                                        ("timestamp", JSONText.string(RFC3339.text(sample.timestamp))),
                                        ("timestamp_ms", "\(sample.timestamp)"), ("batch_order", "\(sample.order)"),
                                        (
                                            "epoch",
                                            JSONText.object([
                                                ("boot_id", JSONText.string(sample.epoch.bootID.description)),
                                                ("ifindex", "\(sample.epoch.ifindex)"),
                                                ("width", "\(sample.epoch.width.rawValue)"),
                                            ])
                                        ),
                                        (
                                            "counters",
                                            JSONText.object(
                                                Counter.allCases.map { ($0.name, "\(sample.counters[$0])") })
                                        ),
                                    ])
                            first = false
                        } else {
                            out += CSVText.row(
                                [
                                    record.agent ?? "", record.interface?.description ?? "",
                                    RFC3339.text(sample.timestamp), "\(sample.timestamp)", "\(sample.order)",
                                    sample.epoch.bootID.description, "\(sample.epoch.ifindex)",
                                    "\(sample.epoch.width.rawValue)",
                                ]
                                    + sample.counters.values.map { "\($0)" })
                        }
                    }
                    print(out, terminator: "")
                    progress.advance()
                }
                print(json ? "\n]" : "", terminator: json ? "\n" : "")
                progress.finish()
                return
            }
            guard let width = Units.parseDuration(level) else { return }
            let rollup = RollupLevel(width: width)
            let aligned = Window(
                from: rollup.bucketStart(window.from),
                to: rollup.aligns(window.to) ? window.to : rollup.bucketStart(window.to) + width, name: window.name)
            _ = try engine.resolution(for: aligned, now: now, preferred: rollup)
            // `row` is `bucket`, or `unplaced` for a series' counts received on one UTC day whose time could not be
            // placed (`docs/windows.md`, "Time that cannot be placed"): those are in no bucket, so the rows add up
            // to everything counted.
            let columns =
                ["kind", "series", "start_utc", "start_ms", "width_seconds"] + TrafficCounter.allCases.map(\.name) + [
                    "measured_ms", "interpolated_ms", "peak_rx_bytes_per_second", "peak_tx_bytes_per_second",
                    "speed_mbps", "epochs", "wraps", "resets", "implausible", "clock_steps", "ambiguous", "revision",
                    "row", "flagged_ms",
                ]
            print(json ? "[" : CSVText.row(columns), terminator: "")
            var first = true
            for slice in stride(from: 0, to: series.count, by: 200).map({
                Array(series[$0..<min($0 + 200, series.count)])
            }) {
                let buckets = try await engine.store.buckets(
                    level: rollup, series: slice.map(\.id), from: aligned.from, to: aligned.to)
                let unplaced = try await engine.store.unplacedDays(
                    series: slice.map(\.id), from: RollupLevel.oneDay.bucketStart(aligned.from), to: aligned.to)
                var out = ""
                for record in slice {
                    let rows: [(start: Int64, width: Int64, values: BucketValues, revision: Int64, row: String)] =
                        (buckets[record.id] ?? []).map { ($0.start, width, $0.values, $0.revision, "bucket") }
                        + (unplaced[record.id] ?? []).map {
                            ($0.day, 86_400_000, BucketValues(traffic: $0.totals.traffic), 0, "unplaced")
                        }
                    for entry in rows {
                        let values = entry.values
                        let fields: [String] =
                            [
                                record.kind.name, record.name, RFC3339.text(entry.start), "\(entry.start)",
                                "\(entry.width / 1_000)",
                            ]
                            + TrafficCounter.allCases.map { "\(values.traffic[$0])" }
                            + [
                                "\(values.measuredMilliseconds)", "\(values.interpolatedMilliseconds)",
                                "\(values.peakRx)", "\(values.peakTx)", "\(values.speedMbps)",
                            ]
                            + StepEvents.columns.map { "\(values.count(of: $0))" }
                            + ["\(entry.revision)", entry.row, "\(values.flaggedMilliseconds)"]
                        if json {
                            out +=
                                (first ? "\n" : ",\n")
                                + JSONText.object(
                                    zip(columns, fields).enumerated().map { index, pair in
                                        (pair.0, index < 3 || pair.0 == "row" ? JSONText.string(pair.1) : pair.1)
                                    })
                            first = false
                        } else {
                            out += CSVText.row(fields)
                        }
                    }
                    progress.advance()
                }
                print(out, terminator: "")
            }
            print(json ? "\n]" : "", terminator: json ? "\n" : "")
            progress.finish()
        }
    }
}

/// A progress bar on standard error (only on a terminal, so pipes and files stay clean).
final class Progress: @unchecked Sendable {
    let total: Int
    let enabled: Bool
    private var done = 0
    private var shown = -1

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled && total > 1
    }

    func advance() {
        done += 1
        guard enabled else { return }
        let percent = done * 100 / max(total, 1)
        guard percent != shown else { return }
        shown = percent
        let filled = percent * 30 / 100
        printError(
            "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                + "] \(percent)% (\(done)/\(total) series)", newline: false)
    }

    func finish() {
        if enabled { printError("", newline: true) }
    }
}
