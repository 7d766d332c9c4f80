import Foundation
import GRDB
import PulseCore
import PulseStore

/// The daemon's ingest journal: batches made durable on arrival, in a SQLite file of their own beside the store,
/// so that a batch is acknowledged once it is here and applied to the store (counted, rolled up, billed) afterwards
/// in large groups.
///
/// Why: a commit to the store writes the state and the rollup rows of every series its batches touch, about 190 ms
/// for a fleet of 10,000 interfaces however few batches it holds (docs/benchmarks.md, "Ack latency while drawing"),
/// so acknowledging only after that commit made every batch wait for it. A journal commit costs its own rows and
/// an fsync, and its file has its own write lock, so it never waits behind the store's writer.
///
/// Entries have increasing ids (never reused: the table is `AUTOINCREMENT`, and ``init(path:synchronous:after:)``
/// moves the sequence past what the store has applied). The store records the last entry each of its commits applied
/// in the same transaction (``SQLiteStore/ingest(_:receivedAt:journalThrough:)``), so after a crash the daemon
/// applies exactly the entries after it (``entries(after:limit:)``); applied entries are then removed.
public final class IngestJournal: BatchJournal {
    public let path: String
    let queue: DatabaseQueue

    /// The journal of the store at `storePath`: beside it, named after it (`netpulse.db` has
    /// `netpulse-ingest-journal.db`), so two stores in one directory never share one.
    public static func path(forStore storePath: String) -> String {
        let name = String(storePath.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        let stem = name.hasSuffix(".db") ? String(name.dropLast(3)) : name
        return FileIO.parentDirectory(storePath) + "/" + stem + "-ingest-journal.db"
    }

    /// Opens (or creates) the journal at `path`, its ids continuing after `applied` (the store's cursor), so an id
    /// is never taken twice even when the file was removed.
    public init(path: String, synchronous: StoreSettings.Synchronous = .full, after applied: Int64) throws {
        self.path = path
        var configuration = Configuration()
        configuration.label = "netpulse-journal"
        let mode = synchronous.rawValue
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = \(mode)")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS entry (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        received_at INTEGER NOT NULL,
                        batch BLOB NOT NULL
                    );
                    CREATE TABLE IF NOT EXISTS set_aside (
                        id INTEGER PRIMARY KEY,
                        received_at INTEGER NOT NULL,
                        batch BLOB NOT NULL,
                        reason TEXT NOT NULL
                    );
                    """)
            try db.execute(
                sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'entry'", arguments: [applied])
            if db.changesCount == 0 {
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('entry', ?)", arguments: [applied])
            }
        }
    }

    /// Appends `batches` (each with its `receivedAt`) in one durable transaction; returns their ids, increasing.
    /// - Throws: ``StoreError/cannotWrite(_:)`` when the disk refuses (full, failing), the database's error otherwise.
    public func append(_ batches: [IngestBatch]) async throws -> [Int64] {
        try await writing { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO entry (received_at, batch) VALUES (?, ?)")
            var ids = [Int64]()
            ids.reserveCapacity(batches.count)
            for batch in batches {
                try statement.execute(arguments: [batch.receivedAt ?? 0, Data(batch.journalBytes)])
                ids.append(db.lastInsertedRowID)
            }
            return ids
        }
    }

    /// Up to `limit` entries after `id`, in id order, and those among them that cannot be read (damaged), with why.
    public func entries(after id: Int64, limit: Int) throws -> (
        entries: [(id: Int64, batch: IngestBatch)], damaged: [(id: Int64, reason: String)]
    ) {
        try queue.read { db in
            var entries = [(id: Int64, batch: IngestBatch)]()
            var damaged = [(id: Int64, reason: String)]()
            for row in try Row.fetchAll(
                db, sql: "SELECT id, batch FROM entry WHERE id > ? ORDER BY id LIMIT ?", arguments: [id, limit])
            {
                do {
                    entries.append((row[0], try IngestBatch(journalBytes: Array(row[1] as Data))))
                } catch {
                    damaged.append((row[0], "\(error)"))
                }
            }
            return (entries, damaged)
        }
    }

    /// Removes the entries up to `id` (the store has applied them), ``removalPart`` at a time: each part is a write
    /// of its own, so appends waiting for the journal (acknowledgements) go between them instead of waiting for the
    /// whole removal. Removing the 3,000-odd entries the store applied at once took 60–140 ms in one transaction
    /// (the batches' pages going back to the free list), and every acknowledgement waited for it
    /// (docs/benchmarks.md, "Ack latency while drawing").
    public func remove(through id: Int64) async throws {
        while true {
            let removed = try await writing { db in
                try db.execute(
                    sql: """
                        DELETE FROM entry WHERE id IN (SELECT id FROM entry WHERE id <= ? ORDER BY id LIMIT ?)
                        """, arguments: [id, Self.removalPart])
                return db.changesCount
            }
            if removed < Self.removalPart { return }
        }
    }

    /// Entries removed per write: about 5 ms of work.
    static let removalPart = 256

    /// Moves an entry the store refused for good to `set_aside`, with the reason, for an operator to look at.
    public func setAside(_ id: Int64, reason: String) async throws {
        try await writing { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO set_aside (id, received_at, batch, reason)
                    SELECT id, received_at, batch, ? FROM entry WHERE id = ?
                    """, arguments: [reason, id])
            try db.execute(sql: "DELETE FROM entry WHERE id = ?", arguments: [id])
        }
    }

    /// A write transaction whose disk errors are ``StoreError/cannotWrite(_:)``.
    private func writing<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value
    {
        do {
            // Raised through the commit, whose WAL write and fsync acknowledgements wait for.
            return try await queue.writeWithoutTransaction { db in
                try ThreadPriority.raised {
                    var value: Value?
                    try db.inTransaction {
                        value = try body(db)
                        return .commit
                    }
                    return value!
                }
            }
        } catch {
            throw SQLiteStore.transient(error, path: path) ?? error
        }
    }

    /// Entries not yet removed, and entries set aside.
    public func counts() throws -> (entries: Int, setAside: Int) {
        try queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM entry") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM set_aside") ?? 0
            )
        }
    }
}

extension IngestJournal {
    /// The entries set aside in the journal at `path`, oldest first, and how many entries wait to be applied; read
    /// without writing anything, while the daemon runs or not.
    /// - Throws: when the file does not exist or is not a journal.
    public static func inspect(path: String) throws -> (setAside: [SetAsideEntry], waiting: Int) {
        guard FileIO.exists(path) else {
            throw StoreError.unusable(
                "\(path): no ingest journal here (the daemon makes it beside its SQLite store at its first start)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        return try queue.read { db in
            let waiting = try Int.fetchOne(db, sql: "SELECT count(*) FROM entry") ?? 0
            let entries = try Row.fetchAll(db, sql: "SELECT id, received_at, batch, reason FROM set_aside ORDER BY id")
                .map { row -> SetAsideEntry in
                    let bytes = Array(row[2] as Data)
                    do {
                        return SetAsideEntry(
                            id: row[0], receivedAt: row[1], reason: row[3],
                            batch: try IngestBatch(journalBytes: bytes), damage: nil)
                    } catch {
                        return SetAsideEntry(
                            id: row[0], receivedAt: row[1], reason: row[3], batch: nil, damage: "\(error)")
                    }
                }
            return (entries, waiting)
        }
    }
}
