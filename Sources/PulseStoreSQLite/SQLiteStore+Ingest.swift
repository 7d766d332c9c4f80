import GRDB
import PulseAnalytics
import PulseCore
import PulseStore

extension SQLiteStore {
    public func ingest(
        _ batches: [IngestBatch], receivedAt: Int64, willStore: (@Sendable (Int) -> Void)?
    ) async throws -> [IngestOutcome] {
        try await ingest(batches, receivedAt: receivedAt, journalThrough: nil, willStore: willStore)
    }

    /// Stores `batches` as ``ingest(_:receivedAt:willStore:)`` does and, in the same transaction, records that the
    /// daemon's journal (``IngestJournal``) is applied up to entry `journalThrough`: after a crash, exactly the
    /// entries after ``journalApplied()`` are still to apply.
    public func ingest(
        _ batches: [IngestBatch], receivedAt: Int64, journalThrough: Int64?,
        willStore: (@Sendable (Int) -> Void)? = nil
    ) async throws -> [IngestOutcome] {
        guard !batches.isEmpty || journalThrough != nil else { return [] }
        return try await pool.writeWithoutTransaction { db in
            try ThreadPriority.raised {
                // (A commit of the journal's position alone changed no bucket and made no revision.)
                try self.inWriterTransaction(db, changed: { _ in !batches.isEmpty }) { writer in
                    var outcomes = [IngestOutcome]()
                    if !batches.isEmpty {
                        outcomes = try InlineAsync.run {
                            try await writer.ingest(
                                batches, receivedAt: receivedAt, willStore: willStore,
                                in: SQLiteIngestTransaction(db: db))
                        }
                    }
                    if let journalThrough {
                        try db.execute(
                            sql: """
                                INSERT INTO meta (key, value) VALUES ('journal_applied', ?)
                                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                                """, arguments: [journalThrough])
                    }
                    return outcomes
                }
            }
        }
    }

    public func relabel(_ labels: [String: Labels], at now: Int64) async throws -> [String] {
        guard !labels.isEmpty else { return [] }
        return try await pool.writeWithoutTransaction { db in
            try self.inWriterTransaction(db, changed: { !$0.isEmpty }) { writer in
                try InlineAsync.run {
                    try await writer.relabel(labels, at: now, in: SQLiteIngestTransaction(db: db))
                }
            }
        }
    }

    /// Runs `body` with the writer in one immediate transaction of `db`. When it commits, what the writer learnt is
    /// published if `changed` says the transaction changed anything (``committed(_:)``); when it rolls back, the
    /// writer's caches are reset, since what they learnt in it may not exist, and a disk error is said as one.
    private func inWriterTransaction<Value: Sendable>(
        _ db: Database, changed: (Value) -> Bool, _ body: (inout StoreWriter) throws -> Value
    ) throws -> Value {
        try writer.withLock { writer in
            do {
                var value: Value?
                try db.inTransaction(.immediate) {
                    value = try body(&writer)
                    return .commit
                }
                guard let value else { preconditionFailure("a committed transaction has run its body") }
                if changed(value) { committed(writer) }
                return value
            } catch {
                writer.reset()
                throw Self.transient(error, path: path) ?? error
            }
        }
    }

    /// The journal beside this store (``IngestJournal/path(forStore:)``), synchronous as the store is.
    public func openJournal() throws -> any BatchJournal {
        try IngestJournal(
            path: IngestJournal.path(forStore: path), synchronous: settings.synchronous, after: journalApplied())
    }

    /// The last journal entry the store has applied (0 before any).
    public func journalApplied() throws -> Int64 {
        try pool.read { db in try Self.meta("journal_applied", db) }
    }

    /// ``StoreError/cannotWrite(_:)`` for errors of the disk rather than of the data: a full disk, an I/O error, a
    /// file system gone read-only, a lock held elsewhere. Nil for the others.
    static func transient(_ error: any Error, path: String) -> StoreError? {
        guard let error = error as? DatabaseError else { return nil }
        let transient: [ResultCode] = [
            .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_BUSY,
            .SQLITE_LOCKED, .SQLITE_NOMEM,
        ]
        guard transient.contains(error.resultCode.primaryResultCode) else { return nil }
        let cause =
            error.resultCode.primaryResultCode == .SQLITE_FULL
            ? "the disk is full" : error.message ?? "\(error.resultCode)"
        return .cannotWrite("\(path): cannot write: \(cause)")
    }
}
