import Dispatch
import Foundation
import Logging
import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseCore
import Synchronization

/// The shared store: several daemons on one PostgreSQL database (docs/scale-out.md).
///
/// Ingest runs the same ``StoreWriter`` as the SQLite store, on a thread of its own holding one connection, with each
/// group commit one PostgreSQL transaction (see ``PostgresIngestTransaction`` for how concurrent daemons take turns).
/// Reads, and the short writes of billing, remote write and alerts, go through other sessions
/// (``PostgresSessions``) and never wait for ingest.
public final class PostgresStore: MetricStore {
    public let location: PostgresLocation
    public let settings: StoreSettings
    let sessions: PostgresSessions
    /// How long a write transaction may sit idle before the server ends its session (see ``init``).
    let idleWriteTimeout: Int64
    let measuredSize = Atomic<Int>(0)
    /// The fencing token leader-only writes present (``holdLease(holder:ttl:)``); 0: none, so they are refused.
    public let fence = Atomic<Int64>(0)
    let sizeMeasuredAt = Atomic<Int64>(0)
    private let queue = DispatchQueue(label: "netpulse-postgres-writer")
    let side: WriterSide

    /// The writer's state, touched only on `queue`.
    final class WriterSide: @unchecked Sendable {
        var writer: StoreWriter
        let session: PostgresSession
        let memory = PostgresIngestTransaction.WriterMemory()
        /// The session's connection the caches were filled on (``PostgresSession/connections``).
        var connection = 0

        init(writer: StoreWriter, session: PostgresSession) {
            self.writer = writer
            self.session = session
        }

        /// The writer's rows in the transaction just begun. On a new connection everything cached is read again: it
        /// may reach a server that lacks this writer's last commits (a restart, a failover to an asynchronous
        /// replica, a restore), where revisions already seen come again.
        func ingestTransaction() -> PostgresIngestTransaction {
            if session.connections != connection {
                connection = session.connections
                writer.reset()
                memory.forget()
            }
            return PostgresIngestTransaction(session: session, memory: memory)
        }
    }

    /// Connects to the database at `location` and, for the owner (a daemon), creates the tables or brings them up to
    /// date; other access requires them to be up to date.
    /// - Throws: ``StoreError`` naming the database (never its password).
    ///
    /// - Parameter idleTransactionTimeout: the server ends a session whose write transaction has been left idle this
    ///   long (ms): a daemon frozen mid-transaction then cannot hold rows others wait for (the lease, the revision)
    ///   for ever. A daemon sets it to its lease's length. Read transactions hold no such rows and are not limited
    ///   (a billing pass may compute for long between its reads).
    public init(
        location: PostgresLocation, settings: StoreSettings = .standard, access: StoreAccess = .owner,
        idleTransactionTimeout: Int64 = 15_000, logger: Logger = Logger(label: "netpulse.store.postgres")
    ) async throws {
        self.location = location
        self.settings = settings
        sessions = PostgresSessions(location: location, logger: logger, idleWriteTimeout: idleTransactionTimeout)
        side = WriterSide(
            writer: StoreWriter(settings: settings), session: PostgresSession(location: location, logger: logger))
        idleWriteTimeout = idleTransactionTimeout
        do {
            try await onWriter { side in
                try Self.prepare(side.session, levels: settings.levels, migrate: access == .owner)
            }
            try await refreshSize()
        } catch {
            shutdown()
            throw error
        }
    }

    /// Closes the store's connections.
    public func shutdown() {
        sessions.close()
        let side = side
        queue.async { side.session.close() }
    }

    /// Applies the migrations not yet applied (the owner) or checks that none is missing (the others).
    static func prepare(_ session: PostgresSession, levels: [RollupLevel], migrate: Bool) throws {
        if migrate {
            try session.execute("CREATE TABLE IF NOT EXISTS netpulse_migration (id text PRIMARY KEY)")
        } else {
            // Tools that only read, or edit silences, never create anything in the database.
            let exists = try session.query("SELECT to_regclass('netpulse_migration') IS NOT NULL")[0].decode(Bool.self)
            guard exists else {
                throw StoreError.unusable(
                    "\(session.location) holds no Netpulse store yet; has netpulsed run with this config?")
            }
        }
        if migrate {
            try session.transaction {
                try session.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))")
                let applied = Set(
                    try session.query("SELECT id FROM netpulse_migration").map { try $0.decode(String.self) })
                for migration in PostgresSchema.migrations where !applied.contains(migration.id) {
                    // One statement at a time: the extended protocol takes no more.
                    for statement in migration.sql.components(separatedBy: ";\n")
                    where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                        try session.execute(statement)
                    }
                    try session.query("INSERT INTO netpulse_migration (id) VALUES (\(migration.id))")
                }
                for level in levels { try session.execute(PostgresSchema.createRollupTable(level)) }
            }
        }
        let applied = Set(try session.query("SELECT id FROM netpulse_migration").map { try $0.decode(String.self) })
        let known = Set(PostgresSchema.migrations.map(\.id))
        guard applied.isSuperset(of: known) else {
            throw StoreError.unusable(
                "\(session.location) was written by an older netpulsed; start the new netpulsed once to upgrade it")
        }
        guard applied.isSubset(of: known) else {
            throw StoreError.unusable(
                "\(session.location) was written by a newer netpulsed; upgrade netpulse to read it")
        }
    }

    /// Runs `body` on the writer's thread, where blocking on the database is allowed.
    func onWriter<Value: Sendable>(_ body: @escaping @Sendable (WriterSide) throws -> Value) async throws
        -> Value
    {
        let side = side
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: { try body(side) })) }
        }
    }

    // MARK: Ingest

    /// Stores one group commit in one transaction (see ``MetricStore/ingest(_:receivedAt:)``).
    public func ingest(
        _ batches: [IngestBatch], receivedAt: Int64, willStore: (@Sendable (Int) -> Void)?
    ) async throws -> [IngestOutcome] {
        guard !batches.isEmpty else { return [] }
        if receivedAt - sizeMeasuredAt.load(ordering: .relaxed) >= 60_000 {
            sizeMeasuredAt.store(receivedAt, ordering: .relaxed)
            try? await refreshSize()
        }
        let idleTimeout = idleWriteTimeout
        return try await onWriter { side in
            do {
                return try side.session.transaction {
                    try side.session.limitIdle(idleTimeout)
                    return try side.writer.ingest(
                        batches, receivedAt: receivedAt, willStore: willStore, in: side.ingestTransaction())
                }
            } catch {
                // Rolled back: what the caches learnt in it may not exist.
                side.writer.reset()
                side.memory.forget()
                throw error
            }
        }
    }

    public func relabel(_ labels: [String: Labels], at now: Int64) async throws -> [String] {
        guard !labels.isEmpty else { return [] }
        let idleTimeout = idleWriteTimeout
        return try await onWriter { side in
            do {
                return try side.session.transaction {
                    try side.session.limitIdle(idleTimeout)
                    return try side.writer.relabel(labels, at: now, in: side.ingestTransaction())
                }
            } catch {
                side.writer.reset()
                side.memory.forget()
                throw error
            }
        }
    }
}
