import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseReports
import PulseStore
import PulseStoreSQLite
import Testing

@testable import OracleSupport

/// Reports against the oracle: three months of two agents in Europe/Berlin (an outage, the change to summer time,
/// a week of data that arrives after everything else). The monthly reports' figures for the fleet, each group and
/// each host, and the fleet's bytes of every hour, equal what `Tests/Oracle/oracle.py` computes from the same
/// samples; the late week changes March's 95th percentiles after its report was made, and April's report says so, exactly.
@Suite(.serialized) struct ReportOracleTests {
    @Test(.timeLimit(.minutes(5)))
    func monthlyReportsAgreeWithTheOracleAndLateDataBecomesAnAdjustment() async throws {
        var oracleCase = CaseGenerator.billing(seed: 12)
        let config = try oracleCase.daemonConfig()
        let calendar = config.calendar
        func month(_ number: Int) -> ReportPeriod {
            ReportPeriod.named(
                .month, from: calendar.startOfDay(year: 2026, month: number, day: 1)!,
                to: calendar.startOfDay(year: 2026, month: number + 1, day: 1)!, calendar: calendar)
        }
        let (march, april) = (month(3), month(4))
        let directory = temporaryDirectory() + "/reports"
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db", settings: oracleCase.storeSettings())
        let batches = try oracleCase.ingestBatches()
        let lateArrival = batches.map(\.received).max()!
        func ingest(_ late: Bool) async throws {
            for (batch, received) in batches where (received == lateArrival) == late {
                #expect(try await store.ingest([batch], receivedAt: received) == [.stored])
            }
        }
        let now = oracleCase.now
        func make(_ period: ReportPeriod) async throws -> (Report, ReportPublisher.Published) {
            let catalogue = try await Catalogue.load(from: store, rules: config.store.rules)
            let engine = WindowEngine(
                store: store, catalogue: catalogue,
                levels: WindowEngine.retained(config.store.levels, RetentionPolicy(raw: 0, levels: [:])),
                calendar: calendar, billing: config.billing)
            let query = ReportQuery(engine: engine)
            var report = ReportBuilder().build(try await query.read(period: period, group: nil, now: now))
            var ledger = try ReportLedger.load(directory + "/ledger.json")
            ledger.reconcile(&report, current: await query.ledgerFigures(of: ledger.earlier(than: report), now: now))
            return (report, try ReportPublisher.publish(report, ledger: ledger, in: directory))
        }

        try await ingest(false)
        let (early, _) = try await make(march)
        #expect(early.adjustments.isEmpty)
        // The late week (edge-1, in March) arrives; April's report finds March's figures changed.
        try await ingest(true)
        let (aprilReport, aprilIssue) = try await make(april)
        // Counters are cumulative: the bytes of the missing week were already counted (spread over the gap), so
        // March's totals stand; where they fell changes, and with it the 95th percentiles.
        let marchChanges = aprilReport.adjustments.filter { $0.report == "month-2026-03" }
        #expect(
            Set(marchChanges.filter { $0.field == "rx_p95" }.map(\.series))
                == ["fleet", "host:edge-1", "group:customer=acme", "group:site=ams"], "\(marchChanges)")
        #expect(!marchChanges.contains { $0.field.hasSuffix("_bytes") }, "late data moves bytes, never adds any")
        #expect(marchChanges.allSatisfy { $0.was != nil && $0.now != nil && $0.was != $0.now })
        #expect(!marchChanges.contains { $0.series == "host:edge-2" }, "edge-2's data was all on time")
        // The same data again: the same issue, with the same adjustments.
        let (againReport, again) = try await make(april)
        #expect(!again.isNew && again.issue == aprilIssue.issue && againReport.adjustments == aprilReport.adjustments)
        // March made again has every figure; the change was already reported (by April), so it lists none, and
        // neither does the next month's report: each change is reported once.
        let (full, fullIssue) = try await make(march)
        #expect(fullIssue.isNew && full.adjustments.isEmpty)
        let (may, _) = try await make(month(5))
        #expect(may.adjustments.isEmpty, "\(may.adjustments)")

        // The oracle over the same samples.
        oracleCase.windows = [full, aprilReport].map {
            ($0.period.from, $0.period.to, $0.scope!.figures.resolution.width)
        }
        oracleCase.bucketLevels = [3_600_000]
        let expected = try Oracle.run(oracleCase)
        var figures = [String: [String: Any]]()
        for item in expected["figures"] as! [[String: Any]] {
            let window = item["window"] as! [Any]
            figures["\(item["series"]!) \(Oracle.int(window[0])!) \(Oracle.int(window[1])!)"] = item
        }
        for report in [full, aprilReport] {
            let scopes = [report.scope!] + report.groups + report.hosts
            #expect(scopes.count == 5, "the fleet, two groups, two hosts")
            for scope in scopes {
                let key = "\(Oracle.name(scope.series)) \(report.period.from) \(report.period.to)"
                guard let want = figures[key] else {
                    Issue.record("the oracle has no figures for \(key)")
                    continue
                }
                func pair(_ name: String) -> [Int64?] { (want[name] as! [Any]).map { Oracle.int($0) } }
                let got = scope.figures
                #expect([got.bytes.rx, got.bytes.tx] == pair("bytes"), "bytes of \(key)")
                #expect([got.p95.rx, got.p95.tx] == pair("p95"), "p95 of \(key)")
                #expect([got.average.rx, got.average.tx] == pair("average"), "average of \(key)")
                #expect(got.coverage == Oracle.int(want["coverage"]), "coverage of \(key)")
                #expect(Int64(got.members) == Oracle.int(want["members"]), "members of \(key)")
            }
            // Each hour of the fleet: the report's rows against the oracle's hourly buckets.
            let hourly = (expected["buckets"] as! [String: [String: [[Any]]]])["fleet"]!["3600000"]!
            var oracleHours = [Int64: [Int64]]()
            for row in hourly {
                let start = Oracle.int(row[0])!
                guard start >= report.period.from, start < report.period.to else { continue }
                let counters = (row[1] as! [Any]).map { Oracle.int($0)! }
                if counters[0] + counters[1] > 0 { oracleHours[start] = [counters[0], counters[1]] }
            }
            let reportHours = Dictionary(
                report.hours.filter { $0.values.traffic[.rxBytes] + $0.values.traffic[.txBytes] > 0 }.map {
                    ($0.window.from, [$0.values.traffic[.rxBytes], $0.values.traffic[.txBytes]])
                }, uniquingKeysWith: { first, _ in first })
            #expect(reportHours == oracleHours, "hours of \(report.name)")
        }
        // April's adjustments carry March's complete 95th percentiles, as the oracle has them.
        for change in marchChanges {
            let want = figures["\(change.series) \(march.from) \(march.to)"]!
            let p95 = (want["p95"] as! [Any]).map { Oracle.int($0) }
            #expect(change.now == p95[change.field == "rx_p95" ? 0 : 1], "\(change)")
        }
    }
}
