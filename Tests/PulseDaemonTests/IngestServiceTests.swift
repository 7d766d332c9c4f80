import Logging
import PulseCore
import PulseStore
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
            timestamps: [WallClock.milliseconds() - 5_000],
            sections: [BatchSection(descriptorID: 1, ticks: [0], values: counters.values)])
        return IngestBatch(
            agent: AgentIdentity(name: agent, hostname: agent, version: "test"), batch: wire, descriptors: [descriptor])
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
