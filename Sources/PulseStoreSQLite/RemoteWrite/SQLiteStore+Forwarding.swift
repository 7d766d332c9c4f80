import GRDB
import GRDBSQLite
import PulseAnalytics
import PulseStore

/// Remote write's state in the store (`docs/remote-write.md`): what each interface series has sent, the forward
/// cursor and mark, and late changes to forwarded buckets (`forward_change`, written by ``StoreWriter``).
extension SQLiteStore {
    public func raiseForwardMark(to time: Int64) async throws {
        try await pool.write { db in try Self.raiseForwardMark(to: time, in: db) }
    }

    /// Moves the forward mark (``ChangeTracker/forwardMark``) up to `time`, never down.
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
        _ body: @escaping @Sendable (any ForwardSnapshot) async throws -> Result
    ) async throws -> Result {
        let (levels, finest) = try settings.forwardedLevels()
        return try await pool.read { db in
            let snapshot = StoreForwardSnapshot(
                reader: SQLiteSnapshotReader(db: db, revision: try SQLiteStore.meta("revision", db)),
                levels: levels, level: finest, cursor: try SQLiteStore.meta("forward_cursor", db))
            return try InlineAsync.run { try await body(snapshot) }
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
                in: "forward_change", columns: ForwardUpdate.changeColumns, update.settledChanges, db)
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'forward_cursor'", arguments: [update.cursor])
            try Self.raiseForwardMark(to: update.cursor, in: db)
        }
    }
}
