import Foundation
import Logging
import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseCore
import PulseStore
import Synchronization

/// The shared store: several daemons on one PostgreSQL database (docs/scale-out.md).
///
/// Ingest runs the same ``StoreWriter`` as the SQLite store, holding the one connection of a pool of its own
/// (``writers``), with each group commit one PostgreSQL transaction (see ``PostgresIngestTransaction`` for how
/// concurrent daemons take turns). Reads, and the short writes of billing, remote write and alerts, lease connections
/// of another pool (``pool``) and never wait for ingest. Both pools are postgres-nio's `PostgresClient`s
/// (``PostgresPool``), run from the store's opening to ``shutdown()``.
public final class PostgresStore: SharedStore {
    public let location: PostgresLocation
    public let settings: StoreSettings
    /// Connections for everything but the writer's transactions.
    let pool: PostgresPool
    /// The writer's one connection: its caches hold while it stays the same (``WriterSide/ingestTransaction(_:)``).
    let writers: PostgresPool
    /// How long a write transaction may sit idle before the server ends its session (see ``init``).
    let idleWriteTimeout: Int64
    let measuredSize = Atomic<Int>(0)
    /// The fencing token leader-only writes present (``holdLease(holder:ttl:)``); 0: none, so they are refused.
    public let fence = Atomic<Int64>(0)
    let sizeMeasuredAt = Atomic<Int64>(0)
    let side: WriterSide
    /// The most connections ``pool`` opens at once.
    static let maximumConnections = 20

    /// The writer's state. Unchecked because it is mutable, and safe because it is touched only inside
    /// ``writers``' `withConnection` (``onWriter(_:)``, ``writerTransaction(limitIdle:_:)``): that pool has one
    /// connection, so one call at a time, each ordered after the last by the pool's lease.
    final class WriterSide: @unchecked Sendable {
        var writer: StoreWriter
        let memory = PostgresIngestTransaction.WriterMemory()
        /// The connection the caches were filled on, and how many connections the writer has had.
        var connection: PostgresSession.Key?
        private(set) var connections = 0
        /// Raw partitions were dropped (``PostgresStore/dropPartitionCache()``): forgotten at the next transaction.
        let partitionsDropped = Atomic<Bool>(false)

        init(writer: StoreWriter) {
            self.writer = writer
        }

        /// The writer's rows in the transaction just begun on `session`. On a new connection everything cached is
        /// read again: it may reach a server that lacks this writer's last commits (a restart, a failover to an
        /// asynchronous replica, a restore), where revisions already seen come again.
        func ingestTransaction(_ session: PostgresSession) -> PostgresIngestTransaction {
            if session.key != connection {
                connection = session.key
                connections += 1
                writer.reset()
                memory.forget()
            }
            if partitionsDropped.exchange(false, ordering: .relaxed) { memory.partitions.removeAll() }
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
        pool = PostgresPool(location: location, logger: logger, maximum: Self.maximumConnections)
        // Kept open however long ingest pauses: a new connection drops the writer's caches.
        writers = PostgresPool(location: location, logger: logger, maximum: 1, idleTimeout: .seconds(86_400 * 365))
        side = WriterSide(writer: StoreWriter(settings: settings))
        idleWriteTimeout = idleTransactionTimeout
        do {
            try await Self.prepare(pool, levels: settings.levels, migrate: access == .owner)
            try await refreshSize()
        } catch {
            shutdown()
            throw error
        }
    }

    /// Closes the store's connections.
    public func shutdown() {
        pool.close()
        writers.close()
    }

    /// Applies the migrations not yet applied (the owner) or checks that none is missing (the others).
    static func prepare(_ pool: PostgresPool, levels: [RollupLevel], migrate: Bool) async throws {
        try await pool.withConnection { session in
            if migrate {
                try await session.execute("CREATE TABLE IF NOT EXISTS netpulse_migration (id text PRIMARY KEY)")
            } else {
                // Tools that only read, or edit silences, never create anything in the database.
                let exists = try await session.query("SELECT to_regclass('netpulse_migration') IS NOT NULL")
                    .single("to_regclass('netpulse_migration')").decode(Bool.self)
                guard exists else {
                    throw StoreError.unusable(
                        "\(session.location) holds no Netpulse store yet; has netpulsed run with this config?")
                }
            }
            if migrate {
                try await session.transaction { session in
                    try await session.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))")
                    let applied = Set(
                        try await session.query("SELECT id FROM netpulse_migration").map { try $0.decode(String.self) })
                    for migration in PostgresSchema.migrations where !applied.contains(migration.id) {
                        // One statement at a time: the extended protocol takes no more.
                        for statement in migration.sql.components(separatedBy: ";\n")
                        where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                            try await session.execute(statement)
                        }
                        try await session.query("INSERT INTO netpulse_migration (id) VALUES (\(migration.id))")
                    }
                    for level in levels { try await session.execute(PostgresSchema.createRollupTable(level)) }
                }
            }
            let applied = Set(
                try await session.query("SELECT id FROM netpulse_migration").map { try $0.decode(String.self) })
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
    }

    /// Runs `body` with the writer's state while holding its connection (so after any transaction of its that
    /// began before).
    func onWriter<Value: Sendable>(_ body: @escaping @Sendable (WriterSide) throws -> Value) async throws -> Value {
        let side = side
        return try await writers.withConnection { _ in try body(side) }
    }

    /// Runs `body` in a transaction of the writer's connection, limited to ``idleWriteTimeout`` when `limitIdle`. When anything fails the writer's caches are dropped (what they learnt in it may not exist),
    /// before the connection goes to the next transaction.
    func writerTransaction<Value: Sendable>(
        limitIdle: Bool = true,
        _ body: @escaping @Sendable (WriterSide, PostgresIngestTransaction) async throws -> Value
    ) async throws -> Value {
        let (side, idleTimeout) = (side, idleWriteTimeout)
        return try await writers.withConnection { session in
            do {
                return try await session.transaction { session in
                    if limitIdle { try await session.limitIdle(idleTimeout) }
                    return try await body(side, side.ingestTransaction(session))
                }
            } catch {
                // Rolled back: what the caches learnt in it may not exist.
                side.writer.reset()
                side.memory.forget()
                throw error
            }
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
        return try await writerTransaction { side, transaction in
            try await side.writer.ingest(batches, receivedAt: receivedAt, willStore: willStore, in: transaction)
        }
    }

    public func relabel(_ labels: [String: Labels], at now: Int64) async throws -> [String] {
        guard !labels.isEmpty else { return [] }
        return try await writerTransaction { side, transaction in
            try await side.writer.relabel(labels, at: now, in: transaction)
        }
    }
}

extension [PostgresRow] {
    /// The one row a statement returns (a count, a setting, a `RETURNING` of one row).
    /// - Throws: ``StoreError/damaged(_:)`` naming `what` when there is none.
    func single(_ what: String) throws -> PostgresRow {
        guard let row = first else { throw StoreError.damaged("no row for \(what)") }
        return row
    }
}
