import Foundation
import PulseAnalytics
import PulseCore
import Testing

@testable import PulseStore
@testable import PulseStoreSQLite

/// Times an agent can send that no bucket can hold (`docs/windows.md`, "Time that cannot be placed"): the store
/// refuses what breaks the protocol's bounds and keeps the rest as unplaced counts, and nothing traps. Before, the
/// first two tests trapped on an overflow in counting (the daemon's crash loop: the batch was already acknowledged
/// and applied again at every start).
@Suite struct HostileTimeTests {
    let now: Int64 = 1_790_812_800_000  // 2026-10-01T00:00:00Z

    /// A batch of two ticks, the first at `first` and the last at `last`; `eth0` is sampled at the first only,
    /// `eth1` at both.
    func spanning(_ sequence: UInt64, _ first: Int64, _ last: Int64, rx: UInt64) -> IngestBatch {
        let maker = BatchMaker()
        var counters = CounterValues()
        counters[.rxBytes] = rx
        let wire = WireBatch(
            stream: maker.stream, sequence: sequence, order: sequence, interval: 1_000, heartbeat: 0,
            timestamps: [first, last],
            sections: [
                BatchSection(descriptorID: 1, ticks: [0], values: counters.values),
                BatchSection(descriptorID: 2, ticks: [0, 1], values: counters.values + counters.values),
            ])
        return IngestBatch(
            agent: maker.agent, batch: wire, descriptors: [maker.descriptor(1, "eth0"), maker.descriptor(2, "eth1")])
    }

    /// The batch of the crash loop: it spans [0, 2⁶²] and ends that far ahead. The protocol's bound on timestamps
    /// refuses it, and an ordinary batch after it is stored.
    @Test func aBatchEndingAtTwoToTheSixtySecondIsRefusedAndTheNextStored() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        await #expect(throws: StoreError.self) {
            _ = try await store.ingest([spanning(1, 0, 1 << 62, rx: 1_000)], receivedAt: now)
        }
        let next = BatchMaker().batch(2, start: now - 10_000, rx: [2_000, 3_000, 4_000])
        #expect(try await store.ingest([next], receivedAt: now) == [.stored])
    }

    /// The same shape within the bounds: [1970, 9999]. It ends further ahead than max_skew, so it is not moved; its
    /// samples are unplaced, and so are the steps from them to the next batch's, which are spread normally after.
    @Test func aBatchFromNineteenSeventyToNineNineNineNineIsKeptUnplaced() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        #expect(
            try await store.ingest([spanning(1, 0, BatchRules.latestTimestamp, rx: 1_000)], receivedAt: now)
                == [.stored])
        var next = BatchMaker().batch(2, start: now - 10_000, rx: [6_000, 7_000, 8_000])
        next.sections[0].descriptor.name = "eth0"
        #expect(try await store.ingest([next], receivedAt: now) == [.stored])
        let eth0 = try #require(try await store.series().first { $0.interface == "eth0" })
        let unplaced = try await store.unplaced(series: [eth0.id], from: .min, to: .max)[eth0.id]
        // The step from the sample in 1970 to the first of the next batch: 5,000 bytes with no time.
        #expect(unplaced?.traffic[.rxBytes] == 5_000 && unplaced?.steps == 1)
        let buckets = try await store.buckets(level: .oneDay, series: [eth0.id], from: .min, to: .max)[eth0.id] ?? []
        #expect(buckets.map(\.start) == [RollupLevel.oneDay.bucketStart(now - 10_000)])
        #expect(buckets.first?.values.traffic[.rxBytes] == 2_000)
        // eth1's step from 1970 to 9999, and eth0's.
        #expect(try await store.totals().unplacedSteps == 2)
        let eth1 = try #require(try await store.series().first { $0.interface == "eth1" })
        #expect(try await store.unplaced(series: [eth1.id], from: .min, to: .max)[eth1.id]?.steps == 1)
        #expect(try await store.buckets(level: .oneDay, series: [eth1.id], from: .min, to: .max)[eth1.id] == nil)
    }

    /// A gap longer than max_age (an agent off for a year) is unplaced, not spread over a year of buckets and bill
    /// intervals.
    @Test func aYearLongGapIsUnplaced() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        let maker = BatchMaker()
        let year: Int64 = 365 * 86_400_000
        #expect(
            try await store.ingest([maker.batch(1, start: now - year, rx: [0, 10])], receivedAt: now - year) == [
                .stored
            ])
        #expect(try await store.ingest([maker.batch(2, start: now, rx: [1_010, 1_020])], receivedAt: now) == [.stored])
        let eth0 = try #require(try await store.series().first { $0.interface == "eth0" })
        #expect(try await store.unplaced(series: [eth0.id], from: .min, to: .max)[eth0.id]?.traffic[.rxBytes] == 1_000)
        let sums = try await store.sums(level: .oneDay, series: [eth0.id], from: .min, to: .max)[eth0.id]
        #expect(sums?.traffic[.rxBytes] == 20)
    }
}
