import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery

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
            let now = Netpulse.clock.now()
            let (engine, _) = try await options.engine(now: now)
            let window = try options.window(engine, now: now, fallback: .last(86_400_000))
            let kind =
                scope?.kind ?? (options.defaultScope == .fleet && level == "raw" ? .interface : options.defaultScope)
            let series = try engine.catalogue.select(options.selection(kind))
            let progress = Progress(total: series.count, enabled: standardErrorIsTerminal)
            let json = options.format == .json
            let query = ExportQuery(engine: engine)
            if level == "raw" {
                guard kind == .interface else {
                    throw QueryError("raw samples exist for interfaces only; use --scope interface")
                }
                print(json ? "[" : CSVText.row(ExportFormat.sampleColumns), terminator: "")
                var first = true
                for record in series {
                    var out = ""
                    for sample in try await query.samples(of: record, in: window) {
                        if json {
                            out += (first ? "\n" : ",\n") + ExportFormat.sampleJSON(sample, of: record)
                            first = false
                        } else {
                            out += ExportFormat.sampleCSV(sample, of: record)
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
            print(json ? "[" : CSVText.row(ExportFormat.bucketColumns), terminator: "")
            var first = true
            for slice in stride(from: 0, to: series.count, by: 200).map({
                Array(series[$0..<min($0 + 200, series.count)])
            }) {
                var out = ""
                for (record, rows) in try await query.rows(of: slice, level: rollup, in: aligned) {
                    for row in rows {
                        if json {
                            out += (first ? "\n" : ",\n") + ExportFormat.bucketJSON(row, of: record)
                            first = false
                        } else {
                            out += ExportFormat.bucketCSV(row, of: record)
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
