import Logging
import PulseCore
import PulseStore
import PulseStoreSQLite
import ServiceLifecycle
import Synchronization
import Testing

@testable import PulseDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The ingest service against a real SQLite store.
@Suite struct IngestServiceTests {
    /// One batch of one agent: a single one-second tick of eth0.
    func batch(agent: String, order: UInt64) -> IngestBatch {
        var counters = CounterValues()
        counters[.rxBytes] = 1_000
        let descriptor = InterfaceDescriptor(
            id: 1, name: "eth0", epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: 2, width: .bits64))
        let wire = WireBatch(
            stream: 5, sequence: 1, order: order, interval: 1_000, heartbeat: 0,
            timestamps: [WallClock.system.now() - 5_000],
            sections: [BatchSection(descriptorID: 1, ticks: [0], values: counters.values)])
        return IngestBatch(
            agent: AgentIdentity(name: agent, hostname: agent, version: "test"), batch: wire, descriptors: [descriptor])
    }

    /// Places are promised before a connection decodes a batch frame: never more than `limit` batches, a reserved
    /// batch is taken even past the bytes (another loop filled them meanwhile), and a place given back wakes a
    /// connection waiting for room.
    @Test func reservedPlacesBoundTheQueueByCount() {
        let queue = IngestQueue(limit: 2, byteLimit: 1)
        let done: @Sendable (Result<IngestOutcome, any Error>) -> Void = { _ in }
        #expect(queue.reserve())
        #expect(queue.reserve())
        #expect(!queue.reserve() && !queue.hasRoom && queue.refusals == 1)
        let woken = Atomic<Int>(0)
        queue.whenRoom { woken.add(1, ordering: .relaxed) }
        queue.release()
        #expect(woken.load(ordering: .relaxed) == 1 && queue.hasRoom)
        #expect(queue.reserve())
        // Past `byteLimit` once the first is queued: the second was promised its place, and is taken.
        #expect(queue.offer(batch(agent: "a", order: 1), reserved: true, completion: done))
        #expect(!queue.hasRoom)
        #expect(queue.offer(batch(agent: "b", order: 1), reserved: true, completion: done))
        #expect(!queue.offer(batch(agent: "c", order: 1), completion: done))
        #expect(queue.pending == 2)
    }

    /// One batch the store refuses must not fail the other agents' batches committed with it: before, the whole
    /// group failed and every connection in it was closed; now the group is committed again in halves and only the
    /// refused batch fails, as invalid (so its agent is told to set it aside).
    @Test func aBatchTheStoreRefusesFailsAloneNotItsWholeGroup() async throws {
        var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        let queue = IngestQueue(limit: 64)
        // A commit delay gathers all seven offers into one group commit.
        let service = IngestService(
            store: store, queue: queue, logger: Logger(label: "test"), commitDelay: 300)
        let results = Mutex<[String: Result<IngestOutcome, any Error>]>([:])
        let names = (1...7).map { "host-\($0)" }
        for name in names {
            // host-5's order is above what the store can hold (2⁶³ − 1).
            let order = name == "host-5" ? UInt64(Int64.max) + 1 : 1_000
            let offered = queue.offer(batch(agent: name, order: order)) { result in
                results.withLock { $0[name] = result }
            }
            #expect(offered)
        }
        let running = Task { try await service.run() }
        defer { running.cancel() }
        for _ in 0..<200 where results.withLock({ $0.count }) < names.count {
            try await Task.sleep(for: .milliseconds(50))
        }
        let outcomes = results.withLock { $0 }
        #expect(outcomes.count == names.count)
        for name in names where name != "host-5" {
            guard case .success(.stored) = outcomes[name] else {
                Issue.record("\(name): \(String(describing: outcomes[name]))")
                continue
            }
        }
        guard case .failure(StoreError.invalidBatch) = outcomes["host-5"] else {
            Issue.record("host-5's batch was not refused as invalid: \(String(describing: outcomes["host-5"]))")
            return
        }
        #expect(service.batchesStored.load(ordering: .relaxed) == 6)
    }
}

/// The ingest service with its journal (``IngestJournal``): batches acknowledged once journaled, applied to the
/// store after, exactly once across a crash.
@Suite struct JournaledIngestTests {
    func directory() -> String {
        var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    func batch(agent: String, order: UInt64) -> IngestBatch {
        IngestServiceTests().batch(agent: agent, order: order)
    }

    func waitUntil(_ condition: () throws -> Bool) async throws {
        for _ in 0..<400 where try !condition() { try await Task.sleep(for: .milliseconds(25)) }
    }

    /// A batch the store refuses after it was journaled and acknowledged cannot be refused to its agent any more: it
    /// is set aside in the journal (where an operator finds it), counted, and the batches after it are applied.
    @Test func aJournaledBatchTheStoreRefusesIsSetAsideAndTheRestApplied() async throws {
        let directory = directory()
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        let journal = try IngestJournal(path: "\(directory)/ingest-journal.db", after: try store.journalApplied())
        let queue = IngestQueue(limit: 64)
        let service = IngestService(
            store: store, journal: journal, queue: queue, logger: Logger(label: "test"), commitDelay: 300)
        let results = Mutex<[String: Result<IngestOutcome, any Error>]>([:])
        let names = (1...7).map { "host-\($0)" }
        for name in names {
            let order = name == "host-5" ? UInt64(Int64.max) + 1 : 1_000
            #expect(queue.offer(batch(agent: name, order: order)) { result in results.withLock { $0[name] = result } })
        }
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await waitUntil { service.batchesStored.load(ordering: .relaxed) == 6 }
        for name in names {
            guard case .success(.stored) = results.withLock({ $0[name] }) else {
                Issue.record("\(name) was not acknowledged: \(String(describing: results.withLock { $0[name] }))")
                continue
            }
        }
        #expect(service.batchesStored.load(ordering: .relaxed) == 6)
        #expect(service.rejectedByStore.load(ordering: .relaxed) == 1)
        try await waitUntil { try journal.counts().entries == 0 }
        #expect(try journal.counts() == (entries: 0, setAside: 1))
        #expect(try await store.totals().batches == 6)
        #expect(try store.journalApplied() == 7)
    }

    /// The batch the last two runs died on is set aside with every copy of it journaled since (its agent sent it
    /// again because the acknowledgement did not reach it before the death), and refused when sent once more: before,
    /// the copy was applied after the set-aside and killed the daemon again (seen in `JournalFaultTests` under load).
    @Test func aBatchTheDaemonDiedOnTwiceIsSetAsideWithItsCopiesAndRefusedWhenSentAgain() async throws {
        let directory = directory()
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        let journal = try IngestJournal(path: "\(directory)/ingest-journal.db", after: 0)
        let poison = batch(agent: "host-2", order: 1_000)
        var batches = [batch(agent: "host-1", order: 1_000), poison, batch(agent: "host-3", order: 1_000), poison]
        for index in batches.indices { batches[index].receivedAt = WallClock.system.now() }
        #expect(try await journal.append(batches) == [1, 2, 3, 4])
        // The last run died applying entry 2, which had killed the run before it too.
        try ApplyMarker(path: journal.path + ".applying").applying(
            ApplyMarker.Mark(
                entry: 2, agent: ApplyMarker.hash("host-2"), stream: poison.stream, sequence: poison.sequence,
                deaths: 1))
        let queue = IngestQueue(limit: 64)
        let service = IngestService(store: store, journal: journal, queue: queue, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await waitUntil { try store.journalApplied() == 4 }
        #expect(try journal.counts() == (entries: 0, setAside: 2))
        #expect(try await store.totals().batches == 2)
        #expect(service.setAsideAfterDeaths.load(ordering: .relaxed) == 2)
        let resent = Mutex<Result<IngestOutcome, any Error>?>(nil)
        #expect(queue.offer(poison) { result in resent.withLock { $0 = result } })
        try await waitUntil { resent.withLock { $0 } != nil }
        let outcome = resent.withLock { $0 }
        guard case .failure(let error)? = outcome, case StoreError.invalidBatch = error else {
            Issue.record("the batch sent again was not refused: \(String(describing: outcome))")
            return
        }
        #expect(try await store.totals().batches == 2)
    }

    /// A graceful stop applies everything journaled before the service ends: the store then holds every
    /// acknowledged batch and the journal nothing (a backup of a stopped daemon's store is whole).
    @Test func aGracefulStopAppliesTheWholeJournal() async throws {
        let directory = directory()
        let store = try SQLiteStore(path: "\(directory)/netpulse.db")
        let journal = try IngestJournal(path: "\(directory)/netpulse-ingest-journal.db", after: 0)
        let queue = IngestQueue(limit: 4_096)
        let service = IngestService(store: store, journal: journal, queue: queue, logger: Logger(label: "test"))
        let acknowledged = Atomic<Int>(0)
        let count = 3_000
        func offer(_ range: Range<Int>) {
            for index in range {
                #expect(
                    queue.offer(batch(agent: "host-\(index)", order: 1_000)) { result in
                        if case .success = result { acknowledged.add(1, ordering: .relaxed) }
                    })
            }
        }
        offer(0..<1_500)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [.init(service: service)], logger: Logger(label: "test"))
        )
        let running = Task { try await group.run() }
        // A second wave once the first is acknowledged: journaled while the store applies the first, it waits to be
        // applied when the stop comes.
        try await waitUntil { acknowledged.load(ordering: .relaxed) == 1_500 }
        offer(1_500..<count)
        try await waitUntil { acknowledged.load(ordering: .relaxed) == count }
        let appliedAtStop = service.batchesStored.load(ordering: .relaxed)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(acknowledged.load(ordering: .relaxed) == count)
        #expect(service.batchesStored.load(ordering: .relaxed) == Int64(count), "applied \(appliedAtStop) at the stop")
        #expect(try await store.totals().batches == Int64(count))
        #expect(try journal.entries(after: try store.journalApplied(), limit: 10).entries.isEmpty)
        #expect(try store.journalApplied() == Int64(count))
    }

    /// What a daemon journaled (and so acknowledged) and did not apply before it was killed is applied when it
    /// starts again, and only that: entries the store had applied, whose removal from the journal the kill
    /// prevented, are not applied twice.
    @Test func whatAKilledDaemonJournaledIsAppliedAtTheNextStartAndOnlyThat() async throws {
        let directory = directory()
        let path = "\(directory)/netpulse.db"
        do {
            let store = try SQLiteStore(path: path)
            let journal = try IngestJournal(path: "\(directory)/ingest-journal.db", after: 0)
            var batches = (1...5).map { batch(agent: "host-\($0)", order: 1_000) }
            for index in batches.indices { batches[index].receivedAt = WallClock.system.now() }
            let ids = try await journal.append(batches)
            #expect(ids == [1, 2, 3, 4, 5])
            // Applied up to the second, then killed before the journal lost them.
            _ = try await store.ingest(Array(batches[..<2]), receivedAt: 0, journalThrough: ids[1])
        }
        let store = try SQLiteStore(path: path)
        let journal = try IngestJournal(path: "\(directory)/ingest-journal.db", after: try store.journalApplied())
        let service = IngestService(
            store: store, journal: journal, queue: IngestQueue(limit: 64), logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await waitUntil { service.batchesStored.load(ordering: .relaxed) == 3 }
        #expect(service.batchesStored.load(ordering: .relaxed) == 3)
        #expect(service.duplicates.load(ordering: .relaxed) == 0)
        #expect(try await store.totals().batches == 5)
        #expect(try store.journalApplied() == 5)
        #expect(try journal.counts() == (entries: 0, setAside: 0))
        // A journal removed by hand starts its ids after what the store applied, never again from 1.
        let fresh = try IngestJournal(path: "\(directory)/other-journal.db", after: try store.journalApplied())
        #expect(try await fresh.append([batch(agent: "host-9", order: 1)]) == [6])
    }
}
