import PulseAnalytics
import PulseStore
import PulseStoreSQLite
import Testing

/// The daemon's own store gives its last answers about kept bills again while no bill has been written
/// (``KeptBillsMemo``: an open fleet overview ranks its hosts by them on every redraw). What a user relies on is that
/// every answer is the one a fresh read gives: each is checked against a second, read-only store on the same file,
/// which keeps nothing.
struct KeptBillsTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z
    let hour: Int64 = 3_600_000
    let month: Int64 = 30 * 86_400_000

    func stored(_ series: Int64, from: Int64, rate: Int64, issued: Bool = false) -> StoredBill {
        let period = Window(from: from, to: from + month, name: "billing-period")
        let bill = Bill(
            period: period, method: .max, intervals: 12, missing: 0, classes: IntervalClasses(measured: 12),
            inbound: rate, outbound: rate / 2, sum: rate + rate / 2, revision: 1)
        return StoredBill(
            series: series, bill: bill, asOf: from + hour, issuedAt: issued ? from + month + hour : nil)
    }

    func save(_ store: SQLiteStore, bills: [StoredBill] = [], adjustments: [BillAdjustment] = []) async throws {
        try await store.saveBills(BillUpdate(bills: bills, adjustments: adjustments, cursor: day + hour, settled: []))
    }

    /// Each bill as `series: inbound rate`, sorted, to compare answers whatever their order.
    func text(_ bills: [StoredBill]) -> [String] {
        bills.map { "\($0.series): \($0.bill.inbound ?? -1) from \($0.bill.period.from)" }.sorted()
    }

    func text(_ adjustments: [BillAdjustment]) -> [String] {
        adjustments.map { "\($0.series): \($0.bill.inbound ?? -1) found \($0.foundAt)" }.sorted()
    }

    @Test func keptBillsAreAFreshReadsAfterSavesAcrossPeriodsAndForAnyTime() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let daemon = try SQLiteStore(path: path)
        let hosts: [Int64] = [11, 12, 13]
        // The last period issued for one host, this one open for all three.
        try await save(
            daemon,
            bills: [stored(11, from: day - month, rate: 5, issued: true)]
                + hosts.map { stored($0, from: day, rate: $0 * 100) })
        let reader = try SQLiteStore(path: path, readOnly: true)

        func expectFresh(_ series: [Int64]?, at time: Int64, _ note: Comment) async throws {
            let fresh = text(try await reader.bills(series: series, containing: time))
            // Twice: the second is the one kept.
            for _ in 0..<2 {
                #expect(text(try await daemon.bills(series: series, containing: time)) == fresh, note)
            }
        }

        try await expectFresh(hosts, at: day + hour, "this period")
        try await expectFresh(hosts, at: day + 2 * hour, "a second later in the same period")
        try await expectFresh(nil, at: day + 2 * hour, "every series")

        // A pass saves a new figure for one host: the next answer has it.
        try await save(daemon, bills: [stored(12, from: day, rate: 1_234)])
        #expect(
            text(try await daemon.bills(series: hosts, containing: day + 3 * hour)).contains("12: 1234 from \(day)"))
        try await expectFresh(hosts, at: day + 3 * hour, "after a save")

        // A time in the last period (a bill of the period after it exists), then a later one in this period.
        try await expectFresh(hosts, at: day - hour, "the last period")
        try await expectFresh(hosts, at: day + 4 * hour, "this period after asking for the last")
        // A host with no bill then has none at that time, and its bill of this period later: an empty answer holds
        // for no later time.
        try await expectFresh([12], at: day - hour, "a host without a bill in the last period")
        try await expectFresh([12], at: day + 5 * hour, "that host this period")
        #expect(try await daemon.bills(series: [12], containing: day + 5 * hour).count == 1)

        // The period's last moment, then past its end with no bill of the next period yet: none.
        try await expectFresh(hosts, at: day + month - 1, "the period's last millisecond")
        try await expectFresh(hosts, at: day + month, "after the period")
        #expect(try await daemon.bills(series: hosts, containing: day + month).isEmpty)

        // Adjustments of the issued bill, kept and read again the same way.
        func expectFreshAdjustments(_ note: Comment) async throws {
            let fresh = text(try await reader.billAdjustments(series: [11], containing: day - hour))
            for _ in 0..<2 {
                #expect(text(try await daemon.billAdjustments(series: [11], containing: day - hour)) == fresh, note)
            }
        }
        try await expectFreshAdjustments("none yet")
        let late = stored(11, from: day - month, rate: 7)
        try await save(daemon, adjustments: [late.adjustment(foundAt: day + hour)])
        try await expectFreshAdjustments("one")
        #expect(try await daemon.billAdjustments(series: [11], containing: day - hour).count == 1)
        try await save(
            daemon, adjustments: [stored(11, from: day - month, rate: 9).adjustment(foundAt: day + 2 * hour)])
        try await expectFreshAdjustments("two")
        #expect(try await daemon.billAdjustments(series: [11], containing: day - hour).count == 2)
    }
}
