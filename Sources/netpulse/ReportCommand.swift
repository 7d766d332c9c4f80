import ArgumentParser
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseReports
import PulseSettings
import PulseStore

#if canImport(Glibc)
    import Glibc
#endif

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

    @Flag(
        name: .long,
        help:
            "Write each report of [reports] periods (day, week, month) whose period has ended and that is not written yet (what the timer runs)."
    )
    var due = false

    func run() async throws {
        try await reportingErrors { try await make() }
    }

    func make() async throws {
        let now = Netpulse.clock.now()
        guard period != .range else { throw QueryError("--period: use day, week or month, or --from and --to") }
        let groupKey = try group.map { text in
            guard let key = GroupKey(parsing: text) else {
                throw QueryError("--group \(text): use key=value, such as site=fra1")
            }
            return key
        }
        let (daemon, store) = try await location.openZoned()
        let settleTime =
            try settle.map { text in
                guard let value = Units.parseDuration(text), value >= 0 else {
                    throw QueryError("--settle \(text): not a duration; use 1h or 30m")
                }
                return value
            } ?? daemon.reports.settle
        let engine = try await daemon.windowEngine(over: store)
        let directory = output ?? daemon.reports.directory
        var periods = [ReportPeriod]()
        switch (from, to) {
        case (nil, nil) where due:
            // Each kind's previous period, and after an outage the ones missed since the last report (a week of
            // days, five weeks, three months at most), oldest first.
            let ledger = try ReportLedger.load("\(directory)/ledger.json")
            for kind in daemon.reports.periods {
                let limit = kind == .day ? 7 : kind == .week ? 5 : 3
                let issuedBefore = ledger.entries.values.contains { $0.kind == kind.rawValue }
                var candidate = ReportPeriod.previous(kind, now: now, settle: settleTime, calendar: engine.calendar)
                var missing = [ReportPeriod]()
                while ledger.entries[ReportBuilder.name(candidate, group: groupKey)] == nil && missing.count < limit {
                    missing.append(candidate)
                    guard issuedBefore else { break }
                    candidate = ReportPeriod.previous(kind, now: candidate.from, settle: 0, calendar: engine.calendar)
                }
                periods += missing.reversed()
            }
        case (nil, nil):
            periods = [ReportPeriod.previous(period, now: now, settle: settleTime, calendar: engine.calendar)]
        case (let from?, let to?):
            guard !due else { throw QueryError("--due makes the previous periods; leave out --from and --to") }
            // Whole buckets of the finest level (a range on 5-minute boundaries is read at 5 minutes, as periods).
            let finest = engine.finest
            let start = finest.bucketStart(try ReadSelection.time(from, engine.calendar, "from", now: now))
            let given = try ReadSelection.time(to, engine.calendar, "to", now: now)
            guard given <= now else {
                throw QueryError("--to \(to) is in the future: a report covers a period that has ended")
            }
            // Whole buckets: the end rounded up, unless that is still to come (`--to now`).
            let up = finest.bucketEnd(covering: given)
            let end = up <= now ? up : finest.bucketStart(given)
            guard start < end else { throw QueryError("--from \(from) is not before --to \(to)") }
            periods = [ReportPeriod.named(.range, from: start, to: end, calendar: engine.calendar)]
        default:
            throw QueryError("give both --from and --to, or neither (for the previous --period)")
        }
        if let groupKey, engine.catalogue.group(groupKey) == nil {
            throw QueryError("unknown group '\(groupKey)'; the store's groups come from [labels.AGENT] in the config")
        }
        var query = ReportQuery(engine: engine)
        query.top = daemon.reports.top
        let terminal = standardErrorIsTerminal
        query.progress = { step in
            if terminal { printError("\u{1B}[2K\rreport: \(step) …", newline: false) }
        }
        try FileIO.createDirectory(directory, mode: FileIO.publishedDirectory)
        // One run at a time per directory (the timer and an operator's run): the ledger is read, reconciled and
        // written whole. Never through a symbolic link: the lock file is opened for writing.
        let lock = open("\(directory)/.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard lock >= 0, flock(lock, LOCK_EX) == 0 else {
            throw QueryError("\(directory)/.lock: cannot lock the reports directory (errno \(errno))")
        }
        defer { close(lock) }
        if due && periods.isEmpty { printError("report: nothing due; every report of \(directory) is written") }
        for chosen in periods {
            var ledger = try ReportLedger.load("\(directory)/ledger.json")
            // Written meanwhile by another run.
            if due, ledger.entries[ReportBuilder.name(chosen, group: groupKey)] != nil { continue }
            var report = ReportBuilder().build(try await query.read(period: chosen, group: groupKey, now: now))
            query.progress("adjustments of earlier reports")
            ledger.reconcile(&report, current: await query.ledgerFigures(of: ledger.earlier(than: report), now: now))
            query.progress("writing")
            let published = try ReportPublisher.publish(report, ledger: ledger, in: directory)
            if terminal { printError("\u{1B}[2K\r", newline: false) }
            print(published.path)
            printError(
                "report \(report.name): \(chosen.title(engine.calendar)), \(report.scopeLabel), store revision \(report.revision), "
                    + (published.isNew ? "written to \(published.issue)" : "unchanged (\(published.issue))")
                    + (report.adjustments.isEmpty
                        ? "" : "; \(report.adjustments.count) adjustment(s) to earlier reports"))
        }
        Self.handOver(directory)
    }

    /// Run by root in a directory another user owns (the report timer's, as the unit makes it): what this run
    /// created is given to that user, so the timer's next run may read and replace the ledger, the links and the
    /// issues as if it had written them itself. (The group is the directory's already: it is setgid.)
    static func handOver(_ directory: String) {
        var owner = stat()
        guard geteuid() == 0, lstat(directory, &owner) == 0, owner.st_uid != 0 else { return }
        var pending = [directory]
        while let current = pending.popLast() {
            guard let names = try? FileIO.listDirectory(current) else { continue }
            for name in names {
                let path = "\(current)/\(name)"
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                if info.st_uid == 0 { _ = lchown(path, owner.st_uid, gid_t.max) }
                if info.st_mode & S_IFMT == S_IFDIR { pending.append(path) }
            }
        }
    }
}

extension ReportPeriod.Kind: ExpressibleByArgument {}
