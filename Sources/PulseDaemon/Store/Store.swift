import GRDB
import PulseCore

/// The daemon's durable store: SQLite in WAL mode under the state directory.
///
/// One writer (the ``IngestWriter`` thread) and any number of readers, in this process and others (`netpulse`).
/// Points are stored as per-interface chunks (``SeriesChunk``); batches are remembered by (stream, sequence) so
/// a replayed batch is recognised and stored once.
public final class Store: Sendable {
    public let path: String
    let pool: DatabasePool

    /// Opens (creating and migrating if needed) the database.
    ///
    /// - Parameters:
    ///   - synchronous: `FULL` makes every commit durable across power loss; see ``DaemonConfig/Synchronous``.
    ///   - readOnly: for tools that only query; the database must exist.
    public init(path: String, synchronous: DaemonConfig.Synchronous = .full, readOnly: Bool = false) throws {
        self.path = path
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.label = "netpulse-store"
        configuration.busyMode = .timeout(10)
        let mode = synchronous.rawValue
        configuration.prepareDatabase { db in
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA synchronous = \(mode)")
            }
        }
        if !readOnly { try FileIO.createDirectory(FileIO.parentDirectory(path), mode: 0o750) }
        pool = try DatabasePool(path: path, configuration: configuration)
        if !readOnly { try Self.migrator.migrate(pool) }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE agent (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        hostname TEXT NOT NULL,
                        version TEXT NOT NULL,
                        first_seen INTEGER NOT NULL,
                        last_seen INTEGER NOT NULL
                    );
                    CREATE TABLE stream (
                        id INTEGER PRIMARY KEY,
                        agent_id INTEGER NOT NULL REFERENCES agent(id),
                        stream INTEGER NOT NULL,
                        dropped INTEGER NOT NULL DEFAULT 0,
                        UNIQUE (agent_id, stream)
                    );
                    CREATE TABLE batch (
                        stream_id INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        received INTEGER NOT NULL,
                        value_count INTEGER NOT NULL,
                        PRIMARY KEY (stream_id, sequence)
                    ) WITHOUT ROWID;
                    CREATE TABLE series (
                        id INTEGER PRIMARY KEY,
                        agent_id INTEGER NOT NULL REFERENCES agent(id),
                        interface BLOB NOT NULL,
                        boot_id BLOB NOT NULL,
                        ifindex INTEGER NOT NULL,
                        width INTEGER NOT NULL,
                        first_seen INTEGER NOT NULL,
                        UNIQUE (agent_id, interface, boot_id, ifindex, width)
                    );
                    CREATE TABLE chunk (
                        id INTEGER PRIMARY KEY,
                        series_id INTEGER NOT NULL REFERENCES series(id),
                        first_ts INTEGER NOT NULL,
                        last_ts INTEGER NOT NULL,
                        sample_count INTEGER NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE INDEX chunk_by_series ON chunk (series_id, last_ts);
                    CREATE INDEX chunk_by_age ON chunk (last_ts);
                    CREATE TABLE link_state (
                        series_id INTEGER NOT NULL REFERENCES series(id),
                        ts INTEGER NOT NULL,
                        speed_mbps INTEGER,
                        operstate TEXT NOT NULL,
                        carrier INTEGER,
                        mtu INTEGER NOT NULL,
                        PRIMARY KEY (series_id, ts)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    /// Size of the database and its WAL in bytes.
    public var sizeOnDisk: Int {
        (FileIO.size(path) ?? 0) + (FileIO.size(path + "-wal") ?? 0)
    }

    /// Counter values in the batches the store holds (what was acknowledged, less what retention removed).
    public func storedValueCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(value_count), 0) FROM batch") ?? 0 }
    }

    /// Deletes raw chunks and batch records whose newest sample is older than `cutoff` (ms since the epoch), in
    /// transactions of at most `slice` rows, so that ingest commits are never held off for long.
    @discardableResult
    public func deleteRaw(olderThan cutoff: Int64, slice: Int = 5_000) throws -> Int {
        var deleted = 0
        while true {
            let chunks = try pool.write { db in
                try db.execute(
                    sql: "DELETE FROM chunk WHERE id IN (SELECT id FROM chunk WHERE last_ts < ? LIMIT ?)",
                    arguments: [cutoff, slice])
                return db.changesCount
            }
            deleted += chunks
            if chunks < slice { break }
        }
        while true {
            let batches = try pool.write { db in
                try db.execute(
                    sql: """
                        DELETE FROM batch WHERE (stream_id, sequence) IN
                            (SELECT stream_id, sequence FROM batch WHERE received < ? LIMIT ?)
                        """,
                    arguments: [cutoff, slice])
                return db.changesCount
            }
            if batches < slice { break }
        }
        return deleted
    }
}
