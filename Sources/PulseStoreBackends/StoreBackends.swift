import Logging
import PulseStore
import PulseStorePostgres
import PulseStoreSQLite

/// Where the daemon, the CLI and the tools get a store: the backend a configuration names, opened, behind
/// ``MetricStore`` and its capabilities (``JournaledStore``, ``SharedStore``). Nothing outside the storage targets
/// names a backend's type.
public enum StoreBackends {
    /// The PostgreSQL database at `postgres` when one is given, otherwise the SQLite file at `path`.
    ///
    /// - Parameters:
    ///   - access: who opens it (``StoreAccess``): the daemon owns it, tools read it.
    ///   - idleTransactionTimeout: PostgreSQL only: the server ends a session whose write transaction has been left
    ///     idle this long (ms); a daemon sets its lease's length.
    /// - Throws: ``StoreError`` or the database's error, naming the file or the database (never its password).
    public static func open(
        path: String, postgres: PostgresLocation?, settings: StoreSettings = .standard, access: StoreAccess = .owner,
        idleTransactionTimeout: Int64 = 15_000, logger: Logger = Logger(label: "netpulse.store.postgres")
    ) async throws -> any MetricStore {
        if let postgres {
            return try await PostgresStore(
                location: postgres, settings: settings, access: access, idleTransactionTimeout: idleTransactionTimeout,
                logger: logger)
        }
        return try SQLiteStore(path: path, settings: settings, access: access)
    }

    /// The ingest journal of the SQLite store at `storePath` (beside it, named after it).
    public static func journalPath(forStore storePath: String) -> String {
        IngestJournal.path(forStore: storePath)
    }

    /// The entries set aside in the journal at `path`, oldest first, and how many wait to be applied; read without
    /// writing anything, while the daemon runs or not.
    /// - Throws: when the file does not exist or is not a journal.
    public static func inspectJournal(path: String) throws -> (setAside: [SetAsideEntry], waiting: Int) {
        try IngestJournal.inspect(path: path)
    }

    /// Loads the TLS files `[store] postgresql` names, as a connection would (`netpulse check-config`).
    /// - Throws: ``StoreError/unusable(_:)`` naming a file that cannot be read or used.
    public static func checkTLSFiles(of location: PostgresLocation) throws {
        try location.tls.validate()
    }

    /// Connects to the PostgreSQL server once and reads how it replicates (``PostgresReplication``); nothing in the
    /// database is created or changed.
    /// - Throws: ``StoreError`` when the server cannot be reached or read.
    public static func replication(
        at location: PostgresLocation, logger: Logger = Logger(label: "netpulse.store.postgres")
    ) async throws -> PostgresReplication {
        try await PostgresReplication.read(location: location, logger: logger)
    }
}
