import GRDB
import GRDBSQLite
import PulseAnalytics

/// Remote write's state in the store (`docs/remote-write.md`): what each interface series has sent, the forward
/// cursor and mark, and late changes to forwarded buckets (`forward_change`, written by ``StoreWriter``).
extension SQLiteStore {
    public func raiseForwardMark(to time: Int64) async throws {
        try await pool.write { db in try Self.raiseForwardMark(to: time, in: db) }
    }

    /// Moves the forward mark (``StoreWriter/forwardMark``) up to `time`, never down.
    static func raiseForwardMark(to time: Int64, in db: Database) throws {
        try db.execute(sql: "UPDATE meta SET value = max(value, ?) WHERE key = 'forward_mark'", arguments: [time])
    }

    /// Forgets remote write's state when it is turned off, so that late data stops being recorded for it; when
    /// it is turned on again it starts afresh, each counter added up again from the rollups (and so still exact).
    /// Returns whether there was anything to forget.
    @discardableResult
    public func stopForwarding() throws -> Bool {
        try pool.write { db in
            guard try SQLiteStore.meta("forward_mark", db) > 0 else {
                return false
            }
            try db.execute(
                sql: """
                    DELETE FROM forward_change;
                    DELETE FROM forward_state;
                    UPDATE meta SET value = 0 WHERE key IN ('forward_mark', 'forward_cursor');
                    """)
            return true
        }
    }

    public func withForwardSnapshot<Result: Sendable>(
        _ body: @escaping @Sendable (any ForwardSnapshot) throws -> Result
    ) async throws -> Result {
        let levels = settings.levels.sorted()
        guard let finest = levels.first else { throw StoreError.unusable("the store keeps no rollups") }
        return try await pool.read { db in
            try body(
                SQLiteForwardSnapshot(
                    db: db, levels: levels, level: finest, cursor: try SQLiteStore.meta("forward_cursor", db)))
        }
    }

    public func saveForward(_ update: ForwardUpdate) async throws {
        try await pool.write { db in
            let save = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO forward_state (series_id, counted_rx, counted_tx, sent_rx, sent_tx)
                    VALUES (?, ?, ?, ?, ?)
                    """)
            for state in update.states {
                try save.execute(arguments: [
                    state.series, state.countedRx, state.countedTx, state.sentRx, state.sentTx,
                ])
            }
            try Self.settleChanges(
                in: "forward_change", columns: ["rx", "tx", "unknown"],
                update.settled.map { ($0.series, $0.start, $0.revision, [$0.rx, $0.tx, Int64($0.unknown)]) }, db)
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'forward_cursor'", arguments: [update.cursor])
            try Self.raiseForwardMark(to: update.cursor, in: db)
        }
    }
}

/// A read transaction seen as a ``ForwardSnapshot``.
struct SQLiteForwardSnapshot: ForwardSnapshot {
    let db: Database
    /// The levels the store keeps current, finest first.
    let levels: [RollupLevel]
    let level: RollupLevel
    let cursor: Int64

    func states() throws -> [Int64: ForwardState] {
        var states = [Int64: ForwardState]()
        for row in try Row.fetchAll(
            db, sql: "SELECT series_id, counted_rx, counted_tx, sent_rx, sent_tx FROM forward_state")
        {
            let state = ForwardState(
                series: row[0], countedRx: row[1], countedTx: row[2], sentRx: row[3], sentTx: row[4])
            states[state.series] = state
        }
        return states
    }

    func changes(cursor: Int64, limit: Int) throws -> [ForwardChange] {
        let columns = "series_id, start, rx, tx, unknown, revision"
        let rows =
            try Row.fetchAll(
                db, sql: "SELECT \(columns) FROM forward_change WHERE start >= ?", arguments: [cursor])
            + Row.fetchAll(
                db, sql: "SELECT \(columns) FROM forward_change WHERE start < ? ORDER BY series_id, start LIMIT ?",
                arguments: [cursor, limit])
        return rows.map { row in
            ForwardChange(series: row[0], start: row[1], rx: row[2], tx: row[3], unknown: row[4], revision: row[5])
        }
    }

    func buckets(series: [Int64], from: Int64, to: Int64, _ body: (Int64, [Bucket]) throws -> Void) throws {
        let _: [Int64: Never] = try SQLiteStore.readBuckets(
            level: level, series: Array(Set(series)).sorted(), from: from, to: to, fields: [.bytes],
            table: SQLiteSchema.rollupTable(level), in: db
        ) { id, buckets in
            try body(id, buckets)
            return nil
        }
    }

    func total(series: Int64, before time: Int64) throws -> (rx: Int64, tx: Int64) {
        // Coarsest first: its whole buckets before `time`, then each finer level from where the coarser stopped.
        var rx: Int64 = 0
        var tx: Int64 = 0
        var from = Int64.min / 2
        for level in levels.reversed() {
            let to = level.bucketStart(time)
            guard to > from else { continue }
            try buckets(at: level, series: series, from: from, to: to) { bucket in
                rx += bucket.values.traffic[.rxBytes]
                tx += bucket.values.traffic[.txBytes]
            }
            from = to
        }
        return (rx, tx)
    }

    private func buckets(at level: RollupLevel, series: Int64, from: Int64, to: Int64, _ body: (Bucket) -> Void)
        throws
    {
        let _: [Int64: Never] = try SQLiteStore.readBuckets(
            level: level, series: [series], from: from, to: to, fields: [.bytes],
            table: SQLiteSchema.rollupTable(level), in: db
        ) { _, buckets in
            buckets.forEach(body)
            return nil
        }
    }
}
