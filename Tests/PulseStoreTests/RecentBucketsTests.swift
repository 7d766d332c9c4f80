import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import StoreFixtures
import TestSupport
import Testing

@testable import PulseStore
@testable import PulseStoreSQLite

/// The recent buckets the daemon's store holds in memory for the alert service (``RecentBuckets``) against the
/// rows a reader of the same file reads: every commit's changes, late data splitting virtual gaps, duplicates, new
/// interfaces and groups.
@Suite struct RecentBucketsTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    /// Minute batches for `agent` (labelled into a site) on `interface`: one-second samples, a rate that changes.
    func batches(agent: String, site: String, interface: String, ifindex: UInt32, count: Int) -> [IngestBatch] {
        var maker = BatchMaker()
        maker.agent = AgentIdentity(
            name: agent, hostname: agent, version: "0.2.0", labels: Labels([(key: "site", value: site)]))
        maker.stream = UInt64(ifindex) * 7
        return (0..<count).map { index in
            let rx: [UInt64] = (0..<60).map { tick in
                let t = UInt64(index * 60 + tick)
                return t * 1_000 + t * t * UInt64(ifindex)
            }
            return maker.batch(
                UInt64(index + 1), start: day + Int64(index) * 60_000, rx: rx, interface: interface, ifindex: ifindex)
        }
    }

    /// Twelve minute batches of each of three agents: web-01 and web-02 in site ams, db-01 (a bond) in fra.
    func threeAgents() -> (a: [IngestBatch], b: [IngestBatch], c: [IngestBatch]) {
        (
            batches(agent: "web-01", site: "ams", interface: "eth0", ifindex: 2, count: 12),
            batches(agent: "web-02", site: "ams", interface: "eth0", ifindex: 3, count: 12),
            batches(agent: "db-01", site: "fra", interface: "bond0", ifindex: 4, count: 12)
        )
    }

    /// Every series' sums over several windows, from memory (which must hold them) and from the file's rows.
    func expectSameSums(
        _ store: SQLiteStore, _ reader: SQLiteStore, windows: [(Int64, Int64)], _ note: String
    ) async throws {
        let ids = try await reader.series().map(\.id)
        for (from, to) in windows {
            for fields in [BucketFields.all, [.bytes, .coverage]] {
                let held = try await store.heldSums(level: .oneMinute, series: ids, from: from, to: to, fields: fields)
                let rows = try await reader.sums(level: .oneMinute, series: ids, from: from, to: to, fields: fields)
                let heldSums = try #require(held, "\(note): the window \(from)..<\(to) is held")
                #expect(heldSums == rows, "\(note): \((from - day) / 60_000)..<\((to - day) / 60_000) min, \(fields)")
            }
        }
    }

    @Test func heldBucketsAgreeWithTheRowsThroughLateDataGapsAndNewSeries() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, readOnly: true)
        let (a, b, c) = threeAgents()
        // Before anything is held: the first minutes of two agents.
        _ = try await store.ingest(Array(a[0..<3]) + Array(b[0..<3]), receivedAt: day + 200_000)
        try await store.keepRecentBuckets(from: day + 60_000, for: .alerts)
        #expect(store.recent.covers(level: .oneMinute, from: day + 60_000))
        let windows: [(Int64, Int64)] = [
            (day + 60_000, day + 12 * 60_000), (day + 120_000, day + 240_000), (day + 300_000, day + 660_000),
            (day + 600_000, day + 3_600_000),
        ]
        try await expectSameSums(store, reader, windows: windows, "as read from the file")

        // web-01's minutes 3 and 11 arrive, then the ones between late and shuffled: virtual gaps come and split.
        _ = try await store.ingest([a[3], a[11]], receivedAt: day + 800_000)
        try await expectSameSums(store, reader, windows: windows, "with a virtual gap")
        var generator = SplitMix64(seed: 11)
        for batch in a[4..<11].shuffled(using: &generator) {
            _ = try await store.ingest([batch], receivedAt: day + 900_000)
            try await expectSameSums(store, reader, windows: windows, "late data")
        }
        // Duplicates, a new agent in a new site (new interface, host and group series), several batches a commit.
        _ = try await store.ingest(Array(a[2..<5]) + Array(b[3..<8]) + Array(c[0..<6]), receivedAt: day + 900_000)
        try await expectSameSums(store, reader, windows: windows, "duplicates and new series")
        _ = try await store.ingest(Array(b[8..<12]) + Array(c[6..<12]), receivedAt: day + 900_000)
        try await expectSameSums(store, reader, windows: windows, "the rest")
        let fleet = try #require(try await reader.series().first { $0.kind == .fleet })
        let total = try await store.sums(level: .oneMinute, series: [fleet.id], from: day, to: day + 3_600_000)
        let measured: Int64 = 3 * (12 * 60 - 1) * 1_000
        #expect(total[fleet.id]?.measuredMilliseconds == measured)

        // Held from later on: the earlier buckets are let go, and a window reaching before them reads the rows.
        try await store.keepRecentBuckets(from: day + 300_000, for: .alerts)
        let ids = try await reader.series().map(\.id)
        #expect(
            try await store.heldSums(level: .oneMinute, series: ids, from: day, to: day + 600_000, fields: .all) == nil)
        #expect(
            try await store.sums(level: .oneMinute, series: ids, from: day, to: day + 600_000)
                == (try await reader.sums(level: .oneMinute, series: ids, from: day, to: day + 600_000)))
        try await expectSameSums(store, reader, windows: [(day + 300_000, day + 900_000)], "held from later")
        // Held from earlier again: read from the file once more.
        try await store.keepRecentBuckets(from: day, for: .alerts)
        try await expectSameSums(store, reader, windows: [(day, day + 3_600_000)], "read again")
        // Coarser levels are always read from the rows.
        #expect(
            try await store.heldSums(level: .fiveMinutes, series: ids, from: day, to: day + 600_000, fields: .all)
                == nil)
    }

    /// The sums kept over a window a live page reads again and again (``RecentBuckets/WindowSums``): after each
    /// commit, the series it changed are summed anew and the others given as kept, and every read equals the rows.
    /// One window, read with two sets of fields, so that both stay kept between commits.
    @Test func keptWindowSumsFollowEachCommit() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, readOnly: true)
        let (a, b, c) = threeAgents()
        _ = try await store.ingest(Array(a[0..<3]) + Array(b[0..<3]), receivedAt: day + 200_000)
        try await store.keepRecentBuckets(from: day, for: .livePages)
        let window = [(day + 60_000, day + 11 * 60_000)]
        try await expectSameSums(store, reader, windows: window, "first read")
        try await expectSameSums(store, reader, windows: window, "read again, nothing committed")
        // One agent's batches, then late ones splitting a virtual gap, then a new agent and the rest of another.
        _ = try await store.ingest([a[3], a[10]], receivedAt: day + 800_000)
        try await expectSameSums(store, reader, windows: window, "one agent, a gap")
        for batch in a[4..<10] {
            _ = try await store.ingest([batch], receivedAt: day + 900_000)
            try await expectSameSums(store, reader, windows: window, "late data")
        }
        _ = try await store.ingest(Array(b[3..<12]) + Array(c[0..<12]), receivedAt: day + 900_000)
        try await expectSameSums(store, reader, windows: window, "new series")
        // A batch past the window's end changes nothing in it.
        _ = try await store.ingest([a[11]], receivedAt: day + 900_000)
        try await expectSameSums(store, reader, windows: window, "after the window")
    }

    /// Just after an hour boundary a live page's last hour starts and ends on whole hours. With the finest buckets
    /// held from its start, the window engine reads it whole from them, and their sums are kept for the next read,
    /// rather than reading the hourly rows from the file; the sums are the same as a reader of the file's, which
    /// holds nothing and reads the hourly level. A window reaching before what is held is read from the file.
    @Test func aWholeHourIsReadFromTheHeldBucketsNotFromTheHourlyRows() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, readOnly: true)
        let (a, b, c) = threeAgents()
        _ = try await store.ingest(a + b + c, receivedAt: day + 800_000)
        try await store.keepRecentBuckets(from: day, for: .livePages)
        let (held, file) = (try await Fleet.engine(store), try await Fleet.engine(reader))
        let ids = try await reader.series().map(\.id)
        let now = day + 3_600_000
        #expect(store.holdsRecentBuckets(level: .oneMinute, from: day))
        #expect(!reader.holdsRecentBuckets(level: .oneMinute, from: day))

        let hour = Window(from: day, to: day + 3_600_000)
        let sums = try await held.sums(ids, window: hour, now: now)
        #expect(store.recent.keptWindows().contains(day..<day + 3_600_000), "the hour is summed from memory")
        #expect(sums == (try await file.sums(ids, window: hour, now: now)))
        #expect(sums.count == ids.count)

        // Held from later on, the hour is read in pieces from the file as before, with the same sums.
        try await store.keepRecentBuckets(from: day + 300_000, for: .livePages)
        #expect(!store.holdsRecentBuckets(level: .oneMinute, from: day))
        #expect(try await held.sums(ids, window: hour, now: now) == sums)
        #expect(!store.recent.keptWindows().contains(day..<day + 3_600_000))
    }

    /// Should nobody move them on (the alert rules removed), the held buckets keep to a bound of their own: never
    /// twice the 64 buckets a series that the alert service may ask for.
    @Test func heldBucketsKeepToABoundWhenNobodyMovesThemOn() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, readOnly: true)
        let minutes = batches(agent: "web-01", site: "ams", interface: "eth0", ifindex: 2, count: 140)
        _ = try await store.ingest([minutes[0]], receivedAt: day + 100_000)
        try await store.keepRecentBuckets(from: day, for: .alerts)
        for minute in minutes.dropFirst() { _ = try await store.ingest([minute], receivedAt: day + 9_000_000) }
        #expect(!store.recent.covers(level: .oneMinute, from: day))
        let from = day + Int64(139 - RecentBucketLimit.perSeries) * 60_000
        #expect(store.recent.covers(level: .oneMinute, from: from))
        try await expectSameSums(store, reader, windows: [(from, day + 140 * 60_000)], "after the bound")
    }

    /// Retention deleting the finest level's rows lets go of the held buckets before its cutoff with them.
    @Test func retentionTrimsTheHeldBuckets() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, readOnly: true)
        let minutes = batches(agent: "web-01", site: "ams", interface: "eth0", ifindex: 2, count: 12)
        for minute in minutes { _ = try await store.ingest([minute], receivedAt: day + 800_000) }
        try await store.keepRecentBuckets(from: day, for: .alerts)
        let policy = RetentionPolicy(raw: 60_000, levels: [.oneMinute: 300_000], lateData: 60_000)
        _ = try await store.prune(policy, now: day + 720_000, slice: 1_000)
        #expect(!store.recent.covers(level: .oneMinute, from: day))
        #expect(store.recent.covers(level: .oneMinute, from: day + 420_000))
        try await expectSameSums(store, reader, windows: [(day + 420_000, day + 720_000)], "after retention")
    }

    /// A commit by another writer (here, a second owner of the same file) is one the held buckets did not see: the
    /// next commit finds the revision moved past them and lets them go, and reads take the rows.
    @Test func aCommitFromElsewhereLetsTheHeldBucketsGo() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let a = batches(agent: "web-01", site: "ams", interface: "eth0", ifindex: 2, count: 6)
        _ = try await store.ingest([a[0]], receivedAt: day + 100_000)
        try await store.keepRecentBuckets(from: day, for: .alerts)
        let ids = try await store.series().map(\.id)
        #expect(
            try await store.heldSums(level: .oneMinute, series: ids, from: day, to: day + 600_000, fields: .all) != nil)
        let other = try SQLiteStore(path: path)
        _ = try await other.ingest([a[1]], receivedAt: day + 200_000)
        // Not held at the file's revision: the rows answer, with the other writer's minute in them.
        #expect(
            try await store.heldSums(level: .oneMinute, series: ids, from: day, to: day + 600_000, fields: .all) == nil)
        let eth0 = try #require(try await store.series().first { $0.kind == .interface })
        let sums = try await store.sums(level: .oneMinute, series: [eth0.id], from: day, to: day + 600_000)
        #expect(sums[eth0.id]?.measuredMilliseconds == 119_000)
        _ = try await store.ingest([a[2]], receivedAt: day + 300_000)
        #expect(!store.recent.covers(level: .oneMinute, from: day))
    }

    /// The alert service and the live pages each ask for their own window: the store holds from the earliest, one
    /// moving on or letting go never takes what the other still reads, and with neither nothing is held.
    @Test func eachHolderKeepsItsOwnWindowHeld() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let reader = try SQLiteStore(path: path, readOnly: true)
        let minutes = batches(agent: "web-01", site: "ams", interface: "eth0", ifindex: 2, count: 30)
        _ = try await store.ingest(Array(minutes[0..<20]), receivedAt: day + 1_300_000)
        // The pages' hour first, then a rule's last five minutes: the hour stays held.
        try await store.keepRecentBuckets(from: day + 60_000, for: .livePages)
        try await store.keepRecentBuckets(from: day + 900_000, for: .alerts)
        #expect(store.recent.covers(level: .oneMinute, from: day + 60_000))
        _ = try await store.ingest(Array(minutes[20..<30]), receivedAt: day + 1_900_000)
        try await expectSameSums(store, reader, windows: [(day + 60_000, day + 1_800_000)], "both holding")
        // The rules go: the pages' window is still held.
        try await store.keepRecentBuckets(from: nil, for: .alerts)
        #expect(store.recent.covers(level: .oneMinute, from: day + 60_000))
        // The pages move on: older buckets are let go.
        try await store.keepRecentBuckets(from: day + 600_000, for: .livePages)
        #expect(!store.recent.covers(level: .oneMinute, from: day + 60_000))
        #expect(store.recent.covers(level: .oneMinute, from: day + 600_000))
        // A rule asking for earlier buckets than the pages' has them read from the file again.
        try await store.keepRecentBuckets(from: day + 120_000, for: .alerts)
        try await expectSameSums(store, reader, windows: [(day + 120_000, day + 1_800_000)], "read again")
        // Neither holding: nothing is.
        try await store.keepRecentBuckets(from: nil, for: .alerts)
        try await store.keepRecentBuckets(from: nil, for: .livePages)
        #expect(!store.recent.covers(level: .oneMinute, from: day + 1_700_000))
    }

    /// The alert service reads the catalogue again only when its generation moves: it must move with every change a
    /// catalogue shows (a new interface, new link facts, relabelled agents) and need not with traffic alone.
    @Test func theCatalogueGenerationMovesWithTheCatalogueNotWithTraffic() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        var maker = BatchMaker()
        func generation() throws -> Int64 { try #require(store.catalogueGeneration()) }
        _ = try await store.ingest([maker.batch(1, start: day, rx: [0, 100])], receivedAt: day + 5_000)
        var last = try generation()

        _ = try await store.ingest([maker.batch(2, start: day + 2_000, rx: [200, 300])], receivedAt: day + 6_000)
        #expect(try generation() == last, "traffic alone")
        _ = try await store.ingest([maker.batch(2, start: day + 2_000, rx: [200, 300])], receivedAt: day + 6_000)
        #expect(try generation() == last, "a duplicate")

        _ = try await store.ingest(
            [maker.batch(3, start: day + 4_000, rx: [0, 100], interface: "eth1", ifindex: 3)], receivedAt: day + 7_000)
        #expect(try generation() != last, "a new interface")
        last = try generation()

        _ = try await store.ingest(
            [maker.batch(4, start: day + 6_000, rx: [400, 500], speed: 10_000)], receivedAt: day + 8_000)
        #expect(try generation() != last, "new link facts")
        last = try generation()

        maker.agent.labels = Labels([(key: "site", value: "ams")])
        _ = try await store.ingest(
            [maker.batch(5, start: day + 8_000, rx: [600, 700], speed: 10_000)], receivedAt: day + 9_000)
        #expect(try generation() != last, "relabelled")

        // A restart: the new writer has cached nothing, and the agent's first batch (the same agent, interface
        // and link) changes no catalogue. Before, it moved the generation for each agent and series it met again,
        // so every open page's first redraw after a restart read the whole catalogue again.
        let restarted = try SQLiteStore(path: path)
        func restartedGeneration() throws -> Int64 { try #require(restarted.catalogueGeneration()) }
        last = try restartedGeneration()
        _ = try await restarted.ingest(
            [maker.batch(6, start: day + 10_000, rx: [800, 900], speed: 10_000)], receivedAt: day + 11_000)
        #expect(try restartedGeneration() == last, "a known agent, interface and link after a restart")
        maker.agent.hostname = "web-01.example.net"
        _ = try await restarted.ingest(
            [maker.batch(7, start: day + 12_000, rx: [1_000, 1_100], speed: 10_000)], receivedAt: day + 13_000)
        #expect(try restartedGeneration() != last, "a new hostname")

        // A reader cannot tell what the daemon changes.
        #expect(try SQLiteStore(path: path, readOnly: true).catalogueGeneration() == nil)
    }
}
