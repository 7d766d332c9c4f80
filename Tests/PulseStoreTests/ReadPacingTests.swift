import Foundation
import PulseAnalytics
import PulseCore
import Synchronization
import Testing

@testable import PulseStore
@testable import PulseStoreSQLite

/// A paced read (the daemon's dashboards, ``ReadPacing``) is made in parts with a pause before each, and reads
/// exactly what the same read unpaced reads.
@Suite struct ReadPacingTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    /// Agent `agent`'s batches: host-`agent`, one interface, a stream of its own.
    static func maker(_ agent: Int) -> BatchMaker {
        var maker = BatchMaker()
        maker.agent = AgentIdentity(name: "host-\(agent)", hostname: "host-\(agent)", version: "0.2.0")
        maker.stream = UInt64(agent + 1)
        return maker
    }

    /// 80 agents of one interface (host-0 … host-79, each with its own rate), minutes 0 and 3 from `day`: the two
    /// minutes between are a virtual gap of each (batch 2 never came), as after a fleet's streams restarted.
    static func restartedStreams(from day: Int64) -> [IngestBatch] {
        (0..<80).flatMap { agent in
            let rate = UInt64(1_000 * (agent + 1))
            return [
                maker(agent).batch(1, start: day, rx: (0..<60).map { UInt64($0) * rate }),
                maker(agent).batch(3, start: day + 180_000, rx: (180..<240).map { UInt64($0) * rate }),
            ]
        }
    }

    /// A store of twelve agents of one interface each, three minutes of traffic that differs between them.
    func store() async throws -> SQLiteStore {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        let batches = (0..<12).map { agent in
            Self.maker(agent).batch(1, start: day, rx: (0..<180).map { UInt64($0 * 1_000 * (agent + 1)) })
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

    /// After many streams restarted (a virtual gap per interface), a read of many interfaces and hosts finds their
    /// gaps by key, part by part, instead of reading every gap of the range: it reads what a read holding the fleet
    /// (which reads every gap) reads for them, paced or not, and the gaps do add to it.
    @Test func manyInterfacesAndHostsFindTheirOwnGapsByKey() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        let batches = Self.restartedStreams(from: day)
        _ = try await store.ingest(batches, receivedAt: day + 300_000)
        let all = try await store.series()
        let ids = all.map(\.id)
        let ownersOnly = all.filter { $0.kind == .interface || $0.kind == .host }.map(\.id)
        let fleet = try #require(all.first { $0.kind == .fleet }).id
        #expect(ownersOnly.count == 160 && ids.count > ownersOnly.count)
        let (from, to) = (day, day + 240_000)
        let interfaces = all.filter { $0.kind == .interface }.map(\.id)
        let gaps = try await store.pool.read { db in
            (
                // Exactly 80 gaps overlap the read: by key for 79 interfaces, not for all 80.
                try SQLiteStore.gapOwners(of: Set(interfaces.prefix(79)), from: from, in: db) != nil
                    && SQLiteStore.gapOwners(of: Set(interfaces), from: from, in: db) == nil,
                try SQLiteStore.gapOwners(of: Set(ownersOnly.prefix(70)), from: from, in: db),
                try SQLiteStore.gapOwners(of: Set(ownersOnly), from: from, in: db),
                try SQLiteStore.gapOwners(of: Set(ownersOnly.prefix(10) + [fleet]), from: from, in: db)
            )
        }
        #expect(interfaces.count == 80 && gaps.0, "one virtual gap per interface")
        #expect(gaps.1 != nil, "70 series, 80 gaps: looked up by key")
        #expect(gaps.2 == nil, "160 series, 80 gaps: every gap of the range read once")
        #expect(gaps.3 == nil, "the fleet's gaps are every interface's")

        let everyGap = try await store.sums(level: .oneMinute, series: ids, from: from, to: to)
        for part in [Array(ownersOnly.prefix(70)), Array(ownersOnly.suffix(70)), [ownersOnly[3]]] {
            let byKey = try await store.sums(level: .oneMinute, series: part, from: from, to: to)
            #expect(byKey == everyGap.filter { part.contains($0.key) })
            let buckets = try await store.reduceBuckets(
                level: .oneMinute, series: part, from: from, to: to, fields: .all
            ) { _, buckets in buckets.count }
            #expect(buckets.count == part.count && buckets.values.allSatisfy { $0 == 4 }, "minutes 1 and 2 spread")
        }
        let paced = try await ReadPacing.$current.withValue(ReadPacing(partSize: 50) {}) {
            try await store.sums(level: .oneMinute, series: ownersOnly, from: from, to: to)
        }
        #expect(paced == everyGap.filter { ownersOnly.contains($0.key) })
        // The gap's two minutes counted: each interface's rx over the four minutes is its counter's whole rise.
        for record in all where record.kind == .interface {
            let agent = try #require(record.agent.flatMap { Int($0.dropFirst("host-".count)) })
            #expect(everyGap[record.id]?.traffic[.rxBytes] == Int64(239 * 1_000 * (agent + 1)))
        }
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
