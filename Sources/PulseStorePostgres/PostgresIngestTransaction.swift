import Foundation
import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseCore
import PulseStore

/// ``StoreWriter``'s rows in PostgreSQL, inside one transaction of the writer's connection (``PostgresStore/writerTransaction(limitIdle:_:)``).
///
/// Several daemons may write at once. Their ingest transactions take turns at the revision row
/// (``lockRevision()``: `SELECT … FOR UPDATE`, held until commit), so each commit sees every earlier one whole: the
/// sequences already stored (deduplication), and the first and last counter of every series it advances (counter
/// continuity), which no other writer can change until it commits. Revisions so follow commit order, as readers
/// that page by revision need. The many rows of a commit (buckets, states, change records) go in one statement per
/// table, as arrays (`unnest`), not one round trip per row.
///
/// The rows writers cache (series states, sequence ranges, link facts, agents' labels) are stamped with the revision
/// of the commit that changes them, so a writer whose turn comes after others' reads back only what they changed
/// (``changes(after:)``): one query per table, however large the fleet.
final class PostgresIngestTransaction: IngestTransaction {
    let session: PostgresSession
    /// What the store's writer knows across its transactions (dropped when one fails).
    let memory: WriterMemory
    private var metaValues: [String: Int64] = [:]
    /// The revision this transaction's changes are stamped with: the one after the revision it holds. A commit that
    /// stamps rows always moves the revision there (see ``StoreWriter/ingest(_:receivedAt:in:)``).
    private var stamp: Int64 = 0

    init(session: PostgresSession, memory: WriterMemory) {
        self.session = session
        self.memory = memory
    }

    /// Touched only by the store's writer (``PostgresStore/WriterSide``).
    final class WriterMemory: @unchecked Sendable {
        /// Raw partitions known to exist (see ``PostgresSchema/rawPartition(holding:)``).
        var partitions = Set<String>()
        /// The commits of writers that stamp no rows (`netpulsed` from before revision stamps, still running during a
        /// rolling upgrade): `meta.revision` − `meta.stamped`, which every stamping commit raises both of. While it
        /// stays as this writer last saw it, every commit since was stamped and ``changes(after:)`` can be trusted.
        var unstamped: Int64?

        func forget() {
            partitions.removeAll()
            unstamped = nil
        }
    }

    func lockRevision() async throws -> Int64 {
        let revision = try await session.query("SELECT value FROM meta WHERE key = 'revision' FOR UPDATE")
        for row in try await session.query("SELECT key, value FROM meta") {
            let (key, value) = try row.decode((String, Int64).self)
            metaValues[key] = value
        }
        let current = try revision.first.map { try $0.decode(Int64.self) } ?? 0
        stamp = current + 1
        if memory.unstamped == nil { memory.unstamped = current - (metaValues["stamped"] ?? 0) }
        return current
    }

    func changes(after revision: Int64) async throws -> StoreWriter.SharedChanges? {
        // A writer that stamps nothing committed since this one last looked: its changes cannot be told apart.
        let unstamped = (metaValues["revision"] ?? 0) - (metaValues["stamped"] ?? 0)
        guard unstamped == memory.unstamped else {
            memory.unstamped = unstamped
            return nil
        }
        var changes = StoreWriter.SharedChanges()
        for row in try await session.query(
            "SELECT series_id, first, last FROM series_state WHERE revision > \(revision)")
        {
            let (series, first, last) = try row.decode((Int64, ByteBuffer, ByteBuffer).self)
            changes.states[series] = StoreWriter.SeriesState(
                first: try SampleCoding.decode(Array(first.readableBytesView)),
                last: try SampleCoding.decode(Array(last.readableBytesView)))
        }
        for row in try await session.query(
            """
            SELECT id, speed_mbps, operstate, carrier, mtu, link_kind, relation FROM series
            WHERE revision > \(revision)
            """)
        {
            let (series, a, b, c, d, e, f) = try row.decode((Int64, Int64, Int64, Int64, Int64, Int64, Int64).self)
            changes.facts[series] = StoreWriter.linkState([a, b, c, d, e, f])
        }
        // A change to a stream's ranges stamps at least one of its ranges (a merge deletes one and stamps the other),
        // so every range of those streams is read.
        for row in try await session.query(
            """
            SELECT stream_id, first, last FROM stream_range WHERE stream_id IN
                (SELECT stream_id FROM stream_range WHERE revision > \(revision))
            ORDER BY stream_id, first
            """)
        {
            let (stream, first, last) = try row.decode((Int64, Int64, Int64).self)
            changes.ranges[stream, default: []].append(UInt64(bitPattern: first)...UInt64(bitPattern: last))
        }
        for row in try await session.query("SELECT id FROM agent WHERE revision > \(revision)") {
            changes.agents.insert(try row.decode(Int64.self))
        }
        return changes
    }

    func meta(_ key: String) async throws -> Int64 {
        if let value = metaValues[key] { return value }
        return try await session.query("SELECT value FROM meta WHERE key = \(key)").first.map {
            try $0.decode(Int64.self)
        }
            ?? 0
    }

    func advanceTotals(revision: Int64, batches: Int64, values: Int64, unplacedSteps: Int64) async throws {
        try await session.query(
            """
            UPDATE meta SET value = CASE key WHEN 'revision' THEN \(revision) WHEN 'stamped' THEN value + 1
                WHEN 'batches' THEN value + \(batches) ELSE value + \(values) END
            WHERE key IN ('revision', 'stamped', 'batches', 'values')
            """)
        if unplacedSteps != 0 {
            try await session.query(
                """
                INSERT INTO meta (key, value) VALUES ('unplaced_steps', \(unplacedSteps))
                ON CONFLICT (key) DO UPDATE SET value = meta.value + excluded.value
                """)
        }
    }

    // MARK: Agents and memberships

    func upsertAgent(_ identity: AgentIdentity, at now: Int64) async throws -> (id: Int64, labels: Labels) {
        let row = try await session.query(
            """
            INSERT INTO agent (name, hostname, version, first_seen, last_seen)
            VALUES (\(identity.name), \(identity.hostname), \(identity.version), \(now), \(now))
            ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, version = excluded.version,
                last_seen = excluded.last_seen
            RETURNING id, labels
            """
        ).single("the agent \(identity.name)")
        let (id, labels) = try row.decode((Int64, String).self)
        return (id, LabelText.decode(labels))
    }

    func touchAgent(id: Int64, hostname: String, version: String, at now: Int64) async throws {
        try await session.query(
            "UPDATE agent SET hostname = \(hostname), version = \(version), last_seen = \(now) WHERE id = \(id)")
    }

    func agent(named name: String) async throws -> (id: Int64, identity: AgentIdentity, lastSeen: Int64)? {
        try await session.query("SELECT id, hostname, version, labels, last_seen FROM agent WHERE name = \(name)").first
            .map {
                row in
                let (id, hostname, version, labels, lastSeen) = try row.decode(
                    (Int64, String, String, String, Int64).self)
                return (
                    id,
                    AgentIdentity(name: name, hostname: hostname, version: version, labels: LabelText.decode(labels)),
                    lastSeen
                )
            }
    }

    func memberships(agent id: Int64, name: String) async throws -> [Membership] {
        try await session.query(
            "SELECT key, value, from_ts, to_ts FROM membership WHERE agent_id = \(id) ORDER BY from_ts"
        ).map { row in
            let (key, value, from, to) = try row.decode((String, String, Int64, Int64?).self)
            return Membership(agent: name, group: GroupKey(key: key, value: value), from: from, to: to)
        }
    }

    func endMembership(agent: Int64, _ membership: Membership, at time: Int64) async throws {
        try await session.query(
            """
            UPDATE membership SET to_ts = \(time) WHERE agent_id = \(agent) AND key = \(membership.group.key)
                AND value = \(membership.group.value) AND from_ts = \(membership.from)
            """)
    }

    func beginMembership(agent: Int64, group: GroupKey, at time: Int64) async throws {
        try await session.query(
            """
            INSERT INTO membership (agent_id, key, value, from_ts, to_ts)
            VALUES (\(agent), \(group.key), \(group.value), \(time), NULL)
            ON CONFLICT (agent_id, key, value, from_ts) DO UPDATE SET to_ts = NULL
            """)
    }

    func setLabels(agent: Int64, _ labels: Labels) async throws {
        // Memberships change only with labels: the stamp covers both.
        try await session.query(
            "UPDATE agent SET labels = \(LabelText.encode(labels)), revision = \(stamp) WHERE id = \(agent)")
    }

    // MARK: Deduplication

    func streamID(agent: Int64, stream: UInt64) async throws -> Int64 {
        // DO UPDATE (a no-op) rather than DO NOTHING so RETURNING gives the id of a stream that exists.
        try await session.query(
            """
            INSERT INTO stream (agent_id, stream) VALUES (\(agent), \(Int64(bitPattern: stream)))
            ON CONFLICT (agent_id, stream) DO UPDATE SET stream = excluded.stream RETURNING id
            """
        ).single("a stream of the agent \(agent)").decode(Int64.self)
    }

    func ranges(stream: Int64) async throws -> [ClosedRange<UInt64>] {
        try await session.query("SELECT first, last FROM stream_range WHERE stream_id = \(stream) ORDER BY first").map {
            let (first, last) = try $0.decode((Int64, Int64).self)
            return UInt64(bitPattern: first)...UInt64(bitPattern: last)
        }
    }

    func insertRange(stream: Int64, _ range: ClosedRange<UInt64>) async throws {
        try await session.query(
            """
            INSERT INTO stream_range (stream_id, first, last, revision)
            VALUES (\(stream), \(Int64(bitPattern: range.lowerBound)), \(Int64(bitPattern: range.upperBound)),
                \(stamp))
            """)
    }

    func updateRange(stream: Int64, first: UInt64, to range: ClosedRange<UInt64>) async throws {
        try await session.query(
            """
            UPDATE stream_range SET first = \(Int64(bitPattern: range.lowerBound)),
                last = \(Int64(bitPattern: range.upperBound)), revision = \(stamp)
            WHERE stream_id = \(stream) AND first = \(Int64(bitPattern: first))
            """)
    }

    func deleteRange(stream: Int64, first: UInt64) async throws {
        try await session.query(
            "DELETE FROM stream_range WHERE stream_id = \(stream) AND first = \(Int64(bitPattern: first))")
    }

    func addDropped(stream: Int64, _ count: Int64) async throws {
        try await session.query("UPDATE stream SET dropped = dropped + \(count) WHERE id = \(stream)")
    }

    // MARK: Series

    func seriesID(_ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64) async throws -> (
        id: Int64, created: Bool
    ) {
        // A row this statement inserted has no deleting transaction yet (xmax 0); one it updated has this one's.
        try await session.query(
            """
            INSERT INTO series (kind, agent_id, name, first_seen, last_seen)
            VALUES (\(kind.rawValue), \(agent), \(ByteBuffer(bytes: name)), \(now), \(now))
            ON CONFLICT (kind, agent_id, name) DO UPDATE SET kind = excluded.kind RETURNING id, xmax = 0
            """
        ).single("a series of the agent \(agent)").decode((Int64, Bool).self)
    }

    func epochID(_ epoch: CounterEpoch) async throws -> Int64 {
        try await session.query(
            """
            INSERT INTO epoch (boot_id, ifindex, width)
            VALUES (\(ByteBuffer(bytes: BootIDBytes.bytes(epoch.bootID))), \(Int64(epoch.ifindex)),
                \(Int64(epoch.width.rawValue)))
            ON CONFLICT (boot_id, ifindex, width) DO UPDATE SET width = excluded.width RETURNING id
            """
        ).single("a counter epoch").decode(Int64.self)
    }

    func facts(series: Int64) async throws -> LinkState? {
        try await session.query(
            "SELECT speed_mbps, operstate, carrier, mtu, link_kind, relation FROM series WHERE id = \(series)"
        ).first.map { row in
            let columns = try row.decode((Int64, Int64, Int64, Int64, Int64, Int64).self)
            return StoreWriter.linkState([columns.0, columns.1, columns.2, columns.3, columns.4, columns.5])
        }
    }

    func setFacts(series: Int64, _ state: LinkState, at time: Int64) async throws {
        let v = LinkColumns.values(state)
        try await session.query(
            """
            UPDATE series SET speed_mbps = \(v[0]), operstate = \(v[1]), carrier = \(v[2]), mtu = \(v[3]),
                link_kind = \(v[4]), relation = \(v[5]), revision = \(stamp) WHERE id = \(series)
            """)
        try await session.query(
            """
            INSERT INTO link_state (series_id, ts, speed_mbps, operstate, carrier, mtu, link_kind, relation)
            VALUES (\(series), \(time), \(v[0]), \(v[1]), \(v[2]), \(v[3]), \(v[4]), \(v[5]))
            ON CONFLICT (series_id, ts) DO UPDATE SET speed_mbps = excluded.speed_mbps,
                operstate = excluded.operstate, carrier = excluded.carrier, mtu = excluded.mtu,
                link_kind = excluded.link_kind, relation = excluded.relation
            """)
    }

    func insertRaw(
        _ raw: RawBatch, agent: Int64, order: Int64, shift: Int64, interval: Int64, heartbeat: Int64, from: Int64,
        to: Int64
    ) async throws {
        let partition = PostgresSchema.rawPartition(holding: to)
        if !memory.partitions.contains(partition.name) {
            // Ingest transactions take turns (lockRevision), so two daemons never race to make one partition.
            try await session.execute(
                """
                CREATE TABLE IF NOT EXISTS \(partition.name) PARTITION OF raw
                FOR VALUES FROM (\(partition.from)) TO (\(partition.to))
                """)
            memory.partitions.insert(partition.name)
        }
        try await session.query(
            """
            INSERT INTO raw (agent_id, ord, shift, interval, heartbeat, first_ts, last_ts, data)
            VALUES (\(agent), \(order), \(shift), \(interval), \(heartbeat), \(from), \(to), \(ByteBuffer(bytes: raw.bytes)))
            """)
    }

    // MARK: Counter order

    func seriesState(_ series: Int64) async throws -> StoreWriter.SeriesState? {
        try await session.query("SELECT first, last FROM series_state WHERE series_id = \(series) FOR UPDATE").first.map
        {
            let (first, last) = try $0.decode((ByteBuffer, ByteBuffer).self)
            return StoreWriter.SeriesState(
                first: try SampleCoding.decode(Array(first.readableBytesView)),
                last: try SampleCoding.decode(Array(last.readableBytesView)))
        }
    }

    func writeStates(_ states: [(series: Int64, state: StoreWriter.SeriesState)]) async throws {
        guard !states.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(states.map(\.series))
        binds.append(states.map { ByteBuffer(bytes: SampleCoding.encode($0.state.first)) })
        binds.append(states.map { ByteBuffer(bytes: SampleCoding.encode($0.state.last)) })
        binds.append(stamp)
        try await session.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO series_state (series_id, first, last, revision)
                    SELECT *, $4::bigint FROM unnest($1::bigint[], $2::bytea[], $3::bytea[])
                    ON CONFLICT (series_id) DO UPDATE SET first = excluded.first, last = excluded.last,
                        revision = excluded.revision
                    """, binds: binds))
    }

    func gap(series: Int64, before position: SamplePosition) async throws -> StoreWriter.Gap? {
        try await session.query(
            """
            SELECT prev, next, scopes, virtual, step, from_ts FROM gap
            WHERE series_id = \(series) AND (prev_order < \(position.order)
                OR (prev_order = \(position.order) AND prev_tick < \(Int64(position.tick))))
            ORDER BY prev_order DESC, prev_tick DESC LIMIT 1
            """
        ).first.map { row in
            let (previous, next, scopes, isVirtual, step, from) = try row.decode(
                (ByteBuffer, ByteBuffer, ByteBuffer, Bool, ByteBuffer, Int64).self)
            return try StoreWriter.Gap(
                previous: Array(previous.readableBytesView), next: Array(next.readableBytesView),
                scopes: Array(scopes.readableBytesView), isVirtual: isVirtual, step: Array(step.readableBytesView),
                from: from)
        }
    }

    func deleteGap(series: Int64, previous: SamplePosition) async throws {
        try await session.query(
            """
            DELETE FROM gap WHERE series_id = \(series) AND prev_order = \(previous.order)
                AND prev_tick = \(Int64(previous.tick))
            """)
    }

    func saveGap(_ gap: StoreWriter.Gap, series: Int64, revision: Int64) async throws {
        let (previous, next) = (gap.previous, gap.next)
        try await session.query(
            """
            INSERT INTO gap (series_id, prev_order, prev_tick, next_order, next_tick, prev, next, scopes, step,
                virtual, from_ts, to_ts, revision)
            VALUES (\(series), \(previous.order), \(Int64(previous.tick)), \(next.order), \(Int64(next.tick)),
                \(ByteBuffer(bytes: SampleCoding.encode(previous))), \(ByteBuffer(bytes: SampleCoding.encode(next))),
                \(ByteBuffer(bytes: SampleCoding.encode(ids: gap.scopes, parts: gap.parts))),
                \(ByteBuffer(bytes: SampleCoding.encode(gap.step))), \(gap.isVirtual), \(gap.span.from),
                \(gap.span.to), \(revision))
            ON CONFLICT (series_id, prev_order, prev_tick) DO UPDATE SET next_order = excluded.next_order,
                next_tick = excluded.next_tick, prev = excluded.prev, next = excluded.next, scopes = excluded.scopes,
                step = excluded.step, virtual = excluded.virtual, from_ts = excluded.from_ts, to_ts = excluded.to_ts,
                revision = excluded.revision
            """)
    }

    func virtualGaps(endedBefore cutoff: Int64, limit: Int) async throws -> [(series: Int64, gap: StoreWriter.Gap)] {
        try await session.query(
            """
            SELECT series_id, prev, next, scopes, step, from_ts FROM gap WHERE virtual AND to_ts < \(cutoff)
            LIMIT \(Int64(limit))
            """
        ).map { row in
            let (series, previous, next, scopes, step, from) = try row.decode(
                (Int64, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer, Int64).self)
            return (
                series,
                try StoreWriter.Gap(
                    previous: Array(previous.readableBytesView), next: Array(next.readableBytesView),
                    scopes: Array(scopes.readableBytesView), isVirtual: true, step: Array(step.readableBytesView),
                    from: from)
            )
        }
    }

    // MARK: The commit's changes

    func writeBuckets(_ deltas: [StoreWriter.BucketKey: BucketValues], levels: [RollupLevel], revision: Int64)
        async throws
    {
        let columns = BucketColumns.all
        var rows = [[Int64]](repeating: [], count: levels.count)
        var arguments = [Int64](repeating: 0, count: 2 + columns.count)
        for (key, values) in deltas {
            StoreWriter.bucketArguments(
                values, series: key.series, start: key.start, revision: revision, into: &arguments)
            rows[key.level] += arguments
        }
        let width = arguments.count
        for (index, level) in levels.enumerated() where !rows[index].isEmpty {
            let table = BucketColumns.table(level)
            let flat = rows[index]
            var binds = PostgresBindings(capacity: width)
            for column in 0..<width {
                binds.append(stride(from: column, to: flat.count, by: width).map { flat[$0] })
            }
            let updates = columns.map { column in
                switch column {
                case "peak_rx", "peak_tx", "speed_mbps": "\(column) = GREATEST(\(table).\(column), excluded.\(column))"
                case "revision": "revision = excluded.revision"
                default: "\(column) = \(table).\(column) + excluded.\(column)"
                }
            }
            try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(table) (series_id, start, \(columns.joined(separator: ", ")))
                        SELECT * FROM unnest(\((1...width).map { "$\($0)::bigint[]" }.joined(separator: ", ")))
                        ON CONFLICT (series_id, start) DO UPDATE SET \(updates.joined(separator: ", "))
                        """, binds: binds))
        }
    }

    func writeChanges(
        bill: [StoreWriter.ChangeKey: StoreWriter.Change], forward: [StoreWriter.ChangeKey: StoreWriter.Change],
        revision: Int64
    ) async throws {
        for (table, changes) in [("bill_change", bill), ("forward_change", forward)] where !changes.isEmpty {
            let entries = Array(changes)
            var binds = PostgresBindings()
            binds.append(entries.map(\.key.series))
            binds.append(entries.map(\.key.start))
            binds.append(entries.map(\.value.rx))
            binds.append(entries.map(\.value.tx))
            binds.append(entries.map(\.value.unknown))
            // Billing also records covered, measured and flagged time (docs/windows.md, "Open and closed periods").
            let timed = table == "bill_change"
            if timed {
                binds.append(entries.map(\.value.covered))
                binds.append(entries.map(\.value.measured))
                binds.append(entries.map(\.value.flagged))
            }
            let times = timed ? ["covered", "measured", "flagged"] : []
            try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(table) (series_id, start, rx, tx, unknown\(times.map { ", " + $0 }.joined()), revision)
                        SELECT *, \(revision)::bigint FROM unnest($1::bigint[], $2::bigint[], $3::bigint[],
                            $4::bigint[], $5::bigint[]\(timed ? ", $6::bigint[], $7::bigint[], $8::bigint[]" : ""))
                        ON CONFLICT (series_id, start) DO UPDATE SET rx = \(table).rx + excluded.rx,
                            tx = \(table).tx + excluded.tx, unknown = \(table).unknown + excluded.unknown,
                            \(times.map { "\($0) = \(table).\($0) + excluded.\($0)," }.joined(separator: " "))
                            revision = excluded.revision
                        """, binds: binds))
        }
    }

    func writeUnplaced(_ changes: [StoreWriter.UnplacedKey: UnplacedTotals], revision: Int64) async throws {
        let entries = changes.filter { !$0.value.isEmpty }
        guard !entries.isEmpty else { return }
        let columns = TrafficCounter.allCases.map(\.name)
        var binds = PostgresBindings()
        binds.append(entries.map(\.key.series))
        binds.append(entries.map(\.key.day))
        for lane in 0..<8 { binds.append(entries.map { $0.value.traffic[lane] }) }
        binds.append(entries.map(\.value.steps))
        try await session.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO unplaced (series_id, day, \(columns.joined(separator: ", ")), steps, revision)
                    SELECT *, \(revision)::bigint FROM unnest(\((1...11).map { "$\($0)::bigint[]" }.joined(separator: ", ")))
                    ON CONFLICT (series_id, day) DO UPDATE SET
                        \(columns.map { "\($0) = unplaced.\($0) + excluded.\($0)" }.joined(separator: ", ")),
                        steps = unplaced.steps + excluded.steps, revision = excluded.revision
                    """, binds: binds))
    }

    func insertAnomaly(_ anomaly: Anomaly, revision: Int64) async throws {
        try await session.query(
            """
            INSERT INTO anomaly (series_id, ts, kind, detail, revision)
            VALUES (\(anomaly.series), \(anomaly.timestamp), \(anomaly.kind), \(anomaly.detail), \(revision))
            """)
    }
}
