import Foundation
import PulseCore
import PulseQuery
import PulseReports
import Synchronization
import Testing

@testable import PulseDaemon
@testable import PulseSettings
@testable import PulseStoreSQLite

/// Live pages share reads (``LiveReads``): a request is answered by a read of the same dashboard, range and second
/// whose data generation is at least the one it needs (the store's when it arrived, or the one its redraw's
/// announcement carried), and by a new read otherwise.
@Suite struct LiveReadsTests {
    /// A real fleet dashboard read once from a small store, handed out by the reads counted below.
    func drawnFleet() async throws -> LiveReads.Drawn {
        let directory = NSTemporaryDirectory() + "netpulse-live-reads-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try DaemonConfig.parse(
            ConfigDocument(text: "[daemon]\nstate_directory = \"\(directory)\"\n", file: "netpulsed.toml"))
        let store = try SQLiteStore(path: config.storePath, settings: config.store)
        let fleet = AlertRoundTests()
        _ = try await store.ingest(fleet.interfaces.map { fleet.batch($0, minute: 0) }, receivedAt: fleet.day + 60_000)
        let engine = try await config.windowEngine(over: store)
        let spec = try #require(config.dashboards.dashboards(for: engine.catalogue, groupBy: []).first)
        let data = try await DashboardQuery(engine: engine).read(spec, range: .hour, now: fleet.day + 120_000)
        return LiveReads.Drawn(data: data, charts: [])
    }

    @Test func aRedrawIsAnsweredByAnyReadAtLeastAsNewAsItsAnnouncement() async throws {
        let drawn = try await drawnFleet()
        let reads = LiveReads()
        let count = Atomic<Int>(0)
        func ask(data: Int64, second: Int64 = 1_000, since: Int64? = nil) async throws {
            let key = LiveReads.Key(stem: "fleet", range: .named(.hour), second: second, data: data)
            _ = try await reads.drawn(key, since: since) {
                count.add(1, ordering: .relaxed)
                return drawn
            }
        }
        try await ask(data: 5)
        try await ask(data: 5)
        #expect(count.load(ordering: .relaxed) == 1, "the same generation: one read")
        // A commit (6) landed between a page's panel requests; the redraw was told of 5: the read of 5 answers.
        try await ask(data: 6, since: 5)
        #expect(count.load(ordering: .relaxed) == 1)
        // A request without an announcement needs what it found: 6 is newer than the read.
        try await ask(data: 6)
        #expect(count.load(ordering: .relaxed) == 2)
        // The newest read answers whatever is older: a redraw told of 5 or 6, and a request at 6.
        try await ask(data: 9, since: 6)
        try await ask(data: 9, since: 5)
        try await ask(data: 6)
        #expect(count.load(ordering: .relaxed) == 2)
        // Told of 12 by a daemon that restarted since (its counter began again at 3): what there is now.
        try await ask(data: 3, since: 12)
        #expect(count.load(ordering: .relaxed) == 2, "a read of 6 holds everything up to 3")
        // Another second, another dashboard: read anew.
        try await ask(data: 9, second: 2_000, since: 5)
        #expect(count.load(ordering: .relaxed) == 3)
        let host = LiveReads.Key(stem: "host-web-01", range: .named(.hour), second: 2_000, data: 9)
        _ = try await reads.drawn(host, since: 5) {
            count.add(1, ordering: .relaxed)
            return drawn
        }
        #expect(count.load(ordering: .relaxed) == 4)
    }
}
