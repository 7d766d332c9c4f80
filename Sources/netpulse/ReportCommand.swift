import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseQuery
import PulseReports
import PulseStore

/// `netpulse report`: a self-contained report of a finished period (`docs/reports.md`), run by hand or by
/// `netpulse-report.timer`.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write the report of the previous day, week or month (or --from/--to): HTML, CSV, JSON, checksums.")

    @OptionGroup var location: StoreLocation

    @Option(name: .long, help: "day, week or month: the previous complete one in the configured time zone.")
    var period = ReportPeriod.Kind.day

    @Option(name: .long, help: "Start of a range instead: 2026-11-01, \"2026-11-01 08:00\" or RFC 3339.")
    var from: String?

    @Option(name: .long, help: "End of the range (exclusive), in the same forms.")
    var to: String?

    @Option(name: .long, help: "Only this group, as key=value (site=fra1).")
    var group: String?

    @Option(name: .long, help: "Write here instead of the config's [reports] directory.")
    var output: String?

    @Option(name: .long, help: "How long after a period ends it may be reported (default: [reports] settle, 1h).")
    var settle: String?

    func run() async throws {
        do {
            try await make()
        } catch let error as ExitCode {
            throw error
        } catch {
            throw fail(error)
        }
    }

    func make() async throws {
        let now = WallClock.milliseconds()
        guard period != .range else { throw QueryError("--period: use day, week or month, or --from and --to") }
        let groupKey = try group.map { text in
            guard let key = GroupKey(parsing: text) else {
                throw QueryError("--group \(text): use key=value, such as site=fra1")
            }
            return key
        }
        let daemon = try location.daemonConfig()
        let settleTime =
            try settle.map { text in
                guard let value = Units.parseDuration(text), value >= 0 else {
                    throw QueryError("--settle \(text): not a duration; use 1h or 30m")
                }
                return value
            } ?? daemon.reports.settle
        let store = try location.open(daemon)
        let engine = try await daemon.windowEngine(over: store)
        let chosen: ReportPeriod
        switch (from, to) {
        case (nil, nil):
            chosen = ReportPeriod.previous(period, now: now, settle: settleTime, calendar: engine.calendar)
        case (let from?, let to?):
            let finest = engine.finest
            let start = finest.bucketStart(try QueryOptions.time(from, engine.calendar, "--from"))
            var end = try QueryOptions.time(to, engine.calendar, "--to")
            end = finest.bucketStart(end) == end ? end : finest.bucketStart(end) + finest.width
            guard start < end else { throw QueryError("--from \(from) is not before --to \(to)") }
            guard end <= now else {
                throw QueryError("--to \(to) is in the future: a report covers a period that has ended")
            }
            chosen = ReportPeriod.named(.range, from: start, to: end, calendar: engine.calendar)
        default:
            throw QueryError("give both --from and --to, or neither (for the previous --period)")
        }
        if let groupKey, engine.catalogue.group(groupKey) == nil {
            throw QueryError("unknown group '\(groupKey)'; the store's groups come from [labels.AGENT] in the config")
        }
        var builder = ReportBuilder(engine: engine)
        builder.top = daemon.reports.top
        let terminal = standardErrorIsTerminal
        builder.progress = { step in
            if terminal { printError("\u{1B}[2K\rreport: \(step) …", newline: false) }
        }
        var report = try await builder.build(period: chosen, group: groupKey, now: now)
        let directory = output ?? daemon.reports.directory
        try FileIO.createDirectory(directory, mode: 0o755)
        var ledger = try ReportLedger.load("\(directory)/ledger.json")
        builder.progress("adjustments of earlier reports")
        try await ledger.reconcile(&report, builder: builder, now: now)
        builder.progress("writing")
        let published = try ReportPublisher.publish(report, ledger: ledger, in: directory)
        if terminal { printError("\u{1B}[2K\r", newline: false) }
        print(published.path)
        printError(
            "report \(report.name): \(chosen.title(engine.calendar)), \(report.scopeLabel), store revision \(report.revision), "
                + (published.isNew ? "written to \(published.issue)" : "unchanged (\(published.issue))")
                + (report.adjustments.isEmpty ? "" : "; \(report.adjustments.count) adjustment(s) to earlier reports"))
    }
}

extension ReportPeriod.Kind: ExpressibleByArgument {}
