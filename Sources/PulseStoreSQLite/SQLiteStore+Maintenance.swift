import Foundation
import GRDB
import PulseAnalytics
import PulseCore
import PulseStore

extension SQLiteStore {
    // MARK: Retention

    public func prune(_ policy: RetentionPolicy, now: Int64, slice: Int) async throws -> PruneReport {
        var report = PruneReport()
        // Gaps late data can no longer fill are spread into the rollups for good (levels past their retention
        // skipped), a few per transaction.
        while true {
            let settled = try await pool.writeWithoutTransaction { db in
                try self.writer.withLock { writer in
                    do {
                        var count = 0
                        try db.inTransaction(.immediate) {
                            count = try InlineAsync.run {
                                try await writer.settleGaps(
                                    endedBefore: now - policy.lateData, policy: policy, now: now,
                                    limit: max(1, slice / 100), in: SQLiteIngestTransaction(db: db))
                            }
                            return .commit
                        }
                        self.committed(writer)
                        return count
                    } catch {
                        writer.reset()
                        throw error
                    }
                }
            }
            report.settledGaps += settled
            if settled < max(1, slice / 100) { break }
        }
        // Raw chunks by time, through their index, a slice per transaction.
        while true {
            let deleted = try await pool.write { db in
                try db.execute(
                    sql: "DELETE FROM raw WHERE id IN (SELECT id FROM raw WHERE last_ts < ? LIMIT ?)",
                    arguments: [now - policy.raw, slice])
                return db.changesCount
            }
            report.rawChunks += deleted
            dataChanged()
            if deleted < slice { break }
        }
        // Rollups per series (a range of the primary key each), a few hundred series per transaction.
        let ids = try await pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM series ORDER BY id") }
        let levels = try await self.levels()
        for level in levels {
            guard let keep = policy.keeps(level) else { continue }
            let table = BucketColumns.table(level)
            let cutoff = now - keep
            let finest = level == settings.levels.min()
            for part in stride(from: 0, to: ids.count, by: max(1, slice / 20)) {
                let chosen = Array(ids[part..<min(part + max(1, slice / 20), ids.count)])
                report.buckets += try await pool.write { db in
                    // Held recent buckets before the cutoff go in every transaction that deletes their rows, on the
                    // writer's queue: a reading of them into memory (also on it) between two of these is trimmed
                    // by the next, so memory never holds a row the file no longer has.
                    if finest { self.recent.advance(to: cutoff) }
                    var deleted = 0
                    for id in chosen {
                        try db.cachedStatement(sql: "DELETE FROM \(table) WHERE series_id = ? AND start < ?")
                            .execute(arguments: [id, cutoff])
                        deleted += db.changesCount
                    }
                    return deleted
                }
                dataChanged()
            }
        }
        // Instant and unplaced steps late data could still split, once it no longer can (`late_data`): a batch landing
        // in one later counts as already counted, as in a settled gap. The days of unplaced totals go with the
        // coarsest level's retention, which keeps the totals they sit beside.
        while true {
            let deleted = try await pool.write { db in
                try db.execute(
                    sql: """
                        DELETE FROM gap WHERE (series_id, prev_order, prev_tick) IN (
                            SELECT series_id, prev_order, prev_tick FROM gap WHERE virtual = 0 AND to_ts < ? LIMIT ?)
                        """, arguments: [now - policy.lateData, slice])
                return db.changesCount
            }
            dataChanged()
            if deleted < slice { break }
        }
        if let coarsest = levels.max(), let keep = policy.keeps(coarsest) {
            _ = try await pool.write { db in
                try db.execute(sql: "DELETE FROM unplaced WHERE day < ?", arguments: [now - keep])
            }
            dataChanged()
        }
        // Anomalies are kept as long as the finest rollups that would show them.
        let anomalyCutoff = now - (levels.first.flatMap { policy.keeps($0) } ?? policy.raw)
        _ = try await pool.write { db in
            try db.execute(sql: "DELETE FROM anomaly WHERE ts < ?", arguments: [anomalyCutoff])
        }
        return report
    }

    // MARK: Upgrade from Netpulse 0.1

    /// Counts the raw chunks of a 0.1 store into the rollups, one logical interface per transaction, then drops the
    /// 0.1 tables. Idempotent across crashes: an interface whose chunks were counted has had them deleted.
    ///
    /// 0.1 batches had no order, interval or heartbeat: chunks are taken in time order, the interval of each is its
    /// median sample spacing (1 s when it has one sample), the heartbeat the 0.1 default (60 s), the link speed the
    /// last one recorded before each sample; kinds are unknown.
    func backfillVersion1() throws {
        guard try pool.read({ db in try db.tableExists("chunk_v1") }) else { return }
        let pairs = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT DISTINCT agent_id, interface FROM series_v1 ORDER BY agent_id, interface")
        }
        for pair in pairs {
            let agent: Int64 = pair[0]
            let name = InterfaceName(bytes: Array(pair[1] as Data))
            try pool.writeWithoutTransaction { db in
                try writer.withLock { writer in
                    do {
                        try db.inTransaction(.immediate) {
                            try InlineAsync.run { try await writer.backfill(agent: agent, interface: name, in: db) }
                            return .commit
                        }
                    } catch {
                        writer.reset()
                        throw error
                    }
                }
            }
        }
        try pool.write { db in
            try db.execute(
                sql: "DROP TABLE chunk_v1; DROP TABLE link_state_v1; DROP TABLE series_v1; DROP TABLE batch_v1")
        }
    }
}

extension StoreWriter {
    /// Counts one 0.1 logical interface's chunks (see ``SQLiteStore/backfillVersion1()``).
    mutating func backfill(agent agentID: Int64, interface name: InterfaceName, in db: Database) async throws {
        let transaction = SQLiteIngestTransaction(db: db)
        let revision = try await begin(in: transaction)
        guard
            let agentRow = try Row.fetchOne(
                db, sql: "SELECT name, hostname, version, labels, last_seen FROM agent WHERE id = ?",
                arguments: [agentID])
        else { return }
        let agent = AgentRow(
            id: agentID,
            identity: AgentIdentity(
                name: agentRow[0], hostname: agentRow[1], version: agentRow[2], labels: LabelText.decode(agentRow[3])),
            lastSeen: agentRow[4], memberships: [])
        let seriesIDs = try Int64.fetchAll(
            db, sql: "SELECT id FROM series_v1 WHERE agent_id = ? AND interface = ?",
            arguments: [agentID, Data(name.bytes)])
        let speeds = try Row.fetchAll(
            db,
            sql: """
                SELECT ts, COALESCE(speed_mbps, 0) FROM link_state_v1
                WHERE series_id IN (\(SQLiteStore.placeholders(seriesIDs.count))) ORDER BY ts
                """, arguments: StatementArguments(seriesIDs)
        ).map { (time: $0[0] as Int64, speed: UInt32(clamping: $0[1] as Int64)) }
        let chunks = try Row.fetchAll(
            db,
            sql: """
                SELECT c.id, c.data, s.boot_id, s.ifindex, s.width, s.first_seen FROM chunk_v1 c
                JOIN series_v1 s ON s.id = c.series_id
                WHERE s.agent_id = ? AND s.interface = ? ORDER BY c.first_ts, c.id
                """, arguments: [agentID, Data(name.bytes)])
        let series = try await seriesID(
            .interface, agent: agentID, name: name.bytes, at: chunks.first.map { $0[5] } ?? 0, in: transaction)
        var order: Int64 = 0
        var speedIndex = 0
        var speed: UInt32 = 0
        for row in chunks {
            let chunk = try SeriesChunk.decode(Array(row[1] as Data))
            let width = CounterWidth(rawValue: UInt8(truncatingIfNeeded: row[4] as Int64)) ?? .bits64
            let epoch = try await epochID(
                CounterEpoch(
                    bootID: BootIDBytes.bootID(Array(row[2] as Data)),
                    ifindex: UInt32(truncatingIfNeeded: row[3] as Int64),
                    width: width), in: transaction)
            order = max(order + 1, chunk.timestamps[0])
            let spacings = zip(chunk.timestamps, chunk.timestamps.dropFirst()).map { $1 - $0 }.sorted()
            let interval = spacings.isEmpty ? 1_000 : max(1, spacings[spacings.count / 2])
            var samples = [StepSample]()
            for (index, time) in chunk.timestamps.enumerated() {
                while speedIndex < speeds.count, speeds[speedIndex].time <= time {
                    speed = speeds[speedIndex].speed
                    speedIndex += 1
                }
                samples.append(
                    StepSample(
                        order: order, tick: Int32(index), time: time, epoch: epoch, width: width,
                        counters: Traffic(rolledUpFrom: chunk.values, offset: index * Counter.count),
                        interval: interval, heartbeat: 60_000, speed: speed, received: time))
            }
            var raw = RawBatch()
            raw.append(series: series, epoch: epoch, firstTick: 0, chunk: Array(row[1] as Data))
            try transaction.insertRaw(
                raw, agent: agentID, order: order, shift: 0, interval: interval, heartbeat: 60_000,
                from: chunk.timestamps[0], to: chunk.timestamps[chunk.timestamps.count - 1])
            try await place(samples, series: series, name: name, agent: agent, in: transaction)
        }
        try await writeStates(in: transaction)
        try await writeDeltas(revision: revision, billed: false, in: transaction)
        if !unplaced.isEmpty { try transaction.writeUnplaced(unplaced, revision: revision) }
        try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'revision'", arguments: [revision])
        self.revision = revision
        try db.execute(
            sql: "DELETE FROM chunk_v1 WHERE series_id IN (\(SQLiteStore.placeholders(seriesIDs.count)))",
            arguments: StatementArguments(seriesIDs))
    }
}
