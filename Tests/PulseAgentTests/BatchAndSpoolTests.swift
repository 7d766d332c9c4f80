import PulseCore
import Testing

@testable import PulseAgent

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp for one test.
func temporaryDirectory(_ name: String = #function) -> String {
    var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    return path
}

@Suite struct BatcherTests {
    let boot = BootID(high: 3, low: 4)

    func sample(_ name: String, ifindex: UInt32, rx: UInt64) -> InterfaceSample {
        var counters = CounterValues()
        counters[.rxBytes] = rx
        counters[.txPackets] = rx / 10
        return InterfaceSample(
            name: InterfaceName(name), epoch: CounterEpoch(bootID: boot, ifindex: ifindex, width: .bits64),
            counters: counters, linkState: LinkState(speedMbps: 1_000, operState: .up, carrier: true, mtu: 1_500))
    }

    @Test func batchesDecodeToTheSamplesThatWentIn() throws {
        var batcher = Batcher(stream: 5)
        batcher.add([(sample("eth0", ifindex: 2, rx: 100), 1_000), (sample("a<b&c", ifindex: 3, rx: 7), 1_000)])
        batcher.add([(sample("eth0", ifindex: 2, rx: 300), 2_000)])
        batcher.add([(sample("eth0", ifindex: 2, rx: 600), 3_000), (sample("a<b&c", ifindex: 3, rx: 9), 3_000)])
        let recordFlushed = batcher.flush(droppedBefore: 4, order: 1, interval: 1_000, heartbeat: 0)
        let record = try #require(recordFlushed)
        #expect(record.sequence == 1)
        let (describe, batch) = try Spool.decode(record.bytes)
        #expect(describe.interfaces.map(\.name) == ["eth0", "a<b&c"])
        #expect(batch.timestamps == [1_000, 2_000, 3_000])
        #expect(batch.droppedBefore == 4)
        #expect(batch.sections[0].ticks == [0, 1, 2])
        #expect(batch.sections[1].ticks == [0, 2])
        #expect((0..<3).map { batch.sections[0].sample($0)[.rxBytes] } == [100, 300, 600])
        #expect(batch.order == 1 && batch.interval == 1_000 && batch.heartbeat == 0)
        // Every batch carries each interface's link facts at its first sample, then only changes.
        #expect(batch.linkStates.map(\.tick) == [0, 0])
        batcher.add([(sample("eth0", ifindex: 2, rx: 700), 4_000)])
        batcher.add([(sample("eth0", ifindex: 2, rx: 800), 5_000)])
        let nextFlushed = batcher.flush(droppedBefore: 0, order: 9, interval: 1_000, heartbeat: 0)
        let next = try Spool.decode(try #require(nextFlushed).bytes)
        #expect(next.batch.linkStates.map(\.tick) == [0] && next.batch.linkStates[0].state.speedMbps == 1_000)
        let empty = batcher.flush(droppedBefore: 0, order: 2, interval: 1_000, heartbeat: 0)
        #expect(empty == nil)
    }

    @Test func descriptorIdsAreStableAndNewEpochsGetNewIds() throws {
        var batcher = Batcher(stream: 5)
        batcher.add([(sample("eth0", ifindex: 2, rx: 1), 1_000)])
        let firstFlushed = batcher.flush(droppedBefore: 0, order: 3, interval: 1_000, heartbeat: 0)
        let first = try #require(firstFlushed)
        batcher.add([(sample("eth0", ifindex: 2, rx: 2), 2_000)])
        let secondFlushed = batcher.flush(droppedBefore: 0, order: 4, interval: 1_000, heartbeat: 0)
        let second = try #require(secondFlushed)
        batcher.add([(sample("eth0", ifindex: 8, rx: 0), 3_000)])
        let thirdFlushed = batcher.flush(droppedBefore: 0, order: 5, interval: 1_000, heartbeat: 0)
        let third = try #require(thirdFlushed)
        #expect(first.describe.interfaces[0].id == second.describe.interfaces[0].id)
        #expect(third.describe.interfaces[0].id != first.describe.interfaces[0].id)
        #expect([first.sequence, second.sequence, third.sequence] == [1, 2, 3])
    }
}

extension BatcherTests {
    /// An interface re-created in the middle of a batch: both epochs' samples are kept, every link-state record
    /// refers to a described interface, and the old epoch is forgotten once no batch needs it.
    @Test func interfaceRecreatedMidBatchLosesNothing() throws {
        var batcher = Batcher(stream: 5)
        batcher.add([(sample("tun0", ifindex: 5, rx: 100), 1_000)])
        batcher.add([(sample("tun0", ifindex: 5, rx: 900), 2_000)])
        batcher.add([(sample("tun0", ifindex: 6, rx: 10), 3_000)])
        let firstFlushed = batcher.flush(droppedBefore: 0, order: 6, interval: 1_000, heartbeat: 0)
        let first = try #require(firstFlushed)
        let (describe, batch) = try Spool.decode(first.bytes)
        #expect(describe.interfaces.map(\.epoch.ifindex) == [5, 6])
        #expect(batch.sections.map(\.sampleCount) == [2, 1])
        let described = Set(describe.interfaces.map(\.id))
        #expect(!batch.linkStates.isEmpty && batch.linkStates.allSatisfy { described.contains($0.descriptorID) })

        batcher.add([(sample("tun0", ifindex: 6, rx: 20), 4_000)])
        let secondFlushed = batcher.flush(droppedBefore: 0, order: 7, interval: 1_000, heartbeat: 0)
        let second = try #require(secondFlushed)
        #expect(second.describe.interfaces.map(\.epoch.ifindex) == [6])
    }

    @Test func batchesStayWithinTheProtocolLimits() {
        var batcher = Batcher(stream: 1)
        let limits = WireLimits(maximumTicksPerBatch: 4, maximumSectionsPerBatch: 3)
        #expect(batcher.room(within: limits, maximumSamples: 100) == 3)
        batcher.add([(sample("a", ifindex: 1, rx: 1), 1_000), (sample("b", ifindex: 2, rx: 1), 1_000)])
        #expect(batcher.room(within: limits, maximumSamples: 100) == 1)
        #expect(batcher.room(within: limits, maximumSamples: 2) == 0)
        batcher.add([(sample("a", ifindex: 1, rx: 2), 2_000)])
        batcher.add([(sample("a", ifindex: 1, rx: 3), 3_000)])
        // A fourth tick could bring a fifth (an idle interface's quiet sample): no room.
        #expect(batcher.room(within: limits, maximumSamples: 100) == 0)
    }
}

@Suite struct SpoolTests {
    func record(_ sequence: UInt64, padding: Int = 0) -> SpoolRecord {
        var values = CounterValues()
        values.values[0] = UInt64(padding)
        let descriptor = InterfaceDescriptor(
            id: 0, name: InterfaceName(String(repeating: "x", count: 10)),
            epoch: CounterEpoch(bootID: BootID(high: 1, low: 1), ifindex: 1, width: .bits64))
        return SpoolRecord(
            stream: 1, sequence: sequence, describe: Describe(stream: 1, interfaces: [descriptor]),
            batch: WireBatch(
                stream: 1, sequence: sequence, order: 100 + sequence, timestamps: [Int64(sequence) * 1_000],
                sections: [BatchSection(descriptorID: 0, ticks: [0], values: values.values)]))
    }

    @Test func survivesReopenInOrderAndRemovesAcknowledged() throws {
        let directory = temporaryDirectory()
        var spool = try Spool(directory: directory, maximumBytes: 1 << 20)
        for sequence in 1...5 { try spool.append(record(UInt64(sequence))) }
        let removed = spool.remove(stream: 1, sequence: 2)
        let removedAgain = spool.remove(stream: 1, sequence: 2)
        #expect(removed && !removedAgain)
        let reopened = try Spool(directory: directory, maximumBytes: 1 << 20)
        #expect(reopened.entries.map(\.sequence) == [1, 3, 4, 5])
        #expect(try Spool.decode(try reopened.read(reopened.entries[0])).batch == record(1).batch)
        #expect(reopened.totalBytes == spool.totalBytes)
    }

    @Test func fullSpoolDropsTheOldestAndCountsThem() throws {
        let directory = temporaryDirectory()
        let size = record(1).bytes.count
        var spool = try Spool(directory: directory, maximumBytes: Int64(size * 3))
        var dropped = 0
        for sequence in 1...10 { dropped += try spool.append(record(UInt64(sequence))).dropped }
        #expect(dropped == 7)
        #expect(spool.entries.map(\.sequence) == [8, 9, 10])
        #expect(try FileIO.listDirectory(directory).count == 3)
    }

    @Test func interruptedWritesAreRemovedAndGarbageIsQuarantined() throws {
        let directory = temporaryDirectory()
        var spool = try Spool(directory: directory, maximumBytes: 1 << 20)
        try spool.append(record(1))
        try FileIO.writeAtomically("\(directory)/00000000000000000002.np2", [1, 2, 3])
        try FileIO.writeAtomically("\(directory)/00000000000000000003.np2.tmp-99", [1, 2, 3])
        try FileIO.writeAtomically(FileIO.temporaryPath(for: "\(directory)/00000000000000000004.np2"), [1, 2, 3])
        // Someone else's files in a state directory pointed at a shared place: not ours, never deleted.
        try FileIO.writeAtomically("\(directory)/backup.tmp-1", [1, 2, 3])
        try FileIO.writeAtomically("\(directory)/.notes.tmp-2", [1, 2, 3])
        let reopened = try Spool(directory: directory, maximumBytes: 1 << 20)
        #expect(reopened.entries.map(\.sequence) == [1])
        #expect(reopened.quarantined == ["00000000000000000002.np2"])
        #expect(FileIO.exists("\(directory)/corrupt/00000000000000000002.np2"))
        #expect(!FileIO.exists("\(directory)/00000000000000000003.np2.tmp-99"))
        #expect(!(try FileIO.listDirectory(directory)).contains { $0.hasPrefix(".00000000000000000004.np2.tmp-") })
        #expect(FileIO.exists("\(directory)/backup.tmp-1") && FileIO.exists("\(directory)/.notes.tmp-2"))
        // New entries continue after the highest ordinal seen, quarantined ones included, so replay order holds and
        // a quarantined file moved back never meets a newer one of its name.
        var next = reopened
        try next.append(record(9))
        #expect(next.entries.last!.ordinal == 3)
    }
}

extension SpoolTests {
    /// A batch the daemon refuses for good leaves the queue for `rejected/`, unchanged and with its reason, and can be
    /// sent again: moved back, it is replayed first. New batches never take its name.
    @Test func aRejectedBatchIsSetAsideKeptAndReplayable() throws {
        let directory = temporaryDirectory()
        var spool = try Spool(directory: directory, maximumBytes: 1 << 20)
        for sequence in 1...3 { try spool.append(record(UInt64(sequence))) }
        let path = try spool.setAside(stream: 1, sequence: 3, reason: "invalid-batch (11): order too high")
        #expect(path == "\(directory)/rejected/00000000000000000003.np2")
        #expect(try spool.setAside(stream: 1, sequence: 3, reason: "again") == nil)
        #expect(spool.entries.map(\.sequence) == [1, 2])
        #expect(try Spool.decode(try FileIO.readBytes(path!)).batch == record(3).batch)
        #expect(try FileIO.readString("\(directory)/rejected/00000000000000000003.txt").contains("order too high"))

        // Reopened, the spool does not index rejected batches and never reuses their ordinals.
        var reopened = try Spool(directory: directory, maximumBytes: 1 << 20)
        #expect(reopened.entries.map(\.sequence) == [1, 2])
        try reopened.append(record(4))
        #expect(reopened.entries.last!.ordinal == 4)

        // An operator moves it back: it is replayed before the batches made after it.
        #expect(rename(path!, "\(directory)/00000000000000000003.np2") == 0)
        let replayed = try Spool(directory: directory, maximumBytes: 1 << 20)
        #expect(replayed.entries.map(\.sequence) == [1, 2, 3, 4])
    }

    @Test func rejectedBatchesAreHeldToTheSpoolsBound() throws {
        let directory = temporaryDirectory()
        let size = record(1).bytes.count
        var spool = try Spool(directory: directory, maximumBytes: Int64(size * 2))
        for sequence in 1...5 {
            try spool.append(record(UInt64(sequence)))
            _ = try spool.setAside(stream: 1, sequence: UInt64(sequence), reason: "refused")
        }
        let kept = try FileIO.listDirectory(spool.rejectedDirectory).sorted()
        #expect(
            kept == [
                "00000000000000000004.np2", "00000000000000000004.txt", "00000000000000000005.np2",
                "00000000000000000005.txt",
            ])
    }
}

@Suite struct AgentConfigTests {
    @Test func defaultsAndExampleFile() throws {
        let config = try AgentConfig.parse(ConfigDocument(text: "[agent]\nid = \"web-01\"\n", file: "a.toml"))
        #expect(config.sampleInterval == 1_000)
        #expect(config.batchInterval == 10_000)
        #expect(config.filter == .standard)
        #expect(config.endpoints == [Endpoint(host: "127.0.0.1", port: 7420)])
        let example = try AgentConfig.load(path: "\(repositoryRoot)/config/agent.toml")
        #expect(example.uploadBudget == 256 << 10)
    }

    @Test func errorsNameFileLineAndKey() {
        #expect(
            throws: ConfigError(
                file: "a.toml", line: 3, key: "daemon.endpoints",
                "has \"nowhere\", which is not host:port (for IPv6: [::1]:7420)")
        ) {
            try AgentConfig.parse(
                ConfigDocument(text: "[agent]\n[daemon]\nendpoints = [\"nowhere\"]\n", file: "a.toml"))
        }
        #expect(
            throws: ConfigError(
                file: "a.toml", line: 2, key: "daemon.server_name",
                "is an IP address; TLS name verification needs the DNS name in the daemon's certificate (netpulse ca issue --daemon NAME)"
            )
        ) {
            try AgentConfig.parse(ConfigDocument(text: "[daemon]\nserver_name = \"127.0.0.1\"\n", file: "a.toml"))
        }
        #expect(
            throws: ConfigError(
                file: "a.toml", line: 2, key: "sampling.interval", "is 10ms; it must be between 100ms and 1h")
        ) {
            try AgentConfig.parse(ConfigDocument(text: "[sampling]\ninterval = \"10ms\"\n", file: "a.toml"))
        }
    }
}

let repositoryRoot: String = {
    var path = #filePath
    for _ in 0..<3 { path = FileIO.parentDirectory(path) }
    return path
}()

/// A spool written by a Netpulse 0.1 agent (a fixture: four `.npb` batches) is converted when a 0.2 agent opens
/// it: the same streams and sequences, orders before any new batch, the configured interval and heartbeat.
@Suite struct LegacySpoolTests {
    @Test func aVersion1SpoolIsConvertedInPlace() throws {
        let fixture = FileIO.parentDirectory(#filePath) + "/Fixtures/spool-0.1"
        let directory = temporaryDirectory()
        var originals = [(stream: UInt64, sequence: UInt64)]()
        for name in try FileIO.listDirectory(fixture).sorted() {
            let bytes = try FileIO.readBytes("\(fixture)/\(name)")
            try FileIO.writeAtomically("\(directory)/\(name)", bytes)
            let batch = try Spool.decode(bytes, version: 1).batch
            originals.append((batch.stream, batch.sequence))
        }
        var orders = try OrderClock(path: directory + "/order")
        let spool = try Spool(
            directory: directory, maximumBytes: 1 << 20,
            legacy: Spool.LegacyConversion(
                interval: 1_000, heartbeat: 60_000, nextOrder: { try orders.next(now: 1_900_000_000_000) }))
        #expect(spool.entries.count == 4 && spool.quarantined.isEmpty)
        #expect(try FileIO.listDirectory(directory).filter { $0.hasSuffix(".npb") }.isEmpty)
        var previousOrder: UInt64 = 0
        for (entry, original) in zip(spool.entries, originals) {
            let batch = try Spool.decode(try spool.read(entry)).batch
            #expect(batch.stream == original.stream && batch.sequence == original.sequence)
            #expect(batch.order > previousOrder && batch.interval == 1_000 && batch.heartbeat == 60_000)
            previousOrder = batch.order
        }
        // New batches come after the converted ones, also after a restart.
        let next = try orders.next(now: 1_000)
        #expect(next > previousOrder)
        var reopened = try OrderClock(path: directory + "/order")
        #expect(try reopened.next(now: 1_000) > next)
    }
}

@Suite struct OrderClockTests {
    /// Orders are reserved an hour ahead at start; once half of that is used, a renewal is due, to be written off the
    /// sampling path; taken in time, the clock never writes on `next`, and a restart still starts after every order
    /// handed out.
    @Test func reservationsAreRenewedBeforeTheyRunOut() throws {
        let path = temporaryDirectory() + "/order"
        let start: Int64 = 1_900_000_000_000
        var orders = try OrderClock(path: path)
        try orders.reserve(now: start)
        #expect(orders.renewalDue == nil)
        _ = try orders.next(now: start + 20 * 60_000)
        #expect(orders.renewalDue == nil)
        _ = try orders.next(now: start + 31 * 60_000)
        let renewal = try #require(orders.renewalDue)
        try renewal.perform()
        orders.renewed(renewal)
        #expect(orders.renewalDue == nil)
        // Past the first reservation: no write is needed (the file still holds the renewal).
        let late = try orders.next(now: start + 70 * 60_000)
        #expect(try FileIO.readString(path) == "\(renewal.value)\n")
        var reopened = try OrderClock(path: path)
        #expect(try reopened.next(now: start) > late)
    }
}
