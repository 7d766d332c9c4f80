import Foundation
import GRDB
import GRDBSQLite
import PulseAnalytics
import PulseCore
import PulseStore

/// ``StoreWriter``'s rows in SQLite, inside a transaction GRDB runs on its writer connection. SQLite takes one
/// writer at a time (an immediate transaction holds the write lock), so ``lockRevision()`` is a plain read.
struct SQLiteIngestTransaction: IngestTransaction {
    let db: Database

    func lockRevision() throws -> Int64 { try meta("revision") }

    /// A SQLite store has one writer (its daemon's), so the revision never moves under it; should it, everything
    /// cached is read again.
    func changes(after revision: Int64) throws -> StoreWriter.SharedChanges? { nil }

    func meta(_ key: String) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) ?? 0
    }

    func advanceTotals(revision: Int64, batches: Int64, values: Int64, unplacedSteps: Int64) throws {
        try db.run(
            sql: """
                UPDATE meta SET value = CASE key WHEN 'revision' THEN ? WHEN 'batches' THEN value + ?
                    ELSE value + ? END WHERE key IN ('revision', 'batches', 'values')
                """, arguments: [revision, batches, values])
        if unplacedSteps != 0 {
            try db.run(
                sql: """
                    INSERT INTO meta (key, value) VALUES ('unplaced_steps', ?)
                    ON CONFLICT (key) DO UPDATE SET value = value + excluded.value
                    """, arguments: [unplacedSteps])
        }
    }

    // MARK: Agents and memberships

    func upsertAgent(_ identity: AgentIdentity, at now: Int64) throws -> (id: Int64, labels: Labels) {
        try db.run(
            sql: """
                INSERT INTO agent (name, hostname, version, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, version = excluded.version,
                    last_seen = excluded.last_seen
                """,
            arguments: [identity.name, identity.hostname, identity.version, now, now])
        let row = try Row.fetchOne(db, sql: "SELECT id, labels FROM agent WHERE name = ?", arguments: [identity.name])!
        return (row[0], LabelText.decode(row[1]))
    }

    func touchAgent(id: Int64, hostname: String, version: String, at now: Int64) throws {
        try db.run(
            sql: "UPDATE agent SET hostname = ?, version = ?, last_seen = ? WHERE id = ?",
            arguments: [hostname, version, now, id])
    }

    func agent(named name: String) throws -> (id: Int64, identity: AgentIdentity, lastSeen: Int64)? {
        try Row.fetchOne(
            db, sql: "SELECT id, hostname, version, labels, last_seen FROM agent WHERE name = ?", arguments: [name]
        ).map { row in
            (
                row[0],
                AgentIdentity(name: name, hostname: row[1], version: row[2], labels: LabelText.decode(row[3])),
                row[4]
            )
        }
    }

    func memberships(agent id: Int64, name: String) throws -> [Membership] {
        try Row.fetchAll(
            db, sql: "SELECT key, value, from_ts, to_ts FROM membership WHERE agent_id = ? ORDER BY from_ts",
            arguments: [id]
        ).map { Membership(agent: name, group: GroupKey(key: $0[0], value: $0[1]), from: $0[2], to: $0[3]) }
    }

    func endMembership(agent: Int64, _ membership: Membership, at time: Int64) throws {
        try db.run(
            sql: "UPDATE membership SET to_ts = ? WHERE agent_id = ? AND key = ? AND value = ? AND from_ts = ?",
            arguments: [time, agent, membership.group.key, membership.group.value, membership.from])
    }

    func beginMembership(agent: Int64, group: GroupKey, at time: Int64) throws {
        try db.run(
            sql: "INSERT OR REPLACE INTO membership (agent_id, key, value, from_ts, to_ts) VALUES (?, ?, ?, ?, NULL)",
            arguments: [agent, group.key, group.value, time])
    }

    func setLabels(agent: Int64, _ labels: Labels) throws {
        try db.run(sql: "UPDATE agent SET labels = ? WHERE id = ?", arguments: [LabelText.encode(labels), agent])
    }

    // MARK: Deduplication

    func streamID(agent: Int64, stream: UInt64) throws -> Int64 {
        try db.run(
            sql: "INSERT INTO stream (agent_id, stream) VALUES (?, ?) ON CONFLICT DO NOTHING",
            arguments: [agent, Int64(bitPattern: stream)])
        return try Int64.fetchOne(
            db, sql: "SELECT id FROM stream WHERE agent_id = ? AND stream = ?",
            arguments: [agent, Int64(bitPattern: stream)])!
    }

    func ranges(stream: Int64) throws -> [ClosedRange<UInt64>] {
        try Row.fetchAll(
            db, sql: "SELECT first, last FROM stream_range WHERE stream_id = ? ORDER BY first", arguments: [stream]
        ).map { UInt64(bitPattern: $0[0] as Int64)...UInt64(bitPattern: $0[1] as Int64) }
    }

    func insertRange(stream: Int64, _ range: ClosedRange<UInt64>) throws {
        try db.run(
            sql: "INSERT INTO stream_range (stream_id, first, last) VALUES (?, ?, ?)",
            arguments: [stream, Int64(bitPattern: range.lowerBound), Int64(bitPattern: range.upperBound)])
    }

    func updateRange(stream: Int64, first: UInt64, to range: ClosedRange<UInt64>) throws {
        try db.run(
            sql: "UPDATE stream_range SET first = ?, last = ? WHERE stream_id = ? AND first = ?",
            arguments: [
                Int64(bitPattern: range.lowerBound), Int64(bitPattern: range.upperBound), stream,
                Int64(bitPattern: first),
            ])
    }

    func deleteRange(stream: Int64, first: UInt64) throws {
        try db.run(
            sql: "DELETE FROM stream_range WHERE stream_id = ? AND first = ?",
            arguments: [stream, Int64(bitPattern: first)])
    }

    func addDropped(stream: Int64, _ count: Int64) throws {
        try db.run(sql: "UPDATE stream SET dropped = dropped + ? WHERE id = ?", arguments: [count, stream])
    }

    // MARK: Series

    func seriesID(_ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64) throws -> (
        id: Int64, created: Bool
    ) {
        try db.run(
            sql: """
                INSERT INTO series (kind, agent_id, name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """, arguments: [kind.rawValue, agent, Data(name), now, now])
        let created = db.changesCount > 0
        let id = try Int64.fetchOne(
            db, sql: "SELECT id FROM series WHERE kind = ? AND agent_id = ? AND name = ?",
            arguments: [kind.rawValue, agent, Data(name)])!
        return (id, created)
    }

    func epochID(_ epoch: CounterEpoch) throws -> Int64 {
        let arguments: StatementArguments = [
            Data(BootIDBytes.bytes(epoch.bootID)), Int64(epoch.ifindex), Int64(epoch.width.rawValue),
        ]
        try db.run(
            sql: "INSERT INTO epoch (boot_id, ifindex, width) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            arguments: arguments)
        return try Int64.fetchOne(
            db, sql: "SELECT id FROM epoch WHERE boot_id = ? AND ifindex = ? AND width = ?", arguments: arguments)!
    }

    func facts(series: Int64) throws -> LinkState? {
        try Row.fetchOne(
            db, sql: "SELECT speed_mbps, operstate, carrier, mtu, link_kind, relation FROM series WHERE id = ?",
            arguments: [series]
        ).map { row in StoreWriter.linkState((0..<6).map { row[$0] as Int64 }) }
    }

    func setFacts(series: Int64, _ state: LinkState, at time: Int64) throws {
        let values = LinkColumns.values(state)
        try db.run(
            sql: """
                UPDATE series SET speed_mbps = ?, operstate = ?, carrier = ?, mtu = ?, link_kind = ?, relation = ?
                WHERE id = ?
                """, arguments: StatementArguments(values + [series]))
        try db.run(
            sql: """
                INSERT OR REPLACE INTO link_state (series_id, ts, speed_mbps, operstate, carrier, mtu, link_kind,
                    relation) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: StatementArguments([series, time] + values))
    }

    func insertRaw(
        _ raw: RawBatch, agent: Int64, order: Int64, shift: Int64, interval: Int64, heartbeat: Int64, from: Int64,
        to: Int64
    ) throws {
        try db.run(
            sql: """
                INSERT INTO raw (agent_id, ord, shift, interval, heartbeat, first_ts, last_ts, data)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [agent, order, shift, interval, heartbeat, from, to, Data(raw.bytes)])
    }

    // MARK: Counter order

    func seriesState(_ series: Int64) throws -> StoreWriter.SeriesState? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT first, last FROM series_state WHERE series_id = ?", arguments: [series])
        else { return nil }
        return StoreWriter.SeriesState(
            first: try SampleCoding.decode(Array(row[0] as Data)), last: try SampleCoding.decode(Array(row[1] as Data)))
    }

    func writeStates(_ states: [(series: Int64, state: StoreWriter.SeriesState)]) throws {
        let statement = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO series_state (series_id, first, last) VALUES (?, ?, ?)")
        for (series, state) in states {
            try statement.execute(arguments: [
                series, Data(SampleCoding.encode(state.first)), Data(SampleCoding.encode(state.last)),
            ])
        }
    }

    func gap(series: Int64, before position: SamplePosition) throws -> StoreWriter.Gap? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT prev, next, scopes, virtual, step, from_ts FROM gap
                    WHERE series_id = ? AND (prev_order < ? OR (prev_order = ? AND prev_tick < ?))
                    ORDER BY prev_order DESC, prev_tick DESC LIMIT 1
                    """,
                arguments: [series, position.order, position.order, position.tick])
        else { return nil }
        return try StoreWriter.Gap(
            previous: Array(row[0] as Data), next: Array(row[1] as Data), scopes: Array(row[2] as Data),
            isVirtual: row[3] as Bool, step: Array(row[4] as Data), from: row[5] as Int64)
    }

    func deleteGap(series: Int64, previous: SamplePosition) throws {
        try db.run(
            sql: "DELETE FROM gap WHERE series_id = ? AND prev_order = ? AND prev_tick = ?",
            arguments: [series, previous.order, previous.tick])
    }

    func saveGap(_ gap: StoreWriter.Gap, series: Int64, revision: Int64) throws {
        let (previous, next) = (gap.previous, gap.next)
        try db.run(
            sql: """
                INSERT OR REPLACE INTO gap (series_id, prev_order, prev_tick, next_order, next_tick, prev, next,
                    scopes, step, virtual, from_ts, to_ts, revision)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                series, previous.order, previous.tick, next.order, next.tick, Data(SampleCoding.encode(previous)),
                Data(SampleCoding.encode(next)), Data(SampleCoding.encode(ids: gap.scopes, parts: gap.parts)),
                Data(SampleCoding.encode(gap.step)), gap.isVirtual, gap.span.from, gap.span.to, revision,
            ])
    }

    func virtualGaps(endedBefore cutoff: Int64, limit: Int) throws -> [(series: Int64, gap: StoreWriter.Gap)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT series_id, prev, next, scopes, step, from_ts FROM gap WHERE virtual = 1 AND to_ts < ? LIMIT ?
                """,
            arguments: [cutoff, limit]
        ).map { row in
            (
                row[0],
                try StoreWriter.Gap(
                    previous: Array(row[1] as Data), next: Array(row[2] as Data), scopes: Array(row[3] as Data),
                    isVirtual: true, step: Array(row[4] as Data), from: row[5] as Int64)
            )
        }
    }

    // MARK: The commit's changes

    func writeBuckets(_ deltas: [StoreWriter.BucketKey: BucketValues], levels: [RollupLevel], revision: Int64) throws {
        var statements = [Statement]()
        for level in levels {
            let table = BucketColumns.table(level)
            let columns = BucketColumns.all
            let updates = columns.map { column in
                switch column {
                case "peak_rx", "peak_tx", "speed_mbps": "\(column) = max(\(column), excluded.\(column))"
                case "revision": "revision = excluded.revision"
                default: "\(column) = \(column) + excluded.\(column)"
                }
            }
            statements.append(
                try db.cachedStatement(
                    sql: """
                        INSERT INTO \(table) (series_id, start, \(columns.joined(separator: ", ")))
                        VALUES (?, ?, \(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                        ON CONFLICT (series_id, start) DO UPDATE SET \(updates.joined(separator: ", "))
                        """))
        }
        var arguments = [Int64](repeating: 0, count: 2 + BucketColumns.all.count)
        for (key, values) in deltas {
            StoreWriter.bucketArguments(
                values, series: key.series, start: key.start, revision: revision, into: &arguments)
            try arguments.withUnsafeBufferPointer { try db.run(statements[key.level], integers: $0) }
        }
    }

    func writeChanges(
        bill: [StoreWriter.ChangeKey: StoreWriter.Change], forward: [StoreWriter.ChangeKey: StoreWriter.Change],
        revision: Int64
    ) throws {
        for (key, change) in bill {
            try db.run(
                sql: """
                    INSERT INTO bill_change (series_id, start, rx, tx, covered, unknown, measured, flagged, revision)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (series_id, start) DO UPDATE SET rx = rx + excluded.rx, tx = tx + excluded.tx,
                        covered = covered + excluded.covered, unknown = unknown + excluded.unknown,
                        measured = measured + excluded.measured, flagged = flagged + excluded.flagged,
                        revision = excluded.revision
                    """,
                arguments: [
                    key.series, key.start, change.rx, change.tx, change.covered, change.unknown, change.measured,
                    change.flagged, revision,
                ])
        }
        for (key, change) in forward {
            try db.run(
                sql: """
                    INSERT INTO forward_change (series_id, start, rx, tx, unknown, revision) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (series_id, start) DO UPDATE SET rx = rx + excluded.rx, tx = tx + excluded.tx,
                        unknown = unknown + excluded.unknown, revision = excluded.revision
                    """, arguments: [key.series, key.start, change.rx, change.tx, change.unknown, revision])
        }
    }

    func writeUnplaced(_ changes: [StoreWriter.UnplacedKey: UnplacedTotals], revision: Int64) throws {
        let columns = TrafficCounter.allCases.map(\.name)
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO unplaced (series_id, day, \(columns.joined(separator: ", ")), steps, revision)
                VALUES (?, ?, \(Array(repeating: "?", count: columns.count).joined(separator: ", ")), ?, ?)
                ON CONFLICT (series_id, day) DO UPDATE SET
                    \(columns.map { "\($0) = \($0) + excluded.\($0)" }.joined(separator: ", ")),
                    steps = steps + excluded.steps, revision = excluded.revision
                """)
        var arguments = [Int64](repeating: 0, count: 12)
        for (key, totals) in changes where !totals.isEmpty {
            arguments[0] = key.series
            arguments[1] = key.day
            for lane in 0..<8 { arguments[2 + lane] = totals.traffic[lane] }
            arguments[10] = totals.steps
            arguments[11] = revision
            try arguments.withUnsafeBufferPointer { try db.run(statement, integers: $0) }
        }
    }

    func insertAnomaly(_ anomaly: Anomaly, revision: Int64) throws {
        try db.run(
            sql: "INSERT INTO anomaly (series_id, ts, kind, detail, revision) VALUES (?, ?, ?, ?, ?)",
            arguments: [anomaly.series, anomaly.timestamp, anomaly.kind, anomaly.detail, revision])
    }
}

extension Database {
    /// Runs one statement compiled once per connection: ingest runs the same few statements thousands of times a
    /// second, and compiling (parsing, authorizing) them each time cost more than running them.
    func run(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// Steps `statement` (arguments already set), calling `body` with the SQLite statement on each row, for
    /// reads of many integer rows that would otherwise build a `Row` of boxed values each.
    func forEachRow(of statement: Statement, _ body: (SQLiteStatement) throws -> Void) throws {
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)),
                    sql: statement.sql)
            }
            try body(handle)
        }
    }

    /// Runs a cached statement with only integer arguments, bound straight to SQLite: the bucket upserts, the
    /// hottest statement of ingest, skip building `StatementArguments` (boxed values) for every row.
    func run(_ statement: Statement, integers: UnsafeBufferPointer<Int64>) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (index, value) in integers.enumerated() { sqlite3_bind_int64(handle, Int32(index + 1), value) }
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)),
                sql: statement.sql)
        }
    }
}
