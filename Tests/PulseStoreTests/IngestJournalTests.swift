import Foundation
import PulseAnalytics
import PulseCore
import Synchronization
import Testing

@testable import PulseStore
@testable import PulseStoreSQLite

/// The ingest journal's form of a batch (``IngestBatch/journalBytes``): what the writer reads back after a crash
/// must be what it would have read from the batch as it arrived.
@Suite struct IngestJournalTests {
    /// Two interfaces, one with a name that is not UTF-8 and markup-like, link facts at two ticks, labels with quotes
    /// and a newline, an idle interface present at fewer ticks.
    func hostileBatch() -> IngestBatch {
        let boot = BootID(high: 0xDEAD_BEEF, low: 42)
        let descriptors = [
            InterfaceDescriptor(
                id: 7, name: InterfaceName(bytes: [0x61, 0x3C, 0x62, 0x26, 0xFF, 0x63]),
                epoch: CounterEpoch(bootID: boot, ifindex: 9, width: .bits32), began: 1_899_999_000_000),
            InterfaceDescriptor(id: 8, name: "eth1", epoch: CounterEpoch(bootID: boot, ifindex: 3, width: .bits64)),
        ]
        let values = (0..<3 * Counter.count).map { UInt64($0) * 1_234_567 + (UInt64(1) << 40) }
        let wire = WireBatch(
            stream: 77, sequence: 12, order: 1_900_000_000_123, droppedBefore: 3, interval: 1_000, heartbeat: 60_000,
            timestamps: [1_900_000_000_000, 1_900_000_001_000, 1_900_000_002_000],
            sections: [
                BatchSection(descriptorID: 7, ticks: [0, 1, 2], values: values),
                BatchSection(descriptorID: 8, ticks: [0, 2], values: Array(values.prefix(2 * Counter.count))),
            ],
            linkStates: [
                LinkStateRecord(
                    descriptorID: 7, tick: 0,
                    state: LinkState(speedMbps: nil, operState: .down, carrier: nil, mtu: 9_000, kind: .bond)),
                LinkStateRecord(
                    descriptorID: 7, tick: 2,
                    state: LinkState(
                        speedMbps: 25_000, operState: .up, carrier: true, mtu: 9_000, kind: .bond,
                        relation: InterfaceRelation(rawValue: 1))),
            ])
        var batch = IngestBatch(
            agent: AgentIdentity(
                name: "web-01", hostname: "web \"01\"", version: "0.3.0",
                labels: Labels([("site", "fra<1>"), ("note", "a \"quoted\"\nline")])),
            batch: wire, descriptors: descriptors)
        batch.receivedAt = 1_900_000_003_456
        return batch
    }

    @Test func aBatchReadsBackAsItWasJournaled() throws {
        let batch = hostileBatch()
        let read = try IngestBatch(journalBytes: batch.journalBytes)
        #expect(read.agent == batch.agent)
        #expect(read.stream == batch.stream && read.sequence == batch.sequence && read.order == batch.order)
        #expect(read.droppedBefore == 3 && read.interval == 1_000 && read.heartbeat == 60_000)
        #expect(read.lastTimestamp == batch.lastTimestamp && read.valueCount == batch.valueCount)
        #expect(read.receivedAt == 1_900_000_003_456)
        #expect(read.sections.count == 2)
        for (got, sent) in zip(read.sections, batch.sections) {
            #expect(got.descriptor == sent.descriptor)
            #expect(got.ticks == sent.ticks)
            #expect(got.timestamps == sent.timestamps)
            #expect(got.traffic == sent.traffic)
            #expect(got.chunk == sent.chunk)
            #expect(got.links.map(\.tick) == sent.links.map(\.tick))
            #expect(got.links.map(\.state) == sent.links.map(\.state))
        }
        #expect(read.journalBytes == batch.journalBytes)
        var unstamped = batch
        unstamped.receivedAt = nil
        #expect(try IngestBatch(journalBytes: unstamped.journalBytes).receivedAt == nil)
    }

    /// A damaged entry is an error (the daemon sets it aside), never a trap or a batch of garbage.
    @Test func aDamagedEntryIsAnError() throws {
        let bytes = hostileBatch().journalBytes
        for cut in [1, bytes.count / 3, bytes.count - 1] {
            #expect(throws: (any Error).self) { try IngestBatch(journalBytes: Array(bytes.prefix(cut))) }
        }
        #expect(throws: (any Error).self) { try IngestBatch(journalBytes: [3] + bytes.dropFirst()) }
        #expect(throws: (any Error).self) { try IngestBatch(journalBytes: bytes + [0]) }
    }

    /// Ids only go up: reopening continues after the highest id the journal or the store's cursor has seen.
    @Test func idsAreNeverTakenTwice() async throws {
        let directory = temporaryDirectory()
        let path = "\(directory)/netpulse-ingest-journal.db"
        do {
            let journal = try IngestJournal(path: path, after: 0)
            #expect(try await journal.append([hostileBatch(), hostileBatch(), hostileBatch()]) == [1, 2, 3])
            try await journal.remove(through: 3)
        }
        do {
            let journal = try IngestJournal(path: path, after: 10)
            #expect(try await journal.append([hostileBatch()]) == [11])
        }
        let journal = try IngestJournal(path: path, after: 2)
        #expect(try await journal.append([hostileBatch()]) == [12])
        #expect(
            IngestJournal.path(forStore: "/var/lib/netpulsed/netpulse.db")
                == "/var/lib/netpulsed/netpulse-ingest-journal.db")
        #expect(IngestJournal.path(forStore: "/data/b.sqlite") == "/data/b.sqlite-ingest-journal.db")
    }

    /// Applied entries are removed a part at a time: exactly those up to the id, and an append made meanwhile (an
    /// acknowledgement) goes between two parts instead of waiting for the whole removal.
    @Test func removalGoesInPartsThatAppendsGoBetween() async throws {
        let journal = try IngestJournal(path: "\(temporaryDirectory())/ingest-journal.db", after: 0)
        let count = IngestJournal.removalPart * 20 + 7
        var appended = 0
        while appended < count {
            let batches = Array(repeating: hostileBatch(), count: min(1_000, count - appended))
            appended += try await journal.append(batches).count
        }
        let through = Int64(count - 3)
        let removed = Atomic<Bool>(false)
        let removal = Task {
            try await journal.remove(through: through)
            removed.store(true, ordering: .sequentiallyConsistent)
        }
        // Once some entries are gone the removal has begun (a read waits for the write in progress: one part).
        while try journal.counts().entries == count { await Task.yield() }
        let ids = try await journal.append([hostileBatch()])
        let removedFirst = removed.load(ordering: .sequentiallyConsistent)
        #expect(!removedFirst, "the append waited for the whole removal")
        try await removal.value
        #expect(ids == [Int64(count + 1)])
        let (left, _) = try journal.entries(after: 0, limit: 10)
        #expect(left.map(\.id) == [Int64(count - 2), Int64(count - 1), Int64(count), Int64(count + 1)])
    }

    /// Entries come back in order, with the damaged ones named apart.
    @Test func theJournalKeepsOrderAndNamesDamagedEntries() async throws {
        let directory = temporaryDirectory()
        let journal = try IngestJournal(path: "\(directory)/ingest-journal.db", after: 40)
        var batches = [hostileBatch(), hostileBatch(), hostileBatch()]
        for index in batches.indices { batches[index].sequence = UInt64(index + 1) }
        #expect(try await journal.append(batches) == [41, 42, 43])
        let (entries, damaged) = try journal.entries(after: 41, limit: 10)
        #expect(entries.map(\.id) == [42, 43] && damaged.isEmpty)
        #expect(entries.map(\.batch.sequence) == [2, 3])
        try await journal.remove(through: 42)
        #expect(try journal.counts() == (entries: 1, setAside: 0))
        try await journal.setAside(43, reason: "test")
        #expect(try journal.counts() == (entries: 0, setAside: 1))
    }
}
