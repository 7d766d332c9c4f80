#if canImport(Glibc)
import Glibc
#endif
import PulseCore
import Synchronization
import Testing
import Logging

@testable import PulseDaemon

func temporaryDirectory() -> String {
    var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}

/// Submits items in order (as one connection would) and waits for all their completions.
/// Submitting from one task keeps the order deterministic; the writer may still commit them
/// together in one group.
func ingest(_ writer: IngestWriter, _ items: [(AgentIdentity, WireBatch, [InterfaceDescriptor])]) async -> [Result<IngestOutcome, any Error>] {
    final class Collector: Sendable {
        let results = Mutex<[Int: Result<IngestOutcome, any Error>]>([:])
    }
    // The continuation resumes on the last completion; with nothing to submit there would be none.
    guard !items.isEmpty else { return [] }
    let collector = Collector()
    return await withCheckedContinuation { continuation in
        for (index, item) in items.enumerated() {
            writer.submit(IngestItem(agent: item.0, batch: item.1, descriptors: item.2) { result in
                let finished: [Result<IngestOutcome, any Error>]? = collector.results.withLock { results in
                    results[index] = result
                    guard results.count == items.count else { return nil }
                    return results.sorted { $0.key < $1.key }.map(\.value)
                }
                if let finished { continuation.resume(returning: finished) }
            })
        }
    }
}

@Suite struct StoreTests {
    let agent = AgentIdentity(name: "web-01", hostname: "web-01", version: "0.1.0")
    let boot = BootID(high: 10, low: 20)

    func descriptor(_ id: UInt32, _ name: String, ifindex: UInt32 = 2) -> InterfaceDescriptor {
        InterfaceDescriptor(id: id, name: InterfaceName(name), epoch: CounterEpoch(bootID: boot, ifindex: ifindex, width: .bits64))
    }

    func batch(_ sequence: UInt64, start: Int64, rx: [UInt64]) -> WireBatch {
        let values = rx.flatMap { value -> [UInt64] in
            var counters = CounterValues()
            counters[.rxBytes] = value
            counters[.txBytes] = value / 2
            return counters.values
        }
        return WireBatch(
            stream: 99, sequence: sequence, timestamps: rx.indices.map { start + Int64($0) * 1_000 },
            sections: [BatchSection(descriptorID: 1, ticks: Array(rx.indices), values: values)],
            linkStates: [LinkStateRecord(descriptorID: 1, tick: 0, state: LinkState(speedMbps: 1_000, operState: .up, carrier: true, mtu: 1_500))])
    }

    @Test func storesOnceAndReadsBackExactly() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try Store(path: path)
        let writer = IngestWriter(store: store, logger: Logger(label: "test"))
        let first = batch(1, start: 10_000, rx: [100, 200, 400])
        let second = batch(2, start: 13_000, rx: [700, 1_000])
        let results = await ingest(writer, [(agent, first, [descriptor(1, "a<b&c")]), (agent, second, [descriptor(1, "a<b&c")]), (agent, first, [descriptor(1, "a<b&c")])])
        #expect(results.map { try? $0.get() } == [.stored, .stored, .duplicate])
        writer.drainAndStop()

        // A fresh process (read-only, like `netpulse`) sees exactly what was acknowledged.
        let reader = try Store(path: path, readOnly: true)
        let samples = try reader.samples(agent: "web-01", interface: "a<b&c")
        #expect(samples.map(\.timestamp) == [10_000, 11_000, 12_000, 13_000, 14_000])
        #expect(samples.map { $0.counters[.rxBytes] } == [100, 200, 400, 700, 1_000])
        let summary = try #require(try reader.interfaceSummaries().first)
        #expect(summary.rxBytesTotal == 900)
        #expect(summary.txBytesTotal == 450)
        #expect(summary.rxBytesPerSecond == 300)
        #expect(summary.interface == "a<b&c")
    }

    @Test func newEpochCountsFromZero() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try Store(path: path)
        let writer = IngestWriter(store: store, logger: Logger(label: "test"))
        _ = await ingest(writer, [
            (agent, batch(1, start: 0, rx: [1_000, 5_000]), [descriptor(1, "eth0", ifindex: 2)]),
            // The interface was re-created (new ifindex): its counters restarted and already counted 300.
            (agent, batch(2, start: 2_000, rx: [300, 800]), [descriptor(1, "eth0", ifindex: 5)]),
        ])
        writer.drainAndStop()
        let summary = try #require(try store.interfaceSummaries().first)
        #expect(summary.rxBytesTotal == 4_000 + 300 + 500)
        #expect(summary.sampleCount == 4)
    }

    @Test func chunksRoundTripAndRejectDamage() throws {
        let timestamps: [Int64] = [1_000, 2_000, 3_005]
        let values = (0..<48).map { UInt64($0 * 1_000) }
        let chunk = SeriesChunk.encode(timestamps: timestamps, values: values)
        let decoded = try SeriesChunk.decode(chunk)
        #expect(decoded.timestamps == timestamps && decoded.values == values)
        #expect(throws: WireError.self) { try SeriesChunk.decode(Array(chunk.dropLast())) }
        #expect(throws: WireError.self) { try SeriesChunk.decode(chunk + [0]) }
    }

    @Test func retentionDeletesOldChunks() async throws {
        let store = try Store(path: temporaryDirectory() + "/netpulse.db")
        let writer = IngestWriter(store: store, logger: Logger(label: "test"))
        _ = await ingest(writer, [(agent, batch(1, start: 1_000, rx: [1, 2]), [descriptor(1, "eth0")]), (agent, batch(2, start: 100_000, rx: [3, 4]), [descriptor(1, "eth0")])])
        writer.drainAndStop()
        // In slices of one row, to cover the loop: the batch records go too (received long before the cutoff).
        #expect(try store.deleteRaw(olderThan: 50_000, slice: 1) == 1)
        #expect(try store.storedValueCount() > 0)
        #expect(try store.samples(agent: "web-01", interface: "eth0").map(\.timestamp) == [100_000, 101_000])
        #expect(try store.deleteRaw(olderThan: WallClock.milliseconds() + 60_000, slice: 1) == 1)
        #expect(try store.storedValueCount() == 0)
    }
}

@Suite struct DaemonConfigTests {
    @Test func exampleFileLoadsAndErrorsNameTheLine() throws {
        var root = #filePath
        for _ in 0..<3 { root = FileIO.parentDirectory(root) }
        let config = try DaemonConfig.load(path: "\(root)/config/netpulsed.toml")
        #expect(config.listen == Endpoint(host: "0.0.0.0", port: 7420))
        #expect(config.storePath == "/var/lib/netpulsed/netpulse.db")
        #expect(throws: ConfigError(file: "d.toml", line: 2, key: "store.synchronous", "is \"sometimes\"; use \"full\" or \"normal\"")) {
            try DaemonConfig.parse(ConfigDocument(text: "[store]\nsynchronous = \"sometimes\"\n", file: "d.toml"))
        }
        #expect(throws: ConfigError(file: "d.toml", line: 2, key: "listen.adress", "is not a known setting of [listen]; known: address, handshake_timeout, idle_timeout, max_connections")) {
            try DaemonConfig.parse(ConfigDocument(text: "[listen]\nadress = \"x\"\n", file: "d.toml"))
        }
    }
}
