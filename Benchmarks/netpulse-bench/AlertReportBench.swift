import Foundation
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseQuery
import PulseReports
import PulseSettings
import PulseStore
import PulseStoreSQLite

/// Times the alert service's evaluation and a monthly report on a store made by `query-store` (5-minute data
/// up to the time it was made).
enum AlertReportBench {
    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func ms(_ seconds: Double) -> String {
        seconds < 0.1 ? String(format: "%.1f ms", seconds * 1_000) : "\(Int((seconds * 1_000).rounded())) ms"
    }

    /// The end of the store's data: the newest 5-minute bucket's end.
    static func dataEnd(_ store: SQLiteStore) async throws -> Int64 {
        let catalogue = try await Catalogue.load(from: store, rules: ScopeRules())
        guard let fleet = catalogue.fleet else { throw QueryError("the store is empty") }
        let now = WallClock.system.now()
        let buckets = try await store.buckets(
            level: .fiveMinutes, series: [fleet.id], from: now - 2 * 86_400_000, to: now + 1)
        guard let last = buckets[fleet.id]?.last else { throw QueryError("no recent data") }
        return last.start + 300_000
    }

    /// Two rules, as the daemon evaluates them, with one evaluation kept across rounds as the daemon keeps its
    /// service: one rule over every interface that none crosses (the cost of looking), then, once rounds are warm,
    /// one that a single interface crosses (the cost of a chart and its event file, on top of a round).
    static func alerts(config path: String, runs: Int) async throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-alerts-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The store's config with the rules added, read as the daemon reads its config.
        let base = try String(contentsOfFile: path, encoding: .utf8)
        let everything = """

            [alerts]
            directory = "\(directory)"
            [alert.Everything]
            expr = "rate > 100Gbit/s"
            window = "10m"
            scope = "interface"
            interfaces = ["*"]

            """
        // A name of this run's own: a rule of an earlier run on the same store would still be firing.
        let oneBusy = """
            [alert.OneBusy\(getpid())]
            expr = "rate > 1bit/s"
            window = "10m"
            scope = "interface"
            hosts = ["host-0"]
            interfaces = ["eth0"]

            """
        try (base + everything).write(toFile: directory + "/quiet.toml", atomically: true, encoding: .utf8)
        try (base + everything + oneBusy).write(toFile: directory + "/busy.toml", atomically: true, encoding: .utf8)
        let quiet = try DaemonConfig.load(path: directory + "/quiet.toml")
        let busy = try DaemonConfig.load(path: directory + "/busy.toml")
        let store = try SQLiteStore(path: quiet.storePath, settings: quiet.store)
        let now = try await dataEnd(store) + 30_000
        let interfaces = try await Catalogue.load(from: store, rules: quiet.store.rules).interfaces.count
        let evaluation = AlertEvaluation(store: store, config: quiet)
        var start = Date()
        try await evaluation.round(at: now, config: quiet)
        let first = Date().timeIntervalSince(start)
        var rounds = [Double]()
        for round in 1...runs {
            start = Date()
            try await evaluation.round(at: now + Int64(round) * 15_000, config: quiet)
            rounds.append(Date().timeIntervalSince(start))
        }
        start = Date()
        let fired = try await evaluation.round(at: now + Int64(runs + 1) * 15_000, config: busy)
        let firing = Date().timeIntervalSince(start)
        guard let path = fired.first(where: { $0.status == .firing })?.chart else {
            throw QueryError("the busy rule did not fire with a chart: \(fired)")
        }
        let chart = FileIO.size(path) ?? 0
        // The chart is written before the transition is stored: it was on disk under its name when it was renamed
        // there, which sets the file's change time (its modification time is when the temporary file was written).
        var status = stat()
        guard stat(path, &status) == 0 else { throw QueryError("\(path): cannot stat") }
        let renamed = Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9
        let onDisk = renamed - start.timeIntervalSince1970
        // Resolve it again, so the next run on this store starts with no alert firing.
        try await evaluation.round(at: now + Int64(runs + 2) * 15_000, config: quiet)
        print("alert evaluation over \(interfaces) interfaces (a 10-minute window of 5-minute buckets):")
        print("  the first round after the daemon starts (reads the catalogue and the recent buckets): \(ms(first))")
        print("  a round with no transition, median of \(runs): \(ms(median(rounds)))")
        print(
            "  a round that fires one alert and writes its chart (\(chart / 1_024) KiB) and event: \(ms(firing)), the chart on disk after \(ms(onDisk))"
        )
        // Where a round's time goes: its parts timed one by one; the window read both from memory and, by a reader
        // of the same file (as every round read it before), from the rows.
        let reader = try SQLiteStore(path: quiet.storePath, settings: quiet.store, readOnly: true)
        var parts = [String: [Double]]()
        for _ in 0..<runs {
            var start = Date()
            let engine = try await quiet.windowEngine(over: store)
            parts["catalogue", default: []].append(Date().timeIntervalSince(start))
            let evaluator = AlertQuery(engine: engine)
            let rule = quiet.alerts.rules.first { $0.name == "Everything" }!
            let window = evaluator.window(of: rule, at: now)
            start = Date()
            let targets = evaluator.targets(of: rule, during: window)
            parts["targets", default: []].append(Date().timeIntervalSince(start))
            for (name, source) in [("held", store), ("rows", reader)] {
                start = Date()
                _ = try await source.sums(
                    level: engine.finest, series: targets.map(\.id), from: window.from, to: window.to, fields: .all)
                parts[name, default: []].append(Date().timeIntervalSince(start))
            }
            start = Date()
            _ = try await store.alertInstances()
            parts["instances", default: []].append(Date().timeIntervalSince(start))
        }
        print(
            "  of a round, median of \(runs): the rule's interfaces \(ms(median(parts["targets"]!))), their window from memory \(ms(median(parts["held"]!))), the stored instances \(ms(median(parts["instances"]!)))"
        )
        print(
            "  read afresh each round instead: the catalogue \(ms(median(parts["catalogue"]!))), the window from the rows \(ms(median(parts["rows"]!)))"
        )
        print(
            "  threshold crossing to chart on disk: at most evaluation_interval (15 s by default) + \(ms(onDisk))")
    }

    /// The report of the last 30 days of the store, as `netpulse report` makes it (catalogue, figures of the
    /// fleet, every group and host, the top interfaces, every hour, charts; then written with its manifest).
    static func report(config path: String, runs: Int) async throws {
        let config = try DaemonConfig.load(path: path)
        let store = try SQLiteStore(path: config.storePath, settings: config.store, readOnly: true)
        let end = RollupLevel.oneHour.bucketStart(try await dataEnd(store))
        let period = ReportPeriod.named(.month, from: end - 30 * 86_400_000, to: end, calendar: config.calendar)
        var build = [Double]()
        var write = [Double]()
        var size = 0
        var hosts = 0
        for _ in 0..<runs {
            let directory = NSTemporaryDirectory() + "netpulse-bench-report-\(getpid())"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var start = Date()
            let engine = try await config.windowEngine(over: store)
            let query = ReportQuery(engine: engine)
            var report = ReportBuilder().build(try await query.read(period: period, group: nil, now: end + 3_600_000))
            var ledger = ReportLedger()
            ledger.reconcile(
                &report, current: await query.ledgerFigures(of: ledger.earlier(than: report), now: end + 3_600_000))
            build.append(Date().timeIntervalSince(start))
            start = Date()
            let published = try ReportPublisher.publish(report, ledger: ledger, in: directory)
            write.append(Date().timeIntervalSince(start))
            size = try FileIO.listDirectory(published.issue).compactMap { FileIO.size("\(published.issue)/\($0)") }
                .reduce(0, +)
            hosts = report.hosts.count
        }
        print("a 30-day report of \(hosts) hosts, median of \(runs) (fresh catalogue each run):")
        print("  reading and drawing: \(ms(median(build))); writing the issue: \(ms(median(write)))")
        print("  files: \(Units.formatBytes(Double(size))) (HTML, JSON, CSV, manifest)")
    }
}
