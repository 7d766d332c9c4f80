import Foundation
import GRDB
import PulseAnalytics
import PulseCore

extension SQLiteStore {
    // MARK: Rollups

    public func buckets(level: RollupLevel, series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [Bucket]] {
        try await pool.read { db in
            let table = try self.table(for: level, in: db)
            let columns = SQLiteSchema.bucketColumns.joined(separator: ", ")
            var result = [Int64: [Bucket]]()
            for ids in Self.slices(series) {
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT series_id, start, \(columns) FROM \(table)
                        WHERE series_id IN (\(Self.placeholders(ids.count))) AND start >= ? AND start < ?
                        ORDER BY series_id, start
                        """,
                    arguments: StatementArguments(ids + [from, to]))
                while let row = try rows.next() {
                    let (values, revision) = Self.bucketValues(row, from: 2)
                    result[row[0], default: []].append(
                        Bucket(level: level, start: row[1], values: values, revision: revision))
                }
            }
            // Virtual gap steps, spread now (see SQLiteSchema): merged into the buckets they touch.
            var extra = [Int64: [Int64: (BucketValues, Int64)]]()
            try Self.spreadVirtualGaps(level: level, series: Set(series), from: from, to: to, in: db) {
                id, start, values, revision in
                var entry = extra[id]?[start] ?? (.empty, 0)
                entry.0.merge(values)
                entry.1 = max(entry.1, revision)
                extra[id, default: [:]][start] = entry
            }
            for (id, starts) in extra {
                var byStart = Dictionary(uniqueKeysWithValues: (result[id] ?? []).map { ($0.start, $0) })
                for (start, (values, revision)) in starts {
                    var bucket = byStart[start] ?? Bucket(level: level, start: start, values: .empty)
                    bucket.values.merge(values)
                    bucket.revision = max(bucket.revision, revision)
                    byStart[start] = bucket
                }
                result[id] = byStart.values.sorted { $0.start < $1.start }
            }
            return result
        }
    }

    /// Calls `add(series, start, values, revision)` for every bucket of `level` starting in `[from, to)` that a
    /// virtual gap step adds to, for the series in `series` (the gap's interface, and its scopes' sums).
    static func spreadVirtualGaps(
        level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64, in db: Database,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void
    ) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT series_id, prev, next, scopes, step, revision FROM gap
                WHERE virtual = 1 AND to_ts > ? AND from_ts < ?
                """,
            // A bucket starting before `to` reaches up to `to + width`.
            arguments: [from, to.addingReportingOverflow(level.width).overflow ? Int64.max : to + level.width])
        for row in rows {
            let owner: Int64 = row[0]
            let scopes = try SampleCoding.decodeIDs(Array(row[3] as Data))
            let wanted = ([owner] + scopes).filter(series.contains)
            guard !wanted.isEmpty else { continue }
            let previous = try SampleCoding.decode(Array(row[1] as Data))
            let next = try SampleCoding.decode(Array(row[2] as Data))
            let step = try SampleCoding.decodeStep(Array(row[4] as Data))
            let revision: Int64 = row[5]
            Spreader.spread(step, from: previous, to: next, level: level) { start, values in
                guard start >= from && start < to else { return }
                for id in wanted { add(id, start, id == owner ? values : values.sumsOnly, revision) }
            }
        }
    }

    public func sums(level: RollupLevel, series: [Int64]?, from: Int64, to: Int64) async throws -> [Int64: BucketValues]
    {
        try await pool.read { db in
            let table = try self.table(for: level, in: db)
            let ids = try series ?? Int64.fetchAll(db, sql: "SELECT id FROM series ORDER BY id")
            let aggregates: String = SQLiteSchema.bucketColumns.map { column -> String in
                switch column {
                case "peak_rx", "peak_tx", "speed_mbps", "revision": "MAX(\(column))"
                default: "SUM(\(column))"
                }
            }.joined(separator: ", ")
            var result = [Int64: BucketValues]()
            for slice in Self.slices(ids) {
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT series_id, \(aggregates) FROM \(table)
                        WHERE series_id IN (\(Self.placeholders(slice.count))) AND start >= ? AND start < ?
                        GROUP BY series_id
                        """,
                    arguments: StatementArguments(slice + [from, to]))
                while let row = try rows.next() {
                    result[row[0]] = Self.bucketValues(row, from: 1).values
                }
            }
            try Self.spreadVirtualGaps(level: level, series: Set(ids), from: from, to: to, in: db) { id, _, values, _ in
                result[id, default: .empty].merge(values)
            }
            return result
        }
    }

    func table(for level: RollupLevel, in db: Database) throws -> String {
        guard try storedLevels(db).contains(level) else {
            throw StoreError.unusable("the store keeps no \(level) rollups (levels: \(try storedLevels(db)))")
        }
        return SQLiteSchema.rollupTable(level)
    }

    /// A bucket's values from `row`, starting at column `first`, in ``SQLiteSchema/bucketColumns`` order.
    static func bucketValues(_ row: Row, from first: Int) -> (values: BucketValues, revision: Int64) {
        var values = BucketValues()
        for lane in 0..<8 { values.traffic[lane] = row[first + lane] }
        values.measuredMilliseconds = row[first + 8]
        values.interpolatedMilliseconds = row[first + 9]
        values.peakRx = UInt64(clamping: row[first + 10] as Int64)
        values.peakTx = UInt64(clamping: row[first + 11] as Int64)
        values.speedMbps = UInt32(clamping: row[first + 12] as Int64)
        for lane in 0..<5 { values.events[lane] = row[first + 13 + lane] }
        return (values, row[first + 18])
    }

    static func slices(_ ids: [Int64]) -> [[Int64]] {
        stride(from: 0, to: ids.count, by: 900).map { Array(ids[$0..<min($0 + 900, ids.count)]) }
    }

    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ",")
    }

    // MARK: Catalogue

    public func series() async throws -> [SeriesRecord] {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.kind, a.name, s.name, s.first_seen, s.speed_mbps, s.operstate, s.carrier, s.mtu,
                        s.link_kind, s.relation, st.last
                    FROM series s LEFT JOIN agent a ON a.id = s.agent_id
                    LEFT JOIN series_state st ON st.series_id = s.id
                    ORDER BY s.kind, a.name, s.name
                    """)
            return rows.compactMap { row -> SeriesRecord? in
                guard let kind = SeriesKind(rawValue: row[1]) else { return nil }
                let name = Array(row[3] as Data)
                var record = SeriesRecord(id: row[0], kind: kind, firstSeen: row[4], lastSeen: row[4])
                switch kind {
                case .interface:
                    record.agent = row[2]
                    record.interface = InterfaceName(bytes: name)
                    record.facts = StoreWriter.linkState(row, from: 5)
                    if let last = row[11] as Data?, let sample = try? SampleCoding.decode(Array(last)) {
                        record.lastSeen = sample.time
                    }
                case .host: record.agent = row[2]
                case .group: record.group = GroupKey(parsing: String(decoding: name, as: UTF8.self))
                case .fleet: break
                }
                return record
            }
        }
    }

    public func agents() async throws -> [AgentRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.name, a.hostname, a.version, a.labels, a.first_seen, a.last_seen,
                        (SELECT COALESCE(SUM(dropped), 0) FROM stream WHERE agent_id = a.id)
                    FROM agent a ORDER BY a.name
                    """
            ).map {
                AgentRecord(
                    name: $0[0], hostname: $0[1], version: $0[2], labels: LabelText.decode($0[3]), firstSeen: $0[4],
                    lastSeen: $0[5], droppedBatches: $0[6])
            }
        }
    }

    public func memberships() async throws -> [Membership] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.name, m.key, m.value, m.from_ts, m.to_ts FROM membership m JOIN agent a ON a.id = m.agent_id
                    ORDER BY a.name, m.from_ts, m.key, m.value
                    """
            ).map { Membership(agent: $0[0], group: GroupKey(key: $0[1], value: $0[2]), from: $0[3], to: $0[4]) }
        }
    }

    public func samples(series: Int64, from: Int64, to: Int64) async throws -> [RawSample] {
        try await pool.read { db in
            guard
                let agent = try Int64.fetchOne(db, sql: "SELECT agent_id FROM series WHERE id = ?", arguments: [series])
            else { return [] }
            var epochs = [Int64: CounterEpoch]()
            for row in try Row.fetchAll(db, sql: "SELECT id, boot_id, ifindex, width FROM epoch") {
                epochs[row[0]] = CounterEpoch(
                    bootID: BootIDBytes.bootID(Array(row[1] as Data)),
                    ifindex: UInt32(truncatingIfNeeded: row[2] as Int64),
                    width: CounterWidth(rawValue: UInt8(truncatingIfNeeded: row[3] as Int64)) ?? .bits64)
            }
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT ord, shift, data FROM raw WHERE agent_id = ? AND last_ts >= ? AND first_ts < ? ORDER BY ord
                    """,
                arguments: [agent, from, to])
            var samples = [RawSample]()
            while let row = try rows.next() {
                let shift: Int64 = row[1]
                for section in try RawBatch.sections(Array(row[2] as Data)) where section.series == series {
                    guard let epoch = epochs[section.epoch] else {
                        throw StoreError.damaged("raw samples of an unknown epoch")
                    }
                    let chunk = try SeriesChunk.decode(section.chunk)
                    for (index, timestamp) in chunk.timestamps.enumerated()
                    where (from..<to).contains(timestamp + shift) {
                        let start = index * Counter.count
                        samples.append(
                            RawSample(
                                order: row[0], timestamp: timestamp + shift, epoch: epoch,
                                counters: CounterValues(Array(chunk.values[start..<start + Counter.count]))!))
                    }
                }
            }
            return samples
        }
    }

    public func anomalies(since: Int64) async throws -> [Anomaly] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT series_id, ts, kind, detail FROM anomaly WHERE ts >= ? ORDER BY ts, id",
                arguments: [since]
            ).map { Anomaly(series: $0[0], timestamp: $0[1], kind: $0[2], detail: $0[3]) }
        }
    }

    public func totals() async throws -> IngestTotals {
        try await pool.read { db in
            IngestTotals(
                batches: try StoreWriter.meta("batches", db), values: try StoreWriter.meta("values", db),
                revision: try StoreWriter.meta("revision", db))
        }
    }
}
