import PulseAnalytics
import PulseCore
import Testing

@testable import PulseStore

/// The writer's stages one at a time, against rows held in memory (``MemoryIngestTransaction``): what each stage
/// decides and asks of its store. What the stores' SQL makes of it, and the whole path of a batch, are checked by
/// the real-store tests (StoreTests, PostgresStoreTests, the oracle).
@Suite struct WriterStagesTests {
    let web = AgentIdentity(
        name: "web-01", hostname: "web-01", version: "0.3.0", labels: Labels([("site", "fra1"), ("role", "web")]))

    func sample(
        _ order: Int64, tick: Int32 = 0, time: Int64, rx: UInt64, interval: Int64 = 1_000,
        kind: InterfaceKind = .physical
    ) -> StepSample {
        var counters = Traffic.zero
        counters[.rxBytes] = rx
        return StepSample(
            order: order, tick: tick, time: time, epoch: 1, counters: counters, interval: interval, heartbeat: 0,
            kind: kind)
    }

    // MARK: Deduplication

    @Test func sequenceRangesMergeAsTheHolesBetweenThemFill() async throws {
        let db = MemoryIngestTransaction()
        var deduplicator = Deduplicator(maximumRanges: 10)
        func deliver(_ sequence: UInt64) async throws -> Bool {
            try await deduplicator.recordFirstDelivery(agent: 1, stream: 7, sequence: sequence, droppedBefore: 0, in: db)
        }
        for sequence: UInt64 in [1, 3, 5] { #expect(try await deliver(sequence)) }
        let stream = try #require(deduplicator.streams[Deduplicator.StreamKey(agent: 1, stream: 7)])
        #expect(deduplicator.ranges[stream] == [1...1, 3...3, 5...5])
        db.log.removeAll()
        #expect(try await deliver(2))
        #expect(db.log == ["deleteRange 3", "updateRange 1 to 1...3"])
        #expect(try await deliver(4))
        #expect(try await deliver(0))
        #expect(try await deliver(6))
        #expect(
            db.log == [
                "deleteRange 3", "updateRange 1 to 1...3", "deleteRange 5", "updateRange 1 to 1...5",
                "updateRange 1 to 0...5", "updateRange 0 to 0...6",
            ])
        #expect(deduplicator.ranges[stream] == [0...6])
        #expect(db.ranges[stream] == [0...6])
        for sequence: UInt64 in 0...6 { #expect(try await !deliver(sequence)) }
    }

    @Test func aStreamNotCachedIsReadFromTheStore() async throws {
        let db = MemoryIngestTransaction()
        let stream = try db.streamID(agent: 1, stream: 7)
        db.ranges[stream] = [10...20]
        var deduplicator = Deduplicator(maximumRanges: 10)
        #expect(try await !deduplicator.recordFirstDelivery(agent: 1, stream: 7, sequence: 15, droppedBefore: 0, in: db))
        #expect(try await deduplicator.recordFirstDelivery(agent: 1, stream: 7, sequence: 21, droppedBefore: 3, in: db))
        #expect(db.ranges[stream] == [10...21])
        #expect(db.dropped[stream] == 3)
        // A duplicate's drops were counted with its first delivery.
        #expect(try await !deduplicator.recordFirstDelivery(agent: 1, stream: 7, sequence: 21, droppedBefore: 3, in: db))
        #expect(db.dropped[stream] == 3)
    }

    @Test func aBatchThatWouldOpenOneRangeTooManyIsRefused() async throws {
        let db = MemoryIngestTransaction()
        var deduplicator = Deduplicator(maximumRanges: 2)
        func deliver(_ sequence: UInt64) async throws -> Bool {
            try await deduplicator.recordFirstDelivery(agent: 1, stream: 7, sequence: sequence, droppedBefore: 0, in: db)
        }
        for sequence: UInt64 in [1, 3] { #expect(try await deliver(sequence)) }
        await #expect(throws: StoreError.self) { try await deliver(5) }
        #expect(db.ranges.values.first == [1...1, 3...3])
        // Filling a hole makes room again.
        for sequence: UInt64 in [2, 5] { #expect(try await deliver(sequence)) }
        #expect(db.ranges.values.first == [1...3, 5...5])
    }

    @Test func otherWritersRangesReplaceOnlyTheStreamsHeld() async throws {
        let db = MemoryIngestTransaction()
        var deduplicator = Deduplicator(maximumRanges: 10)
        _ = try await deduplicator.recordFirstDelivery(agent: 1, stream: 7, sequence: 1, droppedBefore: 0, in: db)
        let stream = try #require(deduplicator.streams.values.first)
        deduplicator.apply([stream: [1...9], stream + 1: [1...2]])
        #expect(deduplicator.ranges == [stream: [1...9]])
        deduplicator.forget()
        #expect(deduplicator.ranges.isEmpty && deduplicator.streams.isEmpty)
    }

    // MARK: Agents and memberships

    @Test func newLabelsEndTheGroupsLeftAndBeginTheGroupsJoined() async throws {
        let db = MemoryIngestTransaction()
        var agents = AgentDirectory()
        var commit = PendingCommit()
        let first = try await agents.admit(web, at: 1_000, commit: &commit, in: db)
        #expect(first.relabelled && commit.catalogueChanged)
        #expect(first.row.memberships.map(\.group.description) == ["role=web", "site=fra1"])
        db.log.removeAll()
        var moved = web
        moved.labels = Labels([("site", "ams1"), ("role", "web")])
        let second = try await agents.admit(moved, at: 5_000, commit: &commit, in: db)
        #expect(second.relabelled)
        #expect(db.log == ["end site=fra1 at 5000", "begin site=ams1 at 5000", "setLabels site=ams1,role=web"])
        let held = try #require(agents.rows["web-01"])
        #expect(
            held.memberships.map { "\($0.group) \($0.from)-\($0.to.map { "\($0)" } ?? "")" } == [
                "role=web 1000-", "site=fra1 1000-5000", "site=ams1 5000-",
            ])
        #expect(AgentDirectory.lastMove(held.memberships) == 5_000)
        // A batch received before that move (it waited in the journal) leaves the groups as they are.
        db.log.removeAll()
        let late = try await agents.admit(web, at: 4_000, commit: &commit, in: db)
        #expect(!late.relabelled)
        #expect(db.log.isEmpty)
        #expect(late.row.identity.labels == moved.labels)
    }

    @Test func aConfigurationMoveReachesAnAgentAwayButNotOneNeverSeen() async throws {
        let db = MemoryIngestTransaction()
        db.agents["db-01"] = (50, AgentIdentity(name: "db-01", hostname: "db-01", version: "0.3.0"), 0)
        db.memberships[50] = []
        var agents = AgentDirectory()
        var commit = PendingCommit()
        let fra = Labels([("site", "fra1")])
        let ams = Labels([("site", "ams1")])
        #expect(try await !agents.move("new-01", to: fra, at: 10_000, commit: &commit, in: db))
        #expect(db.log.isEmpty && agents.rows.isEmpty)
        #expect(try await agents.move("db-01", to: fra, at: 10_000, commit: &commit, in: db))
        #expect(db.log == ["begin site=fra1 at 10000", "setLabels site=fra1"])
        #expect(try await !agents.move("db-01", to: fra, at: 20_000, commit: &commit, in: db))
        // Moves go forward in time only.
        #expect(try await !agents.move("db-01", to: ams, at: 9_000, commit: &commit, in: db))
        #expect(try await agents.move("db-01", to: ams, at: 20_000, commit: &commit, in: db))
        #expect(db.memberships[50]?.map(\.to) == [20_000, nil])
    }

    @Test func lastSeenIsTouchedOnceAMinuteAndOnlyANewNameIsACatalogueChange() async throws {
        let db = MemoryIngestTransaction()
        var agents = AgentDirectory()
        var commit = PendingCommit()
        _ = try await agents.admit(web, at: 0, commit: &commit, in: db)
        commit = PendingCommit()
        db.log.removeAll()
        _ = try await agents.admit(web, at: 30_000, commit: &commit, in: db)
        #expect(db.log.isEmpty)
        _ = try await agents.admit(web, at: 61_000, commit: &commit, in: db)
        #expect(db.log == ["touchAgent 1 web-01 0.3.0 61000"])
        #expect(!commit.catalogueChanged)
        var renamed = web
        renamed.hostname = "web-01.fra1"
        _ = try await agents.admit(renamed, at: 62_000, commit: &commit, in: db)
        #expect(commit.catalogueChanged)
    }

    // MARK: Counting

    struct Counting {
        let db = MemoryIngestTransaction()
        var counter = StepCounter(settings: StoreSettings())
        var catalogue = SeriesCatalogue()
        var placement = BucketPlacement(levels: RollupLevel.standard)
        var commit = PendingCommit()
        let agent = StoreWriter.AgentRow(
            id: 1, identity: AgentIdentity(name: "web-01", hostname: "web-01", version: "0.3.0"), lastSeen: 0,
            memberships: [])

        mutating func place(_ samples: [StepSample]) async throws {
            try await counter.place(
                samples, series: 100, name: InterfaceName("eth0"), agent: agent, catalogue: &catalogue,
                placement: &placement, commit: &commit, in: db)
        }
    }

    @Test func lateDataSplitsTheGapItFallsIn() async throws {
        var counting = Counting()
        try await counting.place([sample(1, time: 0, rx: 0)])
        try await counting.place([sample(3, time: 20_000, rx: 2_000)])
        #expect(counting.db.log == ["saveGap 100 1-3 gap"])
        #expect(counting.db.gaps[100]?.first?.isVirtual == true)
        // A virtual gap writes no bucket: its span is marked changed, for the interface, its host and the fleet.
        #expect(counting.commit.changedSpans.map(\.series).count == 3)
        #expect(counting.commit.changedSpans.allSatisfy { $0.from == 0 && $0.to == 20_000 })
        counting.commit = PendingCommit()
        try await counting.place([sample(2, time: 10_000, rx: 1_500)])
        #expect(
            counting.db.log == [
                "saveGap 100 1-3 gap", "deleteGap 100 from 1", "saveGap 100 1-2 gap", "saveGap 100 2-3 gap",
            ])
        #expect(
            counting.commit.changedSpans.filter { $0.series == 100 }.map { [$0.from, $0.to] } == [
                [0, 20_000], [0, 10_000], [10_000, 20_000],
            ])
        #expect(counting.counter.states[100]?.first.order == 1)
        #expect(counting.counter.states[100]?.last.order == 3)
        #expect(counting.commit.changedStates == [100])
        #expect(counting.commit.deltas.isEmpty)
    }

    @Test func dataInsideAMeasuredStepIsAnAnomalyAndChangesNoBucket() async throws {
        var counting = Counting()
        try await counting.place([sample(1, time: 0, rx: 0), sample(2, time: 1_000, rx: 100)])
        counting.placement.flush(into: &counting.commit)
        let before = counting.commit.deltas
        #expect(before[StoreWriter.BucketKey(series: 100, level: 0, start: 0)]?.traffic[.rxBytes] == 100)
        try await counting.place([sample(1, tick: 1, time: 500, rx: 50)])
        counting.placement.flush(into: &counting.commit)
        #expect(counting.commit.deltas == before)
        #expect(counting.commit.anomalies.map(\.kind) == ["already-counted"])
    }

    // MARK: Placement

    @Test func aRunOfStepsReachesTheCommitOncePerBucket() async throws {
        var placement = BucketPlacement(levels: RollupLevel.standard)
        var commit = PendingCommit()
        var previous = sample(0, time: 0, rx: 0)
        for tick in 1...60 {
            let next = sample(Int64(tick), time: Int64(tick) * 1_000, rx: UInt64(tick) * 100)
            let step = CountedStep.between(previous, next, maximumRate: 50_000_000_000)
            placement.add(step, from: previous, to: next, series: 1, scopes: [2, 3], sign: 1, into: &commit)
            previous = next
        }
        // All sixty steps are in the same bucket of every level: held in the run until it is flushed.
        #expect(commit.deltas.isEmpty)
        placement.flush(into: &commit)
        #expect(commit.deltas.count == 3 * RollupLevel.standard.count)
        for level in RollupLevel.standard.indices {
            let interface = commit.deltas[StoreWriter.BucketKey(series: 1, level: level, start: 0)] ?? .empty
            let scope = commit.deltas[StoreWriter.BucketKey(series: 2, level: level, start: 0)] ?? .empty
            #expect(interface.traffic[.rxBytes] == 6_000 && interface.measuredMilliseconds == 60_000)
            #expect(interface.peakRx > 0)
            // Scopes take the sums, not the interface's peaks.
            #expect(scope.traffic[.rxBytes] == 6_000 && scope.peakRx == 0)
        }
        #expect(commit.scopeSeries == [2, 3])
    }

    @Test func aStepTakenOutAgainLeavesNothing() async throws {
        var placement = BucketPlacement(levels: RollupLevel.standard)
        var commit = PendingCommit()
        let previous = sample(1, time: 0, rx: 0)
        let next = sample(2, time: 130_000, rx: 13_000)
        let step = CountedStep.between(previous, next, maximumRate: 50_000_000_000)
        #expect(step.timing == .gap)
        placement.add(step, from: previous, to: next, series: 1, scopes: [2], sign: 1, into: &commit)
        placement.add(step, from: previous, to: next, series: 1, scopes: [2], sign: -1, into: &commit)
        placement.flush(into: &commit)
        #expect(!commit.deltas.isEmpty)
        #expect(commit.deltas.values.allSatisfy { $0 == .empty })
    }

    @Test func aScopeWithAPartOfTheStepGetsThatPartOnly() async throws {
        var placement = BucketPlacement(levels: [.oneMinute])
        var commit = PendingCommit()
        let previous = sample(1, time: 0, rx: 0, interval: 60_000)
        let next = sample(2, time: 60_000, rx: 6_000, interval: 60_000)
        let step = CountedStep.between(previous, next, maximumRate: 50_000_000_000)
        placement.add(
            step, from: previous, to: next, series: 1, scopes: [2, 3], parts: [nil, 30_000..<60_000], sign: 1,
            into: &commit)
        placement.flush(into: &commit)
        func bucket(_ series: Int64) -> BucketValues? {
            commit.deltas[StoreWriter.BucketKey(series: series, level: 0, start: 0)]
        }
        #expect(bucket(1)?.traffic[.rxBytes] == 6_000)
        #expect(bucket(2)?.traffic[.rxBytes] == 6_000)
        #expect(bucket(3)?.traffic[.rxBytes] == 3_000)
        #expect(bucket(3)?.memberMilliseconds == 30_000)
        #expect(commit.scopeSeries == [2, 3])
    }

    // MARK: Change tracking

    @Test func aVirtualGapMarksEachBilledIntervalItSpans() async throws {
        var tracker = ChangeTracker(levels: RollupLevel.standard)
        tracker.billMark = 600_000
        var commit = PendingCommit()
        commit.markChanged(from: 120_000, to: 900_000, series: [1, 2])
        let changes = tracker.changes(in: commit)
        #expect(
            Set(changes.bill.keys) == [
                StoreWriter.ChangeKey(series: 1, start: 0), StoreWriter.ChangeKey(series: 1, start: 300_000),
                StoreWriter.ChangeKey(series: 2, start: 0), StoreWriter.ChangeKey(series: 2, start: 300_000),
            ])
        #expect(changes.bill.values.allSatisfy { $0 == StoreWriter.Change(unknown: 1) })
        #expect(changes.forward.isEmpty)
        #expect(tracker.changes(in: commit, billed: false).bill.isEmpty)
    }

    @Test func billedIntervalsGetBytesAndTimeAndForwardedOnesInterfacesOnly() async throws {
        var tracker = ChangeTracker(levels: RollupLevel.standard)
        tracker.billMark = 600_000
        tracker.forwardMark = 180_000
        var commit = PendingCommit()
        let values = BucketValues(
            traffic: TrafficDelta(1_000, 200, 0, 0, 0, 0, 0, 0), measuredMilliseconds: 60_000)
        // Interface 1 and its scope 2: a minute bucket forwarded, one not yet; a billed 5-minute bucket, one not yet.
        for series: Int64 in [1, 2] {
            for (level, start): (Int, Int64) in [(0, 60_000), (0, 240_000), (1, 0), (1, 600_000)] {
                commit.deltas[StoreWriter.BucketKey(series: series, level: level, start: start)] = values
            }
        }
        commit.scopeSeries = [2]
        commit.markChanged(from: 120_000, to: 150_000, series: [1, 2])
        let changes = tracker.changes(in: commit)
        #expect(
            changes.forward == [
                StoreWriter.ChangeKey(series: 1, start: 60_000): StoreWriter.Change(rx: 1_000, tx: 200),
                StoreWriter.ChangeKey(series: 1, start: 120_000): StoreWriter.Change(unknown: 1),
            ])
        let billed = StoreWriter.Change(rx: 1_000, tx: 200, covered: 60_000, unknown: 1, measured: 60_000)
        #expect(
            changes.bill == [
                StoreWriter.ChangeKey(series: 1, start: 0): billed, StoreWriter.ChangeKey(series: 2, start: 0): billed,
            ])
        let settled = tracker.changes(in: commit, billed: false)
        #expect(settled.bill.isEmpty && settled.forward.isEmpty)
    }

    // MARK: The commit

    @Test func beginTakesWhatOtherWritersChangedInTheRowsHeld() async throws {
        let db = MemoryIngestTransaction()
        var writer = StoreWriter(settings: StoreSettings())
        db.revision = 4
        await #expect(try writer.begin(in: db) == 5)
        let old = StoreWriter.SeriesState(first: sample(1, time: 0, rx: 0), last: sample(2, time: 1_000, rx: 1))
        let new = StoreWriter.SeriesState(first: sample(1, time: 0, rx: 0), last: sample(9, time: 9_000, rx: 9))
        writer.counter.states[1] = old
        writer.deduplicator.ranges[9] = [1...1]
        writer.agents.rows["web-01"] = StoreWriter.AgentRow(id: 3, identity: web, lastSeen: 0, memberships: [])
        writer.agents.rows["db-01"] = StoreWriter.AgentRow(id: 4, identity: web, lastSeen: 0, memberships: [])
        writer.catalogue.series[SeriesCatalogue.SeriesKey(kind: .fleet, agent: 0, name: [])] = 77
        // The same revision again: nobody else committed, nothing is read.
        await #expect(try writer.begin(in: db) == 5)
        db.revision = 6
        db.shared = StoreWriter.SharedChanges(
            states: [1: new, 2: new], ranges: [9: [1...2], 10: [1...1]], agents: [3])
        await #expect(try writer.begin(in: db) == 7)
        #expect(writer.counter.states[1]?.last.order == 9)
        #expect(writer.counter.states[2] == nil)
        #expect(writer.deduplicator.ranges == [9: [1...2]])
        #expect(writer.agents.rows.keys.sorted() == ["db-01"])
        // A store that cannot tell what changed: every row another writer may change is dropped; ids stay.
        db.revision = 8
        db.shared = nil
        await #expect(try writer.begin(in: db) == 9)
        #expect(writer.counter.states.isEmpty && writer.deduplicator.ranges.isEmpty && writer.agents.rows.isEmpty)
        #expect(writer.catalogue.series.count == 1)
    }

    @Test func beginBoundsTheCachesAndClearsTheCommit() async throws {
        let db = MemoryIngestTransaction()
        var writer = StoreWriter(settings: StoreSettings())
        _ = try await writer.begin(in: db)
        let facts = LinkState(speedMbps: 1_000, operState: .up, carrier: true, mtu: 1_500, kind: .physical)
        for series in 0..<Int64(199_999) { writer.catalogue.facts[series] = facts }
        writer.counter.states[1] = StoreWriter.SeriesState(
            first: sample(1, time: 0, rx: 0), last: sample(1, time: 0, rx: 0))
        writer.commit.anomalies = [Anomaly(series: 0, timestamp: 0, kind: "x", detail: "")]
        _ = try await writer.begin(in: db)
        #expect(writer.catalogue.facts.count == 199_999 && writer.counter.states.count == 1)
        #expect(writer.commit.anomalies.isEmpty)
        writer.catalogue.facts[199_999] = facts
        _ = try await writer.begin(in: db)
        // Facts and states are dropped together.
        #expect(writer.catalogue.facts.isEmpty && writer.counter.states.isEmpty)
    }

    @Test func aDuplicateBatchStopsAtDeduplicationAndCommitsNothing() async throws {
        let db = MemoryIngestTransaction()
        var writer = StoreWriter(settings: StoreSettings())
        let day: Int64 = 1_763_856_000_000
        let batch = BatchMaker().batch(1, start: day, rx: [100, 200, 300])
        await #expect(try writer.ingest([batch], receivedAt: day + 60_000, in: db) == [.stored])
        #expect(db.log.filter { $0.hasPrefix("insertRaw") || $0.hasPrefix("advanceTotals") }.count == 2)
        #expect(writer.revision == writer.pendingRevision)
        let interface = try #require(db.buckets.first { $0.key.level == 0 && $0.value.traffic[.rxBytes] > 0 })
        #expect(interface.value.traffic[.rxBytes] == 200)
        db.log.removeAll()
        await #expect(try writer.ingest([batch], receivedAt: day + 61_000, in: db) == [.duplicate])
        #expect(db.log.isEmpty)
        #expect(writer.revision != writer.pendingRevision)
    }
}
