import Foundation
import PulseAnalytics
import PulseCore
import Synchronization
import Testing

@testable import PulseStore

/// A paced read (the daemon's dashboards, ``ReadPacing``) is made in parts with a pause before each, and reads
/// exactly what the same read unpaced reads.
@Suite struct ReadPacingTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    /// A store of twelve agents of one interface each, three minutes of traffic that differs between them.
    func store() async throws -> SQLiteStore {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        var batches = [IngestBatch]()
        for agent in 0..<12 {
            var maker = BatchMaker()
            maker.agent = AgentIdentity(name: "host-\(agent)", hostname: "host-\(agent)", version: "0.2.0")
            maker.stream = UInt64(agent + 1)
            let rx = (0..<180).map { UInt64($0 * 1_000 * (agent + 1)) }
            batches.append(maker.batch(1, start: day, rx: rx))
        }
        _ = try await store.ingest(batches, receivedAt: day + 200_000)
        return store
    }

    @Test func aPacedReadPausesBeforeEachPartAndReadsWhatAWholeReadReads() async throws {
        let store = try await store()
        let ids = try await store.series().map(\.id)
        #expect(ids.count == 25, "12 interfaces, 12 hosts, the fleet")
        let (from, to) = (day, day + 180_000)
        let whole = try await store.sums(level: .oneMinute, series: ids, from: from, to: to)
        #expect(whole.count == ids.count && whole.values.allSatisfy { $0.traffic[0] > 0 })
        let wholeBuckets = try await store.reduceBuckets(
            level: .oneMinute, series: ids, from: from, to: to, fields: .all
        ) { _, buckets in buckets }

        let pauses = Atomic<Int>(0)
        let pacing = ReadPacing(partSize: 4) { pauses.add(1, ordering: .relaxed) }
        let paced = try await ReadPacing.$current.withValue(pacing) {
            try await store.sums(level: .oneMinute, series: ids, from: from, to: to)
        }
        #expect(paced == whole)
        #expect(pauses.load(ordering: .relaxed) == 7, "25 series in parts of 4: a pause before each of 7 parts")

        let pacedBuckets = try await ReadPacing.$current.withValue(pacing) {
            try await store.reduceBuckets(level: .oneMinute, series: ids, from: from, to: to, fields: .all) {
                _, buckets in buckets
            }
        }
        #expect(pacedBuckets == wholeBuckets)
        #expect(pauses.load(ordering: .relaxed) == 14)
    }

    /// A pause that throws (a stopping daemon) ends the read there with its error, reading nothing more.
    @Test func aPauseThatThrowsEndsTheRead() async throws {
        let store = try await store()
        let ids = try await store.series().map(\.id)
        let pauses = Atomic<Int>(0)
        let stopping = ReadPacing(partSize: 4) {
            if pauses.add(1, ordering: .relaxed).newValue == 2 { throw CancellationError() }
        }
        await #expect(throws: CancellationError.self) {
            try await ReadPacing.$current.withValue(stopping) {
                try await store.sums(level: .oneMinute, series: ids, from: self.day, to: self.day + 180_000)
            }
        }
        #expect(pauses.load(ordering: .relaxed) == 2)
    }
}
