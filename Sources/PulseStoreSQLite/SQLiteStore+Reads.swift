import Foundation
import GRDB
import GRDBSQLite
import PulseAnalytics
import PulseCore
import PulseStore

extension SQLiteStore {
    // MARK: Rollups

    public func reduceBuckets<Result: Sendable>(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ reduce: @escaping @Sendable (Int64, [Bucket]) -> Result?
    ) async throws -> [Int64: Result] {
        let fields = fields.isEmpty ? .revision : fields  // a column to select
        return try await inParts(Array(Set(series)).sorted()) { db, part in
            try Self.readBuckets(
                level: level, series: part, from: from, to: to, fields: fields, table: self.table(for: level, in: db),
                in: db, reduce)
        }
    }

    /// The buckets of `series` (sorted, distinct) at `level` in `[from, to)`, with virtual gap steps spread in,
    /// handed to `reduce` one series at a time in series order; what it returns is kept (nil: nothing).
    static func readBuckets<Result>(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields, table: String,
        in db: Database, _ reduce: (Int64, [Bucket]) throws -> Result?
    ) throws -> [Int64: Result] {
        let wanted = Set(series)
        // Virtual gap steps, spread now (see SQLiteSchema): merged into the buckets they touch.
        var spread = VirtualGaps.Spread()
        try spreadVirtualGaps(level: level, series: wanted, from: from, to: to, in: db) { spread.add($0, $1, $2, $3) }
        var result = [Int64: Result]()
        func finish(_ id: Int64, _ list: [Bucket]) throws {
            if let value = try reduce(id, spread.merge(id, into: list, level: level)) { result[id] = value }
        }
        // Sorted slices, each read in series order: every series arrives whole, one after the other.
        for ids in slices(series) {
            let statement = try db.makeStatement(
                sql: """
                    SELECT series_id, start, \(selectList(fields)) FROM \(table)
                    WHERE series_id IN (\(placeholders(ids.count))) AND start >= ? AND start < ?
                    ORDER BY series_id, start
                    """)
            try statement.setArguments(StatementArguments(ids + [from, to]))
            var current: Int64?
            var list = [Bucket]()
            try db.forEachRow(of: statement) { row in
                let id = sqlite3_column_int64(row, 0)
                if id != current {
                    if let current { try finish(current, list) }
                    current = id
                    list.removeAll(keepingCapacity: true)
                }
                let (values, revision) = bucketValues(row, from: 2, fields: fields)
                list.append(
                    Bucket(level: level, start: sqlite3_column_int64(row, 1), values: values, revision: revision))
            }
            if let current { try finish(current, list) }
        }
        // Series whose only buckets there are spread gaps.
        for id in spread.remaining { try finish(id, []) }
        return result
    }

    static func selectList(_ fields: BucketFields) -> String { BucketColumns.selectList(fields) }

    /// Calls `add(series, start, values, revision)` for every bucket of `level` starting in `[from, to)` that a
    /// virtual gap step adds to, for the series in `series` (the gap's interface, and its scopes' sums).
    static func spreadVirtualGaps(
        level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64, in db: Database,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void
    ) throws {
        // A bucket starting before `to` reaches up to `to + width`.
        let end = VirtualGaps.end(level: level, to: to)
        let columns = "series_id, prev, next, scopes, step, revision"
        func spread(_ rows: RowCursor) throws {
            while let row = try rows.next() {
                try VirtualGaps.spread(
                    VirtualGaps.Row(
                        owner: row[0], previous: Array(row[1] as Data), next: Array(row[2] as Data),
                        scopes: Array(row[3] as Data), step: Array(row[4] as Data), revision: row[5]),
                    level: level, series: series, from: from, to: to, add)
            }
        }
        if let owners = try gapOwners(of: series, from: from, in: db) {
            // Interfaces and hosts only, and fewer of them than gaps overlap the time (a bill rebuilt, a host's page,
            // a part of a paced read after a fleet's streams restarted): only their interfaces' gaps, found by the
            // gap table's key, not every gap of the whole fleet that overlaps the time.
            for slice in slices(owners) {
                try spread(
                    Row.fetchCursor(
                        db,
                        sql: """
                            SELECT \(columns) FROM gap
                            WHERE series_id IN (\(placeholders(slice.count))) AND virtual = 1 AND +to_ts > ? AND from_ts < ?
                            """, arguments: StatementArguments(slice + [from, end])))
            }
        } else {
            try spread(
                Row.fetchCursor(
                    db, sql: "SELECT \(columns) FROM gap WHERE virtual = 1 AND to_ts > ? AND from_ts < ?",
                    arguments: [from, end]))
        }
    }

    /// The interfaces whose gaps can add to `series` when they are better looked up by the gap table's key
    /// (``VirtualGaps/ownersByKey(of:overlapping:rows:interfaces:)``); nil when every gap overlapping the time is to
    /// be read instead.
    static func gapOwners(of series: Set<Int64>, from: Int64, in db: Database) throws -> [Int64]? {
        try InlineAsync.run {
            try await VirtualGaps.ownersByKey(
                of: series,
                overlapping: { limit in
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM (SELECT 1 FROM gap WHERE virtual = 1 AND to_ts > ? LIMIT ?)",
                        arguments: [from, limit + 1]) ?? 0
                },
                rows: { ids in
                    try slices(ids).flatMap { slice in
                        try Row.fetchAll(
                            db, sql: "SELECT id, kind, agent_id FROM series WHERE id IN (\(placeholders(slice.count)))",
                            arguments: StatementArguments(slice)
                        ).map { row in (id: row[0], kind: SeriesKind(rawValue: row[1]), agent: row[2]) }
                    }
                },
                interfaces: { agents in
                    try slices(agents).flatMap { slice in
                        try Int64.fetchAll(
                            db,
                            sql:
                                "SELECT id FROM series WHERE kind = \(SeriesKind.interface.rawValue) AND agent_id IN (\(placeholders(slice.count)))",
                            arguments: StatementArguments(slice))
                    }
                })
        }
    }

    public func sums(
        level: RollupLevel, series: [Int64]?, from: Int64, to: Int64, fields: BucketFields = .all
    ) async throws -> [Int64: BucketValues] {
        if let series, let held = try await heldSums(level: level, series: series, from: from, to: to, fields: fields) {
            return held
        }
        let fields = fields.isEmpty ? .revision : fields  // a column to select
        var all = series ?? []
        if series == nil { all = try await pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM series") } }
        return try await inParts(all) { db, ids in
            let table = try self.table(for: level, in: db)
            let aggregates = BucketColumns.aggregateList(fields)
            var result = [Int64: BucketValues]()
            for slice in Self.slices(ids) {
                let statement = try db.makeStatement(
                    sql: """
                        SELECT series_id, \(aggregates) FROM \(table)
                        WHERE series_id IN (\(Self.placeholders(slice.count))) AND start >= ? AND start < ?
                        GROUP BY series_id
                        """)
                try statement.setArguments(StatementArguments(slice + [from, to]))
                try db.forEachRow(of: statement) { row in
                    result[sqlite3_column_int64(row, 0)] = Self.bucketValues(row, from: 1, fields: fields).values
                }
            }
            try Self.spreadVirtualGaps(level: level, series: Set(ids), from: from, to: to, in: db) { id, _, values, _ in
                result[id, default: .empty].merge(values)
            }
            return result
        }
    }

    /// ``sums(level:series:from:to:fields:)`` from the recent buckets, when they hold `[from, to)`: their sums, and
    /// virtual gaps spread in from a read at the same revision (a commit between the two and it is tried again; nil
    /// after three, and the rows are read instead).
    func heldSums(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields
    ) async throws -> [Int64: BucketValues]? {
        for _ in 0..<3 {
            guard let (sums, revision) = recent.sums(level: level, series: series, from: from, to: to, fields: fields)
            else { return nil }
            var held = consume sums
            // The gaps' steps are collected apart and added after: `held` stays the only reference to its buffer,
            // so 10,000 sums are not copied for the few a gap touches.
            let spread = try await pool.read { db -> [Int64: BucketValues]? in
                guard try Self.meta("revision", db) == revision else { return nil }
                var spread = [Int64: BucketValues]()
                try Self.spreadVirtualGaps(level: level, series: Set(series), from: from, to: to, in: db) {
                    id, _, values, _ in spread[id, default: .empty].merge(values)
                }
                return spread
            }
            guard let spread else { continue }
            for (id, values) in spread { held[id, default: .empty].merge(values) }
            return held
        }
        return nil
    }

    /// Keeps every series' buckets of the finest level in memory (``RecentBuckets``) from the earliest `from` its
    /// holders ask for: read from the file the first time, or when that is earlier than what is held, inside the
    /// writer's lock (one read of every series, about 0.2 s for 10,000 interfaces and a few buckets each, during
    /// which nothing commits); then fed by each commit. A later `from` only lets go of older buckets. When no holder
    /// asks any more, all are let go. Readers of another process hold none.
    public func keepRecentBuckets(from: Int64?, for holder: RecentBucketHolder) async throws {
        guard isOwner, let level = settings.levels.min() else { return }
        // Decided under the holders' lock, so that one holder's later `from` never lets go of what another's
        // earlier one has just had read.
        let wanted = recentHolders.withLock { holders -> Int64? in
            holders[holder] = from
            guard let earliest = holders.values.min() else {
                recent.forget()
                return nil
            }
            guard !recent.covers(level: level, from: earliest) else {
                recent.advance(to: earliest)
                return nil
            }
            return earliest
        }
        guard wanted != nil else { return }
        try await pool.writeWithoutTransaction { db in
            try self.writer.withLock { _ in
                // Another holder's call may have read them meanwhile, or asked for earlier ones.
                guard let from = self.recentHolders.withLock({ $0.values.min() }),
                    !self.recent.covers(level: level, from: from)
                else { return }
                try db.inTransaction(.deferred) {
                    let revision = try Self.meta("revision", db)
                    let table = try self.table(for: level, in: db)
                    let ids = try Int64.fetchAll(db, sql: "SELECT id FROM series ORDER BY id")
                    var held = [Int64: [RecentBuckets.Entry]]()
                    for slice in Self.slices(ids) {
                        let statement = try db.makeStatement(
                            sql: """
                                SELECT series_id, start, \(Self.selectList(RecentBuckets.valueFields)) FROM \(table)
                                WHERE series_id IN (\(Self.placeholders(slice.count))) AND start >= ?
                                ORDER BY series_id, start
                                """)
                        try statement.setArguments(StatementArguments(slice + [from]))
                        try db.forEachRow(of: statement) { row in
                            let values = Self.bucketValues(row, from: 2, fields: RecentBuckets.valueFields).values
                            held[sqlite3_column_int64(row, 0), default: []].append(
                                RecentBuckets.Entry(start: sqlite3_column_int64(row, 1), values: values))
                        }
                    }
                    self.recent.install(level: level, from: from, revision: revision, series: held)
                    return .commit
                }
            }
        }
    }

    public func holdsRecentBuckets(level: RollupLevel, from: Int64) -> Bool {
        isOwner && recent.covers(level: level, from: from)
    }

    /// Runs `read` on parts of `ids`, each on its own reader connection at the same time, and merges what they
    /// return: a query over 10,000 series steps through a million rollup rows, and a second core halves that.
    /// Small sets stay whole. A paced task's reads (``ReadPacing``) go in small parts, one at a time, pausing
    /// before each.
    func inParts<Value: Sendable>(
        _ ids: [Int64], _ read: @escaping @Sendable (Database, [Int64]) throws -> [Int64: Value]
    ) async throws -> [Int64: Value] {
        if let pacing = ReadPacing.current, !ids.isEmpty {
            var merged = [Int64: Value]()
            for start in stride(from: 0, to: ids.count, by: pacing.partSize) {
                try await pacing.pause()
                let part = Array(ids[start..<min(ids.count, start + pacing.partSize)])
                merged.merge(try await pool.read { db in try read(db, part) }) { first, _ in first }
            }
            return merged
        }
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, 4, max(1, ids.count / 1_000))
        guard parts > 1 else { return try await pool.read { db in try read(db, ids) } }
        let size = (ids.count + parts - 1) / parts
        return try await withThrowingTaskGroup(of: [Int64: Value].self) { group in
            for start in stride(from: 0, to: ids.count, by: size) {
                let part = Array(ids[start..<min(ids.count, start + size)])
                group.addTask { try await self.pool.read { db in try read(db, part) } }
            }
            var merged = [Int64: Value]()
            for try await result in group { merged.merge(result) { first, _ in first } }
            return merged
        }
    }

    func table(for level: RollupLevel, in db: Database) throws -> String {
        guard try storedLevels(db).contains(level) else {
            throw StoreError.unusable("the store keeps no \(level) rollups (levels: \(try storedLevels(db)))")
        }
        return BucketColumns.table(level)
    }

    /// A bucket's values from the current row of `statement`, starting at column `first`: the columns of `fields`
    /// in ``SQLiteSchema/bucketColumns`` order (see ``selectList(_:)``), the others left zero. Read straight from
    /// SQLite, as every query reads thousands of them.
    static func bucketValues(
        _ row: SQLiteStatement, from first: Int32, fields: BucketFields = .all
    ) -> (values: BucketValues, revision: Int64) {
        var columns = SQLiteColumns(row: row, index: first)
        return BucketColumns.values(fields: fields, from: &columns)
    }

    /// The columns of the row a statement stands on, from `index` on.
    struct SQLiteColumns: BucketColumnSource {
        let row: SQLiteStatement
        var index: Int32

        mutating func next() -> Int64 {
            defer { index += 1 }
            return sqlite3_column_int64(row, index)
        }
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
            let statement = try db.makeStatement(
                sql: """
                    SELECT s.id, s.kind, a.name, s.name, s.first_seen, s.speed_mbps, s.operstate, s.carrier, s.mtu,
                        s.link_kind, s.relation, st.last
                    FROM series s LEFT JOIN agent a ON a.id = s.agent_id
                    LEFT JOIN series_state st ON st.series_id = s.id
                    ORDER BY s.kind, a.name, s.name
                    """)
            // Read straight from SQLite: every query starts by loading the catalogue, 10,000 rows for a fleet of
            // 10,000 interfaces.
            var records = [SeriesRecord]()
            try db.forEachRow(of: statement) { row in
                func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(row, index) }
                func bytes(_ index: Int32) -> [UInt8]? {
                    guard sqlite3_column_type(row, index) != SQLITE_NULL else { return nil }
                    let count = Int(sqlite3_column_bytes(row, index))
                    guard count > 0, let base = sqlite3_column_blob(row, index) else { return [] }
                    return Array(UnsafeRawBufferPointer(start: base, count: count))
                }
                guard
                    let record = CatalogueRows.series(
                        id: integer(0), kind: integer(1), agent: bytes(2), name: bytes(3) ?? [], firstSeen: integer(4),
                        facts: (5...10).map(integer), lastState: bytes(11))
                else { return }
                records.append(record)
            }
            return records
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
                try RawBatch.appendSamples(
                    of: series, from: Array(row[2] as Data), order: row[0], shift: row[1], in: from..<to,
                    epochs: epochs, to: &samples)
            }
            return samples
        }
    }

    public func anomalies(since: Int64) async throws -> [Anomaly] {
        try await rows("SELECT \(Anomaly.columns) FROM anomaly WHERE ts >= ? ORDER BY ts, id", [since]) { row in
            var columns = Columns(row)
            return try Anomaly(row: &columns)
        }
    }

    public func totals() async throws -> IngestTotals {
        try await pool.read { db in try IngestTotals { try SQLiteStore.meta($0, db) } }
    }

    public func unplacedDays(series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [UnplacedDay]] {
        guard !series.isEmpty else { return [:] }
        return try await pool.read { db in
            var result = [Int64: [UnplacedDay]]()
            // The store a daemon made before unplaced totals existed has none (the CLI does not migrate).
            guard try db.tableExists("unplaced") else { return result }
            for part in stride(from: 0, to: series.count, by: 500) {
                let ids = Array(series[part..<min(part + 500, series.count)])
                let statement = try db.makeStatement(
                    sql: """
                        SELECT series_id, day, \(TrafficCounter.allCases.map(\.name).joined(separator: ", ")), steps
                        FROM unplaced WHERE series_id IN (\(SQLiteStore.placeholders(ids.count))) AND day >= ? AND day < ?
                        ORDER BY series_id, day
                        """)
                statement.arguments = StatementArguments(ids + [from, to])
                try db.forEachRow(of: statement) { row in
                    var totals = UnplacedTotals()
                    for lane in 0..<8 { totals.traffic[lane] = sqlite3_column_int64(row, Int32(2 + lane)) }
                    totals.steps = sqlite3_column_int64(row, 10)
                    guard !totals.isEmpty else { return }
                    result[sqlite3_column_int64(row, 0), default: []].append(
                        UnplacedDay(day: sqlite3_column_int64(row, 1), totals: totals))
                }
            }
            return result
        }
    }
}
