import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseStore

/// Remote write in PostgreSQL: the same rows and passes as in SQLite (SQLiteStore+Forwarding.swift), the forward mark
/// moved as the bill mark is (PostgresStore+Bills.swift).
extension PostgresStore {
    public func raiseForwardMark(to time: Int64) async throws {
        try await leaderWrite { session in try await Self.raiseMark("forward_mark", to: time, session) }
    }

    /// Forgets remote write's state when it is turned off (see ``SQLiteStore/stopForwarding()``); the leader's job
    /// (fenced), as daemons of one database may differ in their `[remote_write]`.
    @discardableResult
    public func stopForwarding() async throws -> Bool {
        try await leaderWrite { session in
            try await session.execute(Self.lockRevision)
            guard try await PostgresSnapshotReader.meta(session)["forward_mark"] ?? 0 > 0 else { return false }
            try await session.execute("DELETE FROM forward_change")
            try await session.execute("DELETE FROM forward_state")
            try await session.execute("UPDATE meta SET value = 0 WHERE key IN ('forward_mark', 'forward_cursor')")
            return true
        }
    }

    public func withForwardSnapshot<Result: Sendable>(
        _ body: @escaping @Sendable (any ForwardSnapshot) async throws -> Result
    ) async throws -> Result {
        let (levels, finest) = try settings.forwardedLevels()
        return try await read { session in
            let meta = try await PostgresSnapshotReader.meta(session)
            return try await body(
                StoreForwardSnapshot(
                    reader: PostgresSnapshotReader(session: session, revision: meta["revision"] ?? 0), levels: levels,
                    level: finest, cursor: meta["forward_cursor"] ?? 0))
        }
    }

    public func saveForward(_ update: ForwardUpdate) async throws {
        try await leaderWrite { session in
            // The revision row is taken last (in raiseMark), just before COMMIT, as in saveBills.
            if !update.states.isEmpty {
                var binds = PostgresBindings()
                binds.append(update.states.map(\.series))
                binds.append(update.states.map(\.countedRx))
                binds.append(update.states.map(\.countedTx))
                binds.append(update.states.map(\.sentRx))
                binds.append(update.states.map(\.sentTx))
                try await session.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO forward_state (series_id, counted_rx, counted_tx, sent_rx, sent_tx)
                            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
                            ON CONFLICT (series_id) DO UPDATE SET counted_rx = excluded.counted_rx,
                                counted_tx = excluded.counted_tx, sent_rx = excluded.sent_rx, sent_tx = excluded.sent_tx
                            """, binds: binds))
            }
            try await Self.settleChanges(
                in: "forward_change", columns: ForwardUpdate.changeColumns, update.settledChanges, session)
            try await session.query("UPDATE meta SET value = \(update.cursor) WHERE key = 'forward_cursor'")
            try await Self.raiseMark("forward_mark", to: update.cursor, session)
        }
    }
}
