import Foundation
import PulseAnalytics
import PulseCore
import TestSupport
import Testing

@testable import PulseStore
@testable import PulseStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

func temporaryDirectory() -> String {
    var template = Array("/tmp/netpulse-test-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}

/// Builds batches the way an agent does: one interface per section, cumulative counters, an order per batch.
struct BatchMaker {
    var agent = AgentIdentity(name: "web-01", hostname: "web-01", version: "0.2.0")
    var stream: UInt64 = 99
    var boot = BootID(high: 10, low: 20)
    var interval: UInt64 = 1_000
    var heartbeat: UInt64 = 0

    func descriptor(_ id: UInt32, _ name: String, ifindex: UInt32 = 2, width: CounterWidth = .bits64)
        -> InterfaceDescriptor
    {
        InterfaceDescriptor(
            id: id, name: InterfaceName(name), epoch: CounterEpoch(bootID: boot, ifindex: ifindex, width: width))
    }

    /// One interface's batch: `rx` values at one-second ticks from `start`; tx is half of rx.
    func batch(
        _ sequence: UInt64, order: UInt64? = nil, start: Int64, rx: [UInt64], interface: String = "eth0",
        ifindex: UInt32 = 2, speed: UInt32? = 1_000, kind: InterfaceKind = .physical
    ) -> IngestBatch {
        let values = rx.flatMap { value -> [UInt64] in
            var counters = CounterValues()
            counters[.rxBytes] = value
            counters[.txBytes] = value / 2
            counters[.rxPackets] = value / 100
            return counters.values
        }
        let wire = WireBatch(
            stream: stream, sequence: sequence, order: order ?? sequence, interval: interval, heartbeat: heartbeat,
            timestamps: rx.indices.map { start + Int64($0) * 1_000 },
            sections: [BatchSection(descriptorID: 1, ticks: Array(rx.indices), values: values)],
            linkStates: [
                LinkStateRecord(
                    descriptorID: 1, tick: 0,
                    state: LinkState(speedMbps: speed, operState: .up, carrier: true, mtu: 1_500, kind: kind))
            ])
        return IngestBatch(agent: agent, batch: wire, descriptors: [descriptor(1, interface, ifindex: ifindex)])
    }
}

@Suite struct StoreTests {
    let maker = BatchMaker()
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    func interface(_ store: SQLiteStore, _ name: String = "eth0") async throws -> SeriesRecord {
        try #require(try await store.series().first { $0.kind == .interface && $0.interface == InterfaceName(name) })
    }

    /// The writer reuses a step's scopes for the next step when `sameGroups` says no membership began or ended
    /// between them: that must never hide a change of groups.
    @Test func sameGroupsNeverHidesAChangeOfGroups() {
        var random = SystemRandomNumberGenerator()
        let groups = ["site=a", "site=b", "role=db"].map { GroupKey(parsing: $0)! }
        for _ in 0..<2_000 {
            let memberships = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                let from = Int64.random(in: 0...100, using: &random)
                return Membership(
                    agent: "a", group: groups.randomElement(using: &random)!, from: from,
                    to: Bool.random(using: &random) ? from + Int64.random(in: 1...50, using: &random) : nil)
            }
            let first = Int64.random(in: -10...160, using: &random)
            let second = Int64.random(in: -10...160, using: &random)
            if AgentDirectory.sameGroups(memberships, at: first, second) {
                #expect(
                    AgentDirectory.groups(of: memberships, at: first)
                        == AgentDirectory.groups(of: memberships, at: second),
                    "\(memberships) at \(first) and \(second)")
            }
        }
        // Within one membership's span the groups are the same; across its end they are not.
        let one = [Membership(agent: "a", group: groups[0], from: 10, to: 20)]
        #expect(AgentDirectory.sameGroups(one, at: 11, 19))
        #expect(!AgentDirectory.sameGroups(one, at: 19, 20))
    }

    /// A move read from the configuration (a reload or a start, `relabel`): the known agent moves at that time,
    /// an agent never seen is left alone; a batch received before the move with the old labels (one that waited in
    /// the ingest journal) moves nothing back, and the connection's next batch, with the new labels, changes
    /// nothing (docs/windows.md, "Scopes"). Run on PostgreSQL too (PostgresStoreTests).
    static func movesFromTheConfiguration(_ store: any MetricStore, day: Int64) async throws {
        var maker = BatchMaker()
        maker.agent.labels = Labels([("customer", "acme")])
        _ = try await store.ingest([maker.batch(1, start: day, rx: [0, 1_000, 2_000])], receivedAt: day + 3_000)
        let moved = try await store.relabel(
            ["web-01": Labels([("customer", "globex")]), "never-seen": Labels([("customer", "globex")])],
            at: day + 60_000)
        #expect(moved == ["web-01"])
        var waited = maker.batch(2, start: day + 3_000, rx: [3_000, 4_000])
        waited.receivedAt = day + 30_000
        _ = try await store.ingest([waited], receivedAt: day + 61_000)
        var renewed = maker
        renewed.agent.labels = Labels([("customer", "globex")])
        _ = try await store.ingest(
            [renewed.batch(3, start: day + 62_000, rx: [70_000, 71_000])], receivedAt: day + 63_000)
        #expect(try await store.relabel(["web-01": Labels([("customer", "globex")])], at: day + 64_000).isEmpty)
        let history = try await store.memberships().sorted { $0.from < $1.from }.map {
            "\($0.agent) \($0.group.key)=\($0.group.value) \($0.from - day) \($0.to.map { "\($0 - day)" } ?? "-")"
        }
        #expect(history == ["web-01 customer=acme 3000 60000", "web-01 customer=globex 60000 -"])
        #expect(try await store.agents().map(\.name) == ["web-01"])
    }

    @Test func aMoveFromTheConfigurationHolds() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        try await Self.movesFromTheConfiguration(store, day: day)
    }

    @Test func storesOnceAndReadsBackExactly() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let first = maker.batch(1, start: day + 10_000, rx: [100, 200, 400])
        let second = maker.batch(2, start: day + 13_000, rx: [700, 1_000])
        #expect(
            try await store.ingest([first, second, first], receivedAt: day + 20_000) == [.stored, .stored, .duplicate])
        #expect(try await store.ingest([second], receivedAt: day + 21_000) == [.duplicate])

        // A fresh reader (read-only, like `netpulse`) sees exactly what was acknowledged.
        let reader = try SQLiteStore(path: path, readOnly: true)
        let eth0 = try await interface(reader)
        let samples = try await reader.samples(series: eth0.id, from: 0, to: .max)
        #expect(samples.map(\.timestamp) == [10_000, 11_000, 12_000, 13_000, 14_000].map { day + $0 })
        #expect(samples.map { $0.counters[.rxBytes] } == [100, 200, 400, 700, 1_000])
        // Rollups: every step counted once; 4 s measured.
        for level in RollupLevel.standard {
            let sums = try await reader.sums(level: level, series: [eth0.id], from: 0, to: .max)[eth0.id]
            #expect(sums?.traffic[.rxBytes] == 900 && sums?.traffic[.txBytes] == 450, "\(level)")
            #expect(sums?.measuredMilliseconds == 4_000 && sums?.interpolatedMilliseconds == 0)
            #expect(sums?.peakRx == 300 && sums?.speedMbps == 1_000)
        }
        // The counted interface is in its host's and the fleet's totals.
        let series = try await reader.series()
        let host = try #require(series.first { $0.kind == .host })
        let fleet = try #require(series.first { $0.kind == .fleet })
        let scopes = try await reader.sums(level: .oneHour, series: [host.id, fleet.id], from: 0, to: .max)
        #expect(scopes[host.id]?.traffic[.rxBytes] == 900 && scopes[fleet.id]?.traffic[.rxBytes] == 900)
        #expect(try await reader.totals().batches == 2)
        #expect(eth0.facts?.kind == .physical && eth0.facts?.speedMbps == 1_000)
    }

    @Test func aNewEpochCountsFromItsFirstCounter() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        _ = try await store.ingest(
            [
                maker.batch(1, start: day, rx: [1_000, 5_000]),
                // The interface was re-created (new ifindex): its counters restarted and already counted 300.
                maker.batch(2, start: day + 2_000, rx: [300, 800], ifindex: 5),
            ], receivedAt: day + 5_000)
        let eth0 = try await interface(store)
        let sums = try await store.sums(level: .oneMinute, series: [eth0.id], from: 0, to: .max)[eth0.id]
        #expect(sums?.traffic[.rxBytes] == Int64(4_000 + 300 + 500))
        #expect(sums?.count(of: .epoch) == 1)
    }

    /// An outage's bytes are spread over it, and when the spool delivers the samples in between, the rollups are
    /// exactly what they would have been had everything arrived in order.
    @Test func lateDataReplacesTheSpreadAndBumpsTheRevision() async throws {
        let ordered = try SQLiteStore(path: temporaryDirectory() + "/a.db")
        let late = try SQLiteStore(path: temporaryDirectory() + "/b.db")
        var batches = [IngestBatch]()
        for index in 0..<12 {
            let rx: [UInt64] = (0..<60).map { tick in
                let t = UInt64(index * 60 + tick)
                return t * 1_000 + t * t
            }
            batches.append(maker.batch(UInt64(index + 1), start: day + Int64(index) * 60_000, rx: rx))
        }
        for batch in batches { _ = try await ordered.ingest([batch], receivedAt: day + 3_600_000) }
        // First and last arrive; the ten between come later, shuffled.
        _ = try await late.ingest([batches[0], batches[11]], receivedAt: day + 1_000_000)
        let eth0 = try await interface(late)
        let spread = try await late.buckets(level: .fiveMinutes, series: [eth0.id], from: 0, to: .max)[eth0.id] ?? []
        #expect(spread.contains { $0.values.interpolatedMilliseconds > 0 })
        let revisionBefore = spread.map(\.revision).max() ?? 0
        var generator = SplitMix64(seed: 7)
        for batch in batches[1..<11].shuffled(using: &generator) {
            _ = try await late.ingest([batch], receivedAt: day + 2_000_000)
        }
        for level in RollupLevel.standard {
            let a = try await ordered.buckets(
                level: level, series: [try await interface(ordered).id], from: 0, to: .max)
            let b = try await late.buckets(level: level, series: [eth0.id], from: 0, to: .max)
            #expect(a.values.first?.map(\.values) == b.values.first?.map(\.values), "\(level)")
        }
        let after = try await late.buckets(level: .fiveMinutes, series: [eth0.id], from: 0, to: .max)[eth0.id] ?? []
        #expect(after.allSatisfy { $0.values.interpolatedMilliseconds == 0 })
        #expect((after.map(\.revision).max() ?? 0) > revisionBefore)
        #expect(try await late.anomalies(since: 0).filter { $0.kind == "already-counted" }.isEmpty)
    }

    /// A host without a real-time clock samples in 1970, then boots again with its clock set: the step into the new
    /// epoch starts at the epoch's start, a gap of 40 s. Billing is told of the 5-minute intervals that gap covers,
    /// from the epoch's start, not from the 1970 sample before it: 56 years of intervals were five million rows in
    /// one commit (found by a random fleet of the oracle that kept bills).
    @Test func aGapIntoANewEpochMarksOnlyItsOwnIntervalsForBilling() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        try await store.markBillIntervals(before: day + 3_600_000)
        var booted = maker
        _ = try await store.ingest([booted.batch(1, start: 1_000, rx: [0, 1_000])], receivedAt: day)
        booted.boot = BootID(high: 11, low: 21)
        var batch = booted.batch(2, start: day, rx: [5_000_000, 5_001_000])
        batch.sections[0].descriptor.began = day - 40_000
        _ = try await store.ingest([batch], receivedAt: day + 2_000)
        let changes = try await store.withBillSnapshot { try await $0.changedIntervals(limit: 10_000) }
        #expect(!changes.isEmpty && changes.allSatisfy { $0.start >= day - 300_000 }, "\(changes.count) intervals")
    }

    /// Billing learns what changed in an interval it took in, as bytes added since: what a pass read is taken
    /// off the record when the pass is saved, so a change committed while the pass ran is left for the next one.
    @Test func changesToBilledIntervalsAreRecordedAndSettledAsRead() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        let received = day + 3_600_000
        func rx(_ first: Int) -> [UInt64] { (first..<first + 10).map { UInt64($0) * 1_000 } }
        _ = try await store.ingest([maker.batch(1, start: day, rx: rx(0))], receivedAt: received)
        // Billing has taken in the first two 5-minute intervals.
        try await store.markBillIntervals(before: day + 600_000)
        func interfaceChanges() async throws -> [ChangedInterval] {
            let id = try await interface(store).id
            return try await store.withBillSnapshot { try await $0.changedIntervals(limit: 100) }.filter {
                $0.series == id
            }
        }
        #expect(try await interfaceChanges().isEmpty)

        _ = try await store.ingest([maker.batch(2, start: day + 10_000, rx: rx(10))], receivedAt: received)
        let first = try #require(try await interfaceChanges().first)
        #expect(first.start == day && first.unknown == 0)
        #expect(first.since.rx == 10_000 && first.since.tx == 5_000 && first.since.covered == 10_000)
        #expect(first.before == IntervalFigures(rx: 9_000, tx: 4_500, covered: 9_000, measured: 9_000))

        // A change committed after the pass read the record, then the pass is saved.
        _ = try await store.ingest([maker.batch(3, start: day + 20_000, rx: rx(20))], receivedAt: received)
        let all = try await store.withBillSnapshot { try await $0.changedIntervals(limit: 100) }
        try await store.saveBills(
            BillUpdate(bills: [], adjustments: [], cursor: day + 600_000, settled: [first]))
        let second = try #require(try await interfaceChanges().first)
        #expect(
            second.since == IntervalFigures(rx: 10_000, tx: 5_000, covered: 10_000, measured: 10_000),
            "only the later change")
        #expect(second.before == first.now && second.revision > first.revision)

        // Settling what was read last leaves nothing; the host and fleet intervals went the same way.
        try await store.saveBills(BillUpdate(bills: [], adjustments: [], cursor: day + 600_000, settled: all))
        #expect(try await store.withBillSnapshot { try await $0.changedIntervals(limit: 100) }.isEmpty)

        // Data in an interval not yet taken in is no change for billing.
        _ = try await store.ingest([maker.batch(4, start: day + 600_000, rx: rx(600))], receivedAt: received)
        #expect(try await interfaceChanges().allSatisfy { $0.start < day + 600_000 })
    }

    @Test func aClockAheadIsMovedBackAndFlagged() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        // The agent's clock runs an hour ahead of the daemon's.
        _ = try await store.ingest(
            [maker.batch(1, start: day + 3_600_000, rx: [0, 1_000, 2_000])], receivedAt: day + 2_500)
        let eth0 = try await interface(store)
        let samples = try await store.samples(series: eth0.id, from: 0, to: .max)
        #expect(samples.map(\.timestamp) == [day + 500, day + 1_500, day + 2_500])
        let sums = try await store.sums(level: .oneMinute, series: [eth0.id], from: 0, to: .max)[eth0.id]
        #expect(sums?.traffic[.rxBytes] == 2_000 && sums?.count(of: .clock) == 2)
        #expect(try await store.anomalies(since: 0).contains { $0.kind == "clock-ahead" })
    }

    @Test func retentionDeletesOldDataInSlices() async throws {
        let store = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
        _ = try await store.ingest(
            [maker.batch(1, start: day, rx: [1, 2]), maker.batch(2, start: day + 10 * 86_400_000, rx: [3, 4])],
            receivedAt: day + 10 * 86_400_000)
        let eth0 = try await interface(store)
        let report = try await store.prune(.standard, now: day + 10 * 86_400_000 + 1_000, slice: 1)
        #expect(report.rawChunks == 1)
        #expect(try await store.samples(series: eth0.id, from: 0, to: .max).count == 2)
        // A month later the minute buckets of the first day are gone; the hourly ones stay (the ten days between
        // the batches are a gap, spread over every hour).
        _ = try await store.prune(.standard, now: day + 35 * 86_400_000, slice: 1)
        #expect(
            try await store.buckets(level: .oneMinute, series: [eth0.id], from: 0, to: day + 86_400_000)[eth0.id] == nil
        )
        #expect(
            try await store.buckets(level: .oneHour, series: [eth0.id], from: 0, to: day + 86_400_000)[eth0.id]?.count
                == 24)
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

    @Test func aReaderOfAMissingStoreIsToldWhatToDo() {
        #expect(throws: StoreError.self) { try SQLiteStore(path: temporaryDirectory() + "/none.db", readOnly: true) }
    }
}

/// Stores written by older releases open and are migrated. A store written by Netpulse 0.1 (a fixture made by the 0.1 daemon and agent: 11 samples of `lo`, and the
/// agent's spool of 4 batches it had not delivered) opens, is migrated and backfilled, deduplicates what 0.1
/// stored, and counts the spool's batches on after it, exactly.
@Suite struct UpgradeTests {
    static let fixtures = FileIO.parentDirectory(#filePath) + "/Fixtures"
    static let spool = FileIO.parentDirectory(FileIO.parentDirectory(#filePath)) + "/PulseAgentTests/Fixtures/spool-0.1"

    /// What `netpulse rates --format csv` of 0.1 printed for this store: rx and tx counted 86,193 bytes.
    static let countedBy01: Int64 = 86_193

    @Test func aVersion1StoreIsMigratedAndBackfilled() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        try FileIO.writeAtomically(path, try FileIO.readBytes(Self.fixtures + "/netpulse-0.1.db"))
        let store = try SQLiteStore(path: path)
        let lo = try #require(try await store.series().first { $0.kind == .interface && $0.interface == "lo" })
        #expect(lo.agent == "old-agent")
        // It never billed: the daemon takes the system's zone and records it.
        #expect(try await store.recordedTimeZone() == nil)
        let samples = try await store.samples(series: lo.id, from: 0, to: .max)
        #expect(samples.count == 11)
        for level in RollupLevel.standard {
            let sums = try await store.sums(level: level, series: [lo.id], from: 0, to: .max)[lo.id]
            #expect(sums?.traffic[.rxBytes] == Self.countedBy01 && sums?.traffic[.txBytes] == Self.countedBy01)
        }
        // Reopening does not backfill again.
        let reopened = try SQLiteStore(path: path)
        let again = try await reopened.sums(level: .oneHour, series: [lo.id], from: 0, to: .max)[lo.id]
        #expect(again?.traffic[.rxBytes] == Self.countedBy01)
        // And a 0.2 reader can read it.
        _ = try SQLiteStore(path: path, readOnly: true)

        // The 0.1 agent's spool, as a 0.2 agent converts it: same streams and sequences, new orders.
        let names = try FileIO.listDirectory(Self.spool).filter { $0.hasSuffix(".npb") }.sorted()
        var batches = [IngestBatch]()
        var lastCounter: UInt64 = 0
        for (index, name) in names.enumerated() {
            let frames = try WireCodec.frames(in: try FileIO.readBytes("\(Self.spool)/\(name)"))
            guard case .describe(let describe) = try WireCodec.decode(frames[0], version: 1),
                case .batch(var batch) = try WireCodec.decode(frames[1], version: 1)
            else { throw StoreError.damaged("fixture") }
            batch.order = 1_900_000_000_000 + UInt64(index)
            batch.interval = 1_000
            let descriptors = batch.sections.map { section in
                describe.interfaces.first { $0.id == section.descriptorID }!
            }
            lastCounter = batch.sections[0].sample(batch.sections[0].sampleCount - 1)[.rxBytes]
            batches.append(
                IngestBatch(
                    agent: AgentIdentity(name: "old-agent", hostname: "vm", version: "0.2.0"), batch: batch,
                    descriptors: descriptors))
        }
        let firstCounter = samples[0].counters[.rxBytes]
        // Received a minute after the spool's last sample, as a replay is: within max_age, so placed.
        let received = batches.map(\.lastTimestamp).max()! + 60_000
        #expect(try await store.ingest(batches, receivedAt: received) == Array(repeating: .stored, count: 4))
        let total = try await store.sums(level: .oneDay, series: [lo.id], from: 0, to: .max)[lo.id]
        #expect(total?.traffic[.rxBytes] == Int64(lastCounter - firstCounter))

        // A batch 0.1 stored and acknowledged is still recognised: sequence 1 of the spool's stream.
        var replayed = batches[0]
        replayed.sequence = 1
        #expect(try await store.ingest([replayed], receivedAt: 1_900_000_000_000) == [.duplicate])
    }

    /// What the 0.2.0 fixture generator read back through 0.2.0's own API (`Fixtures/netpulse-0.2.json`).
    struct Expected02: Decodable {
        struct Series: Decodable { var id: Int64, kind: String, name: String }
        struct Tracker: Decodable { var capacity: Int, count: Int, encodedHex: String }
        struct StoredBill: Decodable {
            var series: Int64, periodFrom: Int64, periodTo: Int64, method: String, intervals: Int, missing: Int
            var inbound: Int64?, outbound: Int64?, sum: Int64?, revision: Int64, asOf: Int64, issuedAt: Int64?
            var tracker: Tracker?
        }
        struct Sums: Decodable { var series: Int64, rxBytes: Int64, txBytes: Int64 }
        struct Totals: Decodable { var batches: Int64, values: Int64, revision: Int64 }
        var billsContaining: Int64, billCursor: Int64
        var series: [Series], bills: [StoredBill], sums: [Sums], totals: Totals
    }

    /// A store written by Netpulse 0.2.0 (`Fixtures/make-netpulse-0.2.swift.txt`, built at 59282ff: two agents,
    /// two interfaces each, two hours, the bill keeper every 5 minutes) keeps every open bill when the trackers move
    /// out of the bill table into their own (`v2-bill-trackers`). Its trackers are of a form that does not count
    /// intervals by class (`v8-flagged`): they are not read, and the next pass of the bill keeper rebuilds them from
    /// the period's buckets, to the same figures.
    @Test func aVersion02StoreKeepsItsBillsAndRebuildsItsTrackers() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        try FileIO.writeAtomically(path, try FileIO.readBytes(Self.fixtures + "/netpulse-0.2.db"))
        let expected = try JSONDecoder().decode(
            Expected02.self, from: Data(try FileIO.readBytes(Self.fixtures + "/netpulse-0.2.json")))
        let store = try SQLiteStore(path: path)

        let series = try await store.series().sorted { $0.id < $1.id }
        #expect(
            series.map { "\($0.id) \($0.kind.name) \($0.name)" }
                == expected.series.map { "\($0.id) \($0.kind) \($0.name)" })
        let totals = try await store.totals()
        #expect(
            [totals.batches, totals.values, totals.revision] == [
                expected.totals.batches, expected.totals.values, expected.totals.revision,
            ])
        #expect(try await store.billCursor() == expected.billCursor)
        // It billed in UTC, 0.2.0's default zone: the zone is recorded so a daemon now defaulting to the system's
        // goes on cutting its periods in UTC.
        #expect(try await store.recordedTimeZone() == "UTC")
        try await store.recordTimeZone("Europe/Berlin")
        #expect(try await SQLiteStore(path: path, readOnly: true).recordedTimeZone() == "Europe/Berlin")
        let sums = try await store.sums(level: .fiveMinutes, series: nil, from: 0, to: .max)
        for want in expected.sums {
            #expect(sums[want.series]?.traffic[.rxBytes] == want.rxBytes, "rx of series \(want.series)")
            #expect(sums[want.series]?.traffic[.txBytes] == want.txBytes, "tx of series \(want.series)")
        }
        // Its buckets had no member time or capacity (`v9-members`): each now has the time it covers as its member
        // time (docs/operations.md, "Stores from before member time") and no capacity.
        let buckets = try await store.buckets(level: .fiveMinutes, series: series.map(\.id), from: 0, to: .max)
        let values = buckets.values.flatMap { $0 }.map(\.values)
        #expect(!values.isEmpty && values.contains { $0.hasData })
        #expect(values.allSatisfy { $0.memberMilliseconds == $0.coveredMilliseconds && $0.capacity == 0 })

        let bills = try await store.bills(series: nil, containing: expected.billsContaining)
        let open = Dictionary(uniqueKeysWithValues: try await store.openBills().map { ($0.series, $0) })
        #expect(bills.count == expected.bills.count && open.count == expected.bills.count)
        for want in expected.bills {
            let got = try #require(bills.first { $0.series == want.series }, "bill of series \(want.series)")
            #expect(got.bill.period.from == want.periodFrom && got.bill.period.to == want.periodTo)
            #expect(got.bill.method.rawValue == want.method)
            #expect(got.bill.intervals == want.intervals && got.bill.missing == want.missing)
            #expect(got.bill.inbound == want.inbound && got.bill.outbound == want.outbound && got.bill.sum == want.sum)
            #expect(got.bill.revision == want.revision && got.asOf == want.asOf && got.issuedAt == want.issuedAt)
            #expect(got.bill.classes == nil && got.bill.rank == .round)
            let stored = try #require(open[want.series])
            let wantTracker = try #require(want.tracker)
            let old = stride(from: 0, to: wantTracker.encodedHex.count, by: 2).map { offset in
                let index = wantTracker.encodedHex.index(wantTracker.encodedHex.startIndex, offsetBy: offset)
                return UInt8(wantTracker.encodedHex[index...].prefix(2), radix: 16)!
            }
            #expect(stored.tracker == nil && BillTracker(encoded: old) == nil)
        }
        // What the bill keeper's next pass does with them: each open bill's tracker rebuilt from its period's
        // buckets counts the same intervals and gives the same figures, now with their classes; saved, it is read.
        var rebuilt = [StoredBill]()
        for want in expected.bills {
            let bill = try #require(open[want.series]).bill
            let buckets =
                try await store.buckets(
                    level: .fiveMinutes, series: [want.series], from: bill.period.from, to: bill.period.to)[
                    want.series] ?? []
            let tracker = BillTracker.rebuilt(from: buckets, period: bill.period, now: want.asOf)
            let again = tracker.bill(period: bill.period, now: want.asOf, method: bill.method, revision: bill.revision)
            #expect(tracker.count == want.tracker?.count && again.intervals == want.intervals)
            #expect(again.inbound == want.inbound && again.outbound == want.outbound && again.sum == want.sum)
            #expect(again.classes == IntervalClasses(measured: want.intervals) && again.missing == want.missing)
            rebuilt.append(StoredBill(series: want.series, bill: again, asOf: want.asOf, tracker: tracker))
        }
        try await store.saveBills(
            BillUpdate(bills: rebuilt, adjustments: [], cursor: expected.billCursor, settled: []))
        let reopened = try SQLiteStore(path: path)
        #expect(
            try await reopened.openBills().compactMap(\.tracker).map(\.encoded)
                == rebuilt.compactMap(\.tracker).map(\.encoded))
        #expect(
            try await reopened.bills(series: nil, containing: expected.billsContaining).map(\.bill)
                == rebuilt.map(\.bill))
    }
}
