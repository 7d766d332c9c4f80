import Foundation
import Logging
import PulseAnalytics
import PulseCore
import TestSupport
import Testing

@testable import PulseStore
@testable import PulseStorePostgres
@testable import PulseStoreSQLite

/// The PostgreSQL store against a real PostgreSQL 15 server of the test's own (``PostgresServer``), compared with
/// the SQLite store fed the same group commits: the writer is shared, so the two must agree on everything a user
/// reads — rollups at every level (virtual gaps spread in), the catalogue, memberships, raw samples, anomalies and
/// totals.
@Suite(.serialized) struct PostgresStoreTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    /// A day of two agents' traffic with what late and messy delivery brings: a spool replayed late and shuffled (an
    /// outage's virtual gap split), a duplicate, a reboot (new epoch), a label change (memberships), a clock ahead.
    func traffic() -> [[IngestBatch]] {
        var web = BatchMaker()
        web.agent.labels = Labels([("site", "ams")])
        var db = BatchMaker()
        db.agent = AgentIdentity(name: "db-01", hostname: "db-01", version: "0.2.0", labels: Labels([("site", "fra")]))
        db.stream = 7
        func rx(_ index: Int, _ base: UInt64) -> [UInt64] {
            (0..<30).map { tick in
                let t = UInt64(index * 30 + tick)
                return base + t * 1_000 + t * t % 977
            }
        }
        var webBatches = (0..<20).map { web.batch(UInt64($0 + 1), start: day + Int64($0) * 30_000, rx: rx($0, 0)) }
        // The interface was re-created from batch 15 on: a new ifindex, counters from zero.
        for index in 15..<20 {
            webBatches[index] = web.batch(
                UInt64(index + 1), start: day + Int64(index) * 30_000, rx: rx(index - 15, 0), ifindex: 9)
        }
        var dbBatches = (0..<20).map {
            db.batch(UInt64($0 + 1), start: day + Int64($0) * 30_000, rx: rx($0, 5_000_000), interface: "bond0")
        }
        var relabelled = db
        relabelled.agent.labels = Labels([("site", "fra"), ("role", "db")])
        for index in 10..<20 {
            dbBatches[index] = relabelled.batch(
                UInt64(index + 1), start: day + Int64(index) * 30_000, rx: rx(index, 5_000_000), interface: "bond0")
        }
        // A batch from 2 hours in the future: moved back to when it was received, and flagged.
        dbBatches.append(
            relabelled.batch(21, start: day + 7_200_000, rx: [7_000_000, 7_001_000], interface: "bond0"))
        var generator = SplitMix64(seed: 11)
        let late = Array(webBatches[3..<9]).shuffled(using: &generator)
        return [
            Array(webBatches[0..<3]) + Array(dbBatches[0..<5]),
            Array(webBatches[9..<12]) + [webBatches[1]] + Array(dbBatches[5..<12]),
            Array(late[0..<3]) + Array(dbBatches[12..<16]),
            Array(late[3...]) + Array(webBatches[12...]) + Array(dbBatches[16...]) + [dbBatches[3]],
        ]
    }

    /// Everything a reader sees, keyed by what identifies each series rather than by its id.
    struct Reading: Equatable {
        var series: [String: String] = [:]
        var buckets: [String: [String]] = [:]
        var memberships: [Membership] = []
        var agents: [String] = []
        var anomalies: [String] = []
        var samples: [String: [String]] = [:]
        var batches: Int64 = 0
        var values: Int64 = 0
    }

    static func read(
        _ catalogue: [SeriesRecord], reader: any RollupReader, memberships: [Membership], agents: [AgentRecord],
        anomalies: [Anomaly], totals: IngestTotals, samples: (Int64) async throws -> [RawSample]
    ) async throws -> Reading {
        var reading = Reading()
        func key(_ record: SeriesRecord) -> String {
            "\(record.kind) \(record.agent ?? "-") \(record.interface.map { "\($0)" } ?? "-") \(record.group?.description ?? "-")"
        }
        var keys = [Int64: String]()
        for record in catalogue {
            keys[record.id] = key(record)
            reading.series[key(record)] =
                "first \(record.firstSeen) last \(record.lastSeen) facts \(String(describing: record.facts))"
        }
        for level in RollupLevel.standard {
            for (id, list) in try await reader.buckets(level: level, series: Array(keys.keys), from: 0, to: .max) {
                reading.buckets["\(level) \(keys[id]!)"] = list.map { "\($0.start) \($0.values)" }
            }
        }
        for record in catalogue where record.kind == .interface {
            reading.samples[key(record)] = try await samples(record.id).map {
                "\($0.order) \($0.timestamp) \($0.epoch) \($0.counters.values)"
            }
        }
        reading.memberships = memberships
        reading.agents = agents.map { "\($0.name) \($0.labels.pairs.map { "\($0.key)=\($0.value)" }) \($0.lastSeen)" }
        reading.anomalies = anomalies.map { "\($0.timestamp) \($0.kind) \($0.detail) \(keys[$0.series] ?? "-")" }
        reading.batches = totals.batches
        reading.values = totals.values
        return reading
    }

    static func read(_ store: SQLiteStore) async throws -> Reading {
        try await read(
            store.series(), reader: store, memberships: store.memberships(), agents: store.agents(),
            anomalies: store.anomalies(since: 0), totals: store.totals()
        ) { try await store.samples(series: $0, from: 0, to: .max) }
    }

    static func read(_ store: PostgresStore) async throws -> Reading {
        try await read(
            store.series(), reader: store, memberships: store.memberships(), agents: store.agents(),
            anomalies: store.anomalies(since: 0), totals: store.totals()
        ) { try await store.samples(series: $0, from: 0, to: .max) }
    }

    /// A PostgreSQL store (database `name` on a server of its own) and a fresh SQLite store, for the same batches
    /// to be read in both; the store is closed and the server stopped when `body` returns.
    static func sideBySide(
        _ name: String, _ body: (PostgresServer, PostgresStore, SQLiteStore) async throws -> Void
    ) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let postgres = try await PostgresStore(
            location: PostgresLocation(url: server.createDatabase(name)),
            idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        defer { postgres.shutdown() }
        try await body(server, postgres, try SQLiteStore(path: temporaryDirectory() + "/netpulse.db"))
    }

    @Test func theSameTrafficReadsTheSameAsInSQLite() async throws {
        try await Self.sideBySide("same") { _, postgres, sqlite in
            for (index, group) in traffic().enumerated() {
                let receivedAt = day + 3_600_000 + Int64(index) * 1_000
                let expected = try await sqlite.ingest(group, receivedAt: receivedAt)
                #expect(try await postgres.ingest(group, receivedAt: receivedAt) == expected)
            }
            let fromSQLite = try await Self.read(sqlite)
            let fromPostgres = try await Self.read(postgres)
            #expect(fromSQLite.batches == 41 && fromSQLite.buckets.count > 20 && fromSQLite.memberships.count == 3)
            #expect(fromSQLite.anomalies.contains { $0.contains("clock-ahead") })
            for (key, value) in fromSQLite.buckets { #expect(fromPostgres.buckets[key] == value, "\(key)") }
            #expect(fromPostgres == fromSQLite)
            // Sums over a window read the same too (PostgreSQL's SUM of bigint is numeric: cast back).
            let ids = try await postgres.series().map(\.id)
            let sums = try await postgres.sums(level: .oneMinute, series: nil, from: day, to: day + 600_000)
            #expect(Set(sums.keys).isSubset(of: Set(ids)) && !sums.isEmpty)
            let fleet = try #require(try await postgres.series().first { $0.kind == .fleet })
            let sqliteFleet = try #require(try await sqlite.series().first { $0.kind == .fleet })
            let expectedFleet = try await sqlite.sums(
                level: .oneMinute, series: [sqliteFleet.id], from: day, to: day + 600_000)
            #expect(sums[fleet.id] == expectedFleet[sqliteFleet.id])
        }
    }

    /// After many streams restarted (a virtual gap per interface), reads of many interfaces and hosts, which look
    /// their gaps up by key (more gaps than series read), read in PostgreSQL what they read in SQLite.
    /// A move read from the configuration holds in PostgreSQL as in SQLite (``StoreTests/movesFromTheConfiguration``).
    @Test func aMoveFromTheConfigurationHoldsAsInSQLite() async throws {
        try await Self.sideBySide("moves") { _, postgres, _ in
            try await StoreTests.movesFromTheConfiguration(postgres, day: day)
        }
    }

    @Test func readsOfManyInterfacesAndHostsAfterRestartsReadAsInSQLite() async throws {
        try await Self.sideBySide("gaps") { _, postgres, sqlite in
            let batches = ReadPacingTests.restartedStreams(from: day)
            _ = try await sqlite.ingest(batches, receivedAt: day + 300_000)
            _ = try await postgres.ingest(batches, receivedAt: day + 300_000)
            func owners(_ records: [SeriesRecord]) -> [String: Int64] {
                Dictionary(
                    uniqueKeysWithValues: records.filter { $0.kind == .interface || $0.kind == .host }.map {
                        ("\($0.kind) \($0.agent ?? "-")", $0.id)
                    })
            }
            let inSQLite = owners(try await sqlite.series())
            let inPostgres = owners(try await postgres.series())
            #expect(inSQLite.count == 160 && Set(inSQLite.keys) == Set(inPostgres.keys))
            let (from, to) = (day, day + 240_000)
            for keys in [Array(inSQLite.keys.sorted().prefix(70)), Array(inSQLite.keys.sorted().suffix(3))] {
                let expected = try await sqlite.sums(
                    level: .oneMinute, series: keys.map { inSQLite[$0]! }, from: from, to: to)
                let read = try await postgres.sums(
                    level: .oneMinute, series: keys.map { inPostgres[$0]! }, from: from, to: to)
                for key in keys { #expect(read[inPostgres[key]!] == expected[inSQLite[key]!], "\(key)") }
                let buckets = try await postgres.buckets(
                    level: .oneMinute, series: keys.map { inPostgres[$0]! }, from: from, to: to)
                #expect(keys.allSatisfy { buckets[inPostgres[$0]!]?.count == 4 }, "minutes 1 and 2 spread")
            }
        }
    }

    /// An agent that reconnects to a second daemon while the first is still committing: the first is offered
    /// batches 1…80, the second 41…120 (the agent's spool replayed from where it last had an ack) once the first has
    /// stored 30, both committing at once in group commits of random sizes, each daemon with its own store and
    /// connection. Each batch is stored exactly once, and the store ends exactly as one SQLite daemon given every batch
    /// once, in order: batches of the second that arrive ahead of the first's are late data for the shared store.
    @Test func twoDaemonsCommittingOneAgentsBatchesAtOnceStoreEachOnce() async throws {
        try await Self.withTwoDaemons { first, second in
            let maker = BatchMaker()
            var batches = [IngestBatch]()
            for index in 0..<120 {
                let rx: [UInt64] = (0..<10).map { UInt64(index * 10 + $0) * 1_500 + UInt64(index % 7) * 100 }
                batches.append(maker.batch(UInt64(index + 1), start: day + Int64(index) * 10_000, rx: rx))
            }
            let receivedAt = day + 2 * 3_600_000
            let (head, tail) = (Array(batches[0..<80]), Array(batches[40...]))
            async let byFirst = Self.offer(head, in: 1...6, seed: 1, to: first, at: receivedAt)
            async let bySecond: [IngestOutcome] = {
                while try await second.totals().batches < 30 { try await Task.sleep(for: .milliseconds(2)) }
                return try await Self.offer(tail, in: 1...6, seed: 2, to: second, at: receivedAt)
            }()
            let (a, b) = try await (byFirst, bySecond)
            for index in batches.indices {
                let offers = (index < 80 ? [a[index]] : []) + (index >= 40 ? [b[index - 40]] : [])
                let stored = offers.filter { $0 == IngestOutcome.stored }.count
                #expect(stored == 1, "batch \(index + 1): \(offers)")
            }
            let sqlite = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
            _ = try await sqlite.ingest(batches, receivedAt: receivedAt)
            let expected = try await Self.read(sqlite)
            #expect(try await Self.read(first) == expected)
            #expect(try await Self.read(second) == expected)
            #expect(expected.batches == 120)
        }
    }

    /// Batches handed to two daemons alternately, committed at once: each is stored once, every level's total is
    /// the counters' delta, and the store reads exactly as one SQLite daemon's given the batches in order.
    @Test func alternateBatchesOnTwoDaemonsAddUpExactly() async throws {
        try await Self.withTwoDaemons { first, second in
            let maker = BatchMaker()
            var batches = [IngestBatch]()
            for index in 0..<80 {
                let rx: [UInt64] = (0..<5).map { UInt64(index * 5 + $0) * 2_000 + UInt64(index % 5) * 10 }
                batches.append(maker.batch(UInt64(index + 1), start: day + Int64(index) * 5_000, rx: rx))
            }
            let receivedAt = day + 3_600_000
            let even = stride(from: 0, to: batches.count, by: 2).map { batches[$0] }
            let odd = stride(from: 1, to: batches.count, by: 2).map { batches[$0] }
            async let byFirst = Self.offer(even, in: 2...2, to: first, at: receivedAt)
            async let bySecond = Self.offer(odd, in: 2...2, to: second, at: receivedAt)
            let outcomes = try await byFirst + bySecond
            #expect(outcomes.allSatisfy { $0 == IngestOutcome.stored })
            let series = try #require(try await first.series().first { $0.kind == .interface })
            let delta = Int64(batches.last!.lastCounter - batches.first!.firstCounter)
            for level in RollupLevel.standard {
                let sums = try await second.sums(level: level, series: [series.id], from: 0, to: .max)[series.id]
                #expect(sums?.traffic[.rxBytes] == delta, "\(level)")
            }
            #expect(try await first.totals().batches == 80)
            let sqlite = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
            _ = try await sqlite.ingest(batches, receivedAt: receivedAt)
            var (shared, single) = (try await Self.read(first), try await Self.read(sqlite))
            // A host's or the fleet's series is made by the first step counted toward it, and says when that step
            // ended: which step is first depends on which daemon committed first. Everything else is the same.
            for reading in [\Reading.series] {
                shared[keyPath: reading] = shared[keyPath: reading].filter { $0.key.hasPrefix("interface") }
                single[keyPath: reading] = single[keyPath: reading].filter { $0.key.hasPrefix("interface") }
            }
            #expect(shared == single)
        }
    }

    /// A daemon whose turn comes after another's reads back only what the other changed, and ingests on from it: the
    /// first daemon stores a batch of two agents; the second the next batch of one of them, relabelled and with a
    /// new link speed; the first, at its next turn, holds the second's state of that agent's interface, its new
    /// ranges and link facts, has dropped that agent's labels (to read them again), and still holds the other
    /// agent's rows. After a commit that stamped nothing (an older daemon's), it reads everything again. Its next
    /// commit then stores as one SQLite daemon given the batches in order.
    @Test func aDaemonReadsBackOnlyWhatAnotherChanged() async throws {
        try await Self.withTwoDaemons { first, second in
            let web = BatchMaker()
            var db = BatchMaker()
            db.agent = AgentIdentity(name: "db-01", hostname: "db-01", version: "0.2.0")
            db.stream = 7
            var relabelled = web
            relabelled.agent.labels = Labels([("site", "ams")])
            let groups = [
                [web.batch(1, start: day, rx: [100, 200, 300]), db.batch(1, start: day, rx: [5, 50, 500])],
                [relabelled.batch(2, start: day + 3_000, rx: [450, 600], speed: 10_000)],
                [
                    relabelled.batch(3, start: day + 5_000, rx: [800, 1_100], speed: 10_000),
                    db.batch(2, start: day + 3_000, rx: [900, 1_000]),
                ],
            ]
            let receivedAt = day + 60_000
            _ = try await first.ingest(groups[0], receivedAt: receivedAt)
            _ = try await second.ingest(groups[1], receivedAt: receivedAt)
            let interfaces = try await first.series().filter { $0.kind == .interface }
            let webEth0 = try #require(interfaces.first { $0.agent == "web-01" }).id
            let dbEth0 = try #require(interfaces.first { $0.agent == "db-01" }).id
            struct Cached: Sendable, Equatable {
                var states: [Int64: [UInt8]] = [:]
                var speeds: [Int64: UInt32] = [:]
                var ranges: [[UInt64]] = []
                var agents: [String] = []
            }
            @Sendable func cached(_ side: PostgresStore.WriterSide) -> Cached {
                var cached = Cached()
                for (series, state) in side.writer.counter.states {
                    cached.states[series] = SampleCoding.encode(state.first) + SampleCoding.encode(state.last)
                }
                for (series, facts) in side.writer.catalogue.facts { cached.speeds[series] = facts.speedMbps }
                cached.ranges = side.writer.deduplicator.ranges.values.map {
                    $0.flatMap { [$0.lowerBound, $0.upperBound] }
                }.sorted {
                    $0.lexicographicallyPrecedes($1)
                }
                cached.agents = side.writer.agents.rows.keys.sorted()
                return cached
            }
            /// The first daemon's next turn, up to where it would begin storing: what it then holds.
            func nextTurn() async throws -> Cached {
                try await first.writerTransaction(limitIdle: false) { side, transaction in
                    _ = try await side.writer.begin(in: transaction)
                    return cached(side)
                }
            }
            let before = try await first.onWriter(cached)
            let secondHolds = try await second.onWriter(cached)
            let turn = try await nextTurn()
            #expect(before.states[webEth0] != secondHolds.states[webEth0])
            #expect(turn.states[webEth0] == secondHolds.states[webEth0])
            #expect(turn.states[dbEth0] == before.states[dbEth0] && turn.states[dbEth0] != nil)
            #expect(turn.speeds[webEth0] == 10_000 && turn.speeds[dbEth0] == 1_000)
            #expect(turn.ranges == [[1, 1], [1, 2]])
            #expect(before.agents == ["db-01", "web-01"] && turn.agents == ["db-01"])

            // A commit of a daemon that stamps nothing (an older netpulsed during a rolling upgrade): the next turn
            // cannot tell what it changed, and reads everything again.
            try await second.record(.unstamped)
            let afterUnstamped = try await nextTurn()
            #expect(afterUnstamped.states.isEmpty && afterUnstamped.agents.isEmpty && afterUnstamped.ranges.isEmpty)

            _ = try await first.ingest(groups[2], receivedAt: receivedAt)
            let sqlite = try SQLiteStore(path: temporaryDirectory() + "/netpulse.db")
            for group in groups { _ = try await sqlite.ingest(group, receivedAt: receivedAt) }
            let expected = try await Self.read(sqlite)
            #expect(expected.memberships.count == 1 && expected.batches == 5)
            #expect(try await Self.read(first) == expected)

            // The database went back (a failover to a replica that lacks the last commits, a restore): a revision
            // already seen comes again, and the next turn reads everything again.
            #expect(!(try await first.onWriter(cached)).states.isEmpty)
            try await second.record(.rewound)
            let afterGoingBack = try await nextTurn()
            #expect(afterGoingBack.states.isEmpty && afterGoingBack.agents.isEmpty)
        }
    }

    /// A writer whose connection was lost reads everything again on the new one, which may reach another server
    /// (a restart, a failover): here its connections are ended by the server, and a batch delivered again is found
    /// stored, with none of the series' rows still cached from before.
    @Test func aWriterTrustsNothingCachedAcrossANewConnection() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let store = try await PostgresStore(
            location: PostgresLocation(url: server.createDatabase("reconnect")),
            idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        defer { store.shutdown() }
        let batch = BatchMaker().batch(1, start: day, rx: [100, 200, 300])
        #expect(try await store.ingest([batch], receivedAt: day + 60_000) == [.stored])
        #expect(try await store.onWriter { !$0.writer.counter.states.isEmpty })
        _ = try server.psql(
            "postgres",
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'reconnect'")
        // The session sees its connection closed, and opens another at the next transaction.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await store.ingest([batch], receivedAt: day + 61_000) == [.duplicate])
        #expect(try await store.onWriter { $0.writer.counter.states.isEmpty && $0.connections == 2 })
        #expect(try await store.totals().batches == 1)
    }

    /// Runs `body` with two daemons' stores on one fresh database of a server of its own.
    static func withTwoDaemons(_ body: (PostgresStore, PostgresStore) async throws -> Void) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let location = try PostgresLocation(url: server.createDatabase("shared"))
        let first = try await PostgresStore(
            location: location, idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        let second = try await PostgresStore(
            location: location, idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        defer {
            first.shutdown()
            second.shutdown()
        }
        try await body(first, second)
    }

    /// Offers `batches` to `store` in order, in group commits of sizes drawn from `sizes`.
    static func offer(
        _ batches: [IngestBatch], in sizes: ClosedRange<Int>, seed: UInt64 = 0, to store: PostgresStore, at time: Int64
    ) async throws -> [IngestOutcome] {
        var generator = SplitMix64(seed: seed)
        var outcomes = [IngestOutcome]()
        var start = 0
        while start < batches.count {
            let end = min(batches.count, start + Int.random(in: sizes, using: &generator))
            outcomes += try await store.ingest(Array(batches[start..<end]), receivedAt: time)
            start = end
        }
        return outcomes
    }

    /// Retention as in SQLite: a gap past the late-data horizon is settled into the rollups, old rollups go, and the
    /// rollups left read the same as SQLite's; raw samples go a day's partition at a time, once the whole day is past.
    @Test func retentionDropsWholeDaysOfRawSamplesAndMatchesSQLitesRollups() async throws {
        try await Self.sideBySide("prune") { server, postgres, sqlite in
            try await postgres.holdLease(holder: "test", ttl: 3_600_000)  // retention is the leader's job
            let maker = BatchMaker()
            let batches = [
                maker.batch(1, start: day, rx: [1, 2]), maker.batch(2, start: day + 86_400_000 + 5_000, rx: [3, 4]),
                maker.batch(3, start: day + 10 * 86_400_000, rx: [5, 6]),
            ]
            for store in [sqlite as any MetricStore, postgres] {
                _ = try await store.ingest(batches, receivedAt: day + 10 * 86_400_000)
            }
            let partitions =
                "SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'raw'"
            #expect(try server.psql("prune", partitions).trimmingCharacters(in: .whitespacesAndNewlines) == "3")
            // Two days later: the raw samples of the first two days are past 48 hours; the gap is settled.
            let now = day + 12 * 86_400_000 + 1_000
            var policy = RetentionPolicy.standard
            policy.lateData = 86_400_000
            let report = try await postgres.prune(policy, now: now, slice: 100)
            let sqliteReport = try await sqlite.prune(policy, now: now, slice: 100)
            #expect(report.rawChunks == 2 && report.settledGaps == sqliteReport.settledGaps && report.settledGaps > 0)
            #expect(try server.psql("prune", partitions).trimmingCharacters(in: .whitespacesAndNewlines) == "1")
            let eth0 = try #require(try await postgres.series().first { $0.kind == .interface })
            #expect(try await postgres.samples(series: eth0.id, from: 0, to: .max).map(\.counters.values[0]) == [5, 6])
            // A month on, the minute buckets of the first days are gone in both.
            _ = try await postgres.prune(policy, now: day + 35 * 86_400_000, slice: 100)
            _ = try await sqlite.prune(policy, now: day + 35 * 86_400_000, slice: 100)
            let (fromPostgres, fromSQLite) = (try await Self.read(postgres), try await Self.read(sqlite))
            #expect(fromPostgres.buckets == fromSQLite.buckets)
            let hourly = try #require(fromPostgres.buckets.first { $0.key.hasPrefix("1h interface") }?.value)
            let minutes = try #require(fromPostgres.buckets.first { $0.key.hasPrefix("1m interface") }?.value)
            func start(_ text: String) -> Int64 { Int64(text.prefix { $0 != " " })! }
            #expect(hourly.map(start).min()! < day + 86_400_000)
            #expect(minutes.map(start).min()! >= day + 5 * 86_400_000)
            #expect(postgres.sizeOnDisk > 1_000_000)
        }
    }

    /// The leader lease: one holder at a time, taken by another only once expired, with a new fencing token; a
    /// leader whose lease was taken (frozen, cut off) has its leader-only writes refused and nothing of them kept.
    @Test func aStaleLeaderWritesNothing() async throws {
        try await Self.withTwoDaemons { first, second in
            let firstToken = try #require(try await first.holdLease(holder: "first", ttl: 1_000))
            #expect(try await second.holdLease(holder: "second", ttl: 1_000) == nil)
            #expect(try await first.holdLease(holder: "first", ttl: 1_000) == firstToken)
            let event = AlertEvent(
                rule: "Busy", fingerprint: "f", series: 1, status: .firing, at: 1_000, value: 1, labels: [:],
                annotations: [:], startsAt: 1_000, endsAt: nil, chart: nil)
            #expect(try await first.saveAlerts(AlertUpdate(events: [event])).count == 1)
            // A store that never held the lease writes nothing of the leader's.
            await #expect(throws: StoreError.self) { try await second.saveAlerts(AlertUpdate(events: [event])) }
            await #expect(throws: StoreError.self) { try await second.markBillIntervals(before: 300_000) }

            // The first is frozen past its lease: the second takes it, with a new token.
            try await Task.sleep(for: .milliseconds(1_200))
            let secondToken = try #require(try await second.holdLease(holder: "second", ttl: 60_000))
            #expect(secondToken > firstToken)
            // The first wakes up with its stale token: refused, nothing kept, and it cannot renew.
            do {
                _ = try await first.saveAlerts(AlertUpdate(events: [event]))
                Issue.record("a stale leader's write was kept")
            } catch StoreError.fenced(let why) {
                #expect(why.contains("leader lease"))
            }
            await #expect(throws: StoreError.self) { try await first.prune(.standard, now: day, slice: 100) }
            await #expect(throws: StoreError.self) { try await first.raiseForwardMark(to: day) }
            #expect(try await first.holdLease(holder: "first", ttl: 1_000) == nil)
            #expect(try await second.alertEvents(from: 0, to: .max).count == 1)
            #expect(try await second.saveAlerts(AlertUpdate(events: [event])).count == 1)
            // A leader that stops gives the lease up at once.
            try await second.releaseLease(holder: "second")
            #expect(try await first.holdLease(holder: "first", ttl: 1_000) == secondToken + 1)
            #expect(try await first.lease().holder == "first")
        }
    }

    /// `netpulse` opens the daemon's database to read: it creates nothing there, and an empty database is told
    /// plainly.
    @Test func aReaderOfAnEmptyDatabaseCreatesNothingAndIsToldWhatToDo() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let location = try PostgresLocation(url: server.createDatabase("empty"))
        do {
            _ = try await PostgresStore(location: location, access: .reader)
            Issue.record("a reader opened an empty database")
        } catch {
            #expect("\(error)".contains("holds no Netpulse store yet"), "\(error)")
        }
        let tables = try server.psql("empty", "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        let owner = try await PostgresStore(location: location)
        owner.shutdown()
        let reader = try await PostgresStore(location: location, access: .reader)
        #expect(try await reader.totals().batches == 0)
        reader.shutdown()
    }

    /// A write transaction left idle longer than its limit (a daemon frozen mid-commit) is ended by the server, so
    /// the rows it locked are free again, and none of it is kept: its later statements fail rather than run on a new
    /// connection outside it (before, the session reconnected silently and ran them one by one). The session
    /// reconnects for the next transaction.
    @Test func aWriteTransactionLeftIdleIsEndedByTheServer() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let pool = PostgresPool(
            location: try PostgresLocation(url: server.createDatabase("idle")), logger: Logger(label: "test"),
            maximum: 1)
        defer { pool.close() }
        await #expect(throws: (any Error).self) {
            try await pool.transaction { session in
                try await session.limitIdle(300)
                try await session.execute("CREATE TABLE held (id bigint)")
                try await Task.sleep(for: .milliseconds(800))
                try await session.execute("SELECT 1")
            }
        }
        try await pool.withConnection { session in try await session.execute("SELECT 1") }
        #expect(try server.psql("idle", "SELECT to_regclass('held') IS NULL").contains("t"))
    }

    @Test func aBadURLOrAnUnreachableServerIsToldPlainly() async throws {
        #expect(throws: StoreError.self) { try PostgresLocation(url: "mysql://x@localhost/db") }
        #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://localhost/db") }
        #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://user@localhost/") }
        let location = try PostgresLocation(url: "postgresql://netpulse:secret@127.0.0.1:1/netpulse")
        #expect(location.description == "postgresql://netpulse@127.0.0.1:1/netpulse")
        do {
            _ = try await PostgresStore(location: location)
            Issue.record("a store on a closed port opened")
        } catch {
            let text = "\(error)"
            #expect(text.contains("127.0.0.1:1") && !text.contains("secret"), "\(text)")
        }
        // libpq's TLS parameters, and nothing else.
        let base = "postgresql://netpulse@db:5432/fleet"
        let verified = try PostgresLocation(url: base + "?sslmode=verify-full&sslrootcert=/etc/netpulse/pg-ca.pem")
        #expect(verified.tls == PostgresTLS(mode: .verifyFull, rootCertificate: "/etc/netpulse/pg-ca.pem"))
        #expect(verified.description == base + "?sslmode=verify-full")
        #expect(try PostgresLocation(url: base).tls.mode == .prefer)
        for (bad, says) in [
            ("?sslmode=allow", "sslmode=allow is not one of disable, prefer, require, verify-ca, verify-full"),
            ("?ssl=true", "unknown parameter ssl"), ("?sslcert=/c.pem", "sslcert and sslkey go together"),
        ] {
            let error = #expect(throws: StoreError.self) { try PostgresLocation(url: base + bad) }
            #expect("\(error.map { "\($0)" } ?? "")".contains(says), "\(bad)")
        }
        let unreadable = try PostgresLocation(url: base + "?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem")
        let error = await #expect(throws: StoreError.self) { _ = try await PostgresStore(location: unreadable) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("cannot read /nonexistent/ca.pem (sslrootcert"))
    }

    /// Libpq's TLS parameters against a server that takes TLS connections only: with `verify-full` and the server's
    /// CA, every connection of the store is encrypted (the server says so in pg_stat_ssl) and ingest works; without
    /// TLS, with a CA that did not sign the server's certificate, or with `verify-full` to a name the certificate
    /// does not hold, the store refuses to start and says why; `verify-ca` does not check the name.
    @Test func theConnectionIsEncryptedAndTheServerChecked() async throws {
        let server = try PostgresServer.start(tls: true)
        defer { server.stop() }
        // The certificate names localhost, and no IP address.
        let url = try server.createDatabase("tls").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let ca = server.certificateAuthority
        let store = try await PostgresStore(
            location: PostgresLocation(url: url + "?sslmode=verify-full&sslrootcert=\(ca)"),
            idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        #expect(
            try await store.ingest([BatchMaker().batch(1, start: day, rx: [1, 2, 3])], receivedAt: day) == [.stored])
        #expect(try await store.totals().batches == 1)
        let connections = try server.psql(
            "tls",
            """
            SELECT count(*) FILTER (WHERE s.ssl) || ' of ' || count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a
                USING (pid) WHERE a.datname = 'tls' AND a.pid <> pg_backend_pid()
            """
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        store.shutdown()
        #expect(connections == "2 of 2")

        func refusal(_ url: String) async -> String {
            do {
                let store = try await PostgresStore(location: PostgresLocation(url: url), access: .reader)
                store.shutdown()
                return "opened"
            } catch {
                return "\(error)"
            }
        }
        #expect(await refusal(url + "?sslmode=disable").contains("no encryption"))
        let other = temporaryDirectory() + "/other-ca"
        try PostgresServer.makeCertificateAuthority(in: other)
        let untrusted = await refusal(url + "?sslmode=verify-ca&sslrootcert=\(other)/ca.pem")
        #expect(untrusted.contains("CERTIFICATE_VERIFY_FAILED"), "\(untrusted)")
        let byAddress = url.replacingOccurrences(of: "localhost", with: "127.0.0.1")
        #expect(await refusal(byAddress + "?sslmode=verify-ca&sslrootcert=\(ca)") == "opened")
        let misnamed = await refusal(byAddress + "?sslmode=verify-full&sslrootcert=\(ca)")
        #expect(misnamed.contains("failedToValidateHostname"), "\(misnamed)")
    }

    /// The TLS files are read again when they change on disk (docs/configuration.md: certificates renewed in place
    /// apply from the next connection), though a pool's client keeps the TLS context it was made with: the store's
    /// next call after a change connects with the files as they are now.
    @Test func tlsFilesChangedInPlaceApplyToTheNextConnection() async throws {
        let server = try PostgresServer.start(tls: true)
        defer { server.stop() }
        let url = try server.createDatabase("renewal").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let directory = temporaryDirectory()
        let root = directory + "/root.pem"
        let trusted = try String(contentsOfFile: server.certificateAuthority, encoding: .utf8)
        try trusted.write(toFile: root, atomically: true, encoding: .utf8)
        try PostgresServer.makeCertificateAuthority(in: directory + "/other")
        let other = try String(contentsOfFile: directory + "/other/ca.pem", encoding: .utf8)
        let store = try await PostgresStore(
            location: PostgresLocation(url: url + "?sslmode=verify-full&sslrootcert=\(root)"),
            idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        defer { store.shutdown() }
        #expect(try await store.totals().batches == 0)
        try other.write(toFile: root, atomically: true, encoding: .utf8)
        let error = await #expect(throws: (any Error).self) { try await store.totals() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("CERTIFICATE_VERIFY_FAILED"), "\(String(describing: error))")
        try trusted.write(toFile: root, atomically: true, encoding: .utf8)
        #expect(try await store.totals().batches == 0)
    }
}

extension IngestBatch {
    var firstCounter: UInt64 { sections[0].traffic[0][.rxBytes] }
    var lastCounter: UInt64 { sections[0].traffic[sections[0].traffic.count - 1][.rxBytes] }
}

/// Runs in a process of its own (`scripts/test.sh`): it bounds how long a call takes while the server is down, and
/// in the process of the whole suite, whose tests hold the cooperative threads in blocking waits, a call that fails
/// at once alone measured 11 to 15 s.
@Suite struct PostgresOutageTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    /// PostgreSQL stopped for a while: each call fails within seconds with the reason, as a connection opened for the
    /// call gives it (the pool alone would keep the call waiting while it retries), and once the server is back the
    /// next calls succeed at once, not after the pool's backoff, which has grown to seconds by then.
    @Test func aServerThatWentAwayIsToldPlainlyAndUsedAgainOnceBack() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let store = try await PostgresStore(location: PostgresLocation(url: server.createDatabase("outage")))
        defer { store.shutdown() }
        let maker = BatchMaker()
        #expect(try await store.ingest([maker.batch(1, start: day, rx: [1, 2, 3])], receivedAt: day) == [.stored])
        try server.halt()
        let outage = ContinuousClock.now
        while ContinuousClock.now - outage < .seconds(20) {
            let call = ContinuousClock.now
            let error = await #expect(throws: (any Error).self) { _ = try await store.totals() }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("cannot reach the server") && text.contains("/outage"), "\(text)")
            #expect(ContinuousClock.now - call < .seconds(5))
            try await Task.sleep(for: .seconds(2))
        }
        try server.resume()
        let back = ContinuousClock.now
        #expect(try await store.totals().batches == 1)
        #expect(
            try await store.ingest([maker.batch(2, start: day + 3_000, rx: [4, 5])], receivedAt: day + 3_000)
                == [.stored])
        #expect(ContinuousClock.now - back < .seconds(4), "\(ContinuousClock.now - back)")
    }
}
