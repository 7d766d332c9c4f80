import GRDB
import PulseAnalytics
import PulseCore
import PulseStore
import Synchronization

/// The embedded store: SQLite in WAL mode (GRDB's `DatabasePool`) under the daemon's state directory.
///
/// One writer (the daemon's ingest service, through ``ingest(_:receivedAt:)``) and any number of readers, in this
/// process and in others: `netpulse` opens the same file read-only while the daemon runs, and its reads never
/// block ingest (WAL). Blocking work runs on GRDB's own queues, never on the caller's executor.
public final class SQLiteStore: JournaledStore {
    public let path: String
    public let settings: StoreSettings
    let pool: DatabasePool
    /// The writer's caches: ids, each series' first and last sample, memberships. Only touched inside write
    /// transactions, which GRDB runs one at a time; rebuilt from the database after a failed commit.
    let writer: Mutex<StoreWriter>
    /// The newest buckets of the finest level, once the alert service or the live pages ask for them
    /// (``keepRecentBuckets(from:for:)``).
    let recent = RecentBuckets()
    /// The earliest bucket each holder asked to be held.
    let recentHolders = Mutex<[RecentBucketHolder: Int64]>([:])
    /// Counts commits that changed what a catalogue holds (``catalogueGeneration()``).
    let catalogueCommits = Atomic<Int64>(0)
    /// Counts commits that may have changed what a read gives (``dataGeneration()``).
    let dataCommits = Atomic<Int64>(0)
    /// Counts commits that may have written kept bills or their adjustments: every one that moves
    /// ``dataCommits`` except those of ingest and relabelling that leave the catalogue as it was, which never write
    /// them (``KeptBillsMemo``).
    let billCommits = Atomic<Int64>(0)
    /// The last answers of ``bills(series:containing:)`` and ``billAdjustments(series:containing:)`` (the daemon's
    /// own store only).
    let keptBills = KeptBillsMemo<StoredBill> { $0.bill.period }
    let keptAdjustments = KeptBillsMemo<BillAdjustment> { $0.bill.period }
    /// Whether this process is the store's one writer of rollups and catalogue (the daemon).
    let isOwner: Bool

    /// Opens the store at `path`, creating it or bringing an older one up to date (a Netpulse 0.1 store is
    /// migrated and its rollups backfilled from its raw chunks).
    ///
    /// - Parameters:
    ///   - readOnly: for tools that only query; the store must exist and be up to date.
    /// - Throws: ``StoreError`` or the database's error, naming the file.
    public convenience init(path: String, settings: StoreSettings = .standard, readOnly: Bool = false) throws {
        try self.init(path: path, settings: settings, access: readOnly ? .reader : .owner)
    }

    /// Opens the store at `path` for `access` (see ``StoreAccess``).
    /// - Throws: ``StoreError`` or the database's error, naming the file.
    public init(path: String, settings: StoreSettings = .standard, access: StoreAccess) throws {
        self.path = path
        self.settings = settings
        isOwner = access == .owner
        let readOnly = access == .reader
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.label = "netpulse-store"
        configuration.busyMode = .timeout(10)
        let mode = settings.synchronous.rawValue
        configuration.prepareDatabase { db in
            // No memory map (`mmap_size` stays 0): pages are copied by pread into SQLite's small page cache. A
            // mapped store was no faster for `netpulse` (fresh processes reading scattered rollup pages) and cost
            // far more memory: this kernel maps 64 KiB around every page touched, so a top-10 over 10,000
            // interfaces showed 660 MiB of RSS mapped instead of 75 MiB, and a cold read took 3.3 s instead of 2.1
            // (docs/benchmarks.md, Queries).
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA synchronous = \(mode)")
                // The writer's page cache: 64 MiB instead of SQLite's 2 MiB. Each commit upserts rollup rows of
                // thousands of series spread over the whole file; with 2 MiB the writer read most of those pages
                // back from the kernel on every commit. Readers keep the default (they are many, and brief).
                try db.execute(sql: "PRAGMA cache_size = -65536")
            }
        }
        if access != .owner {
            guard FileIO.exists(path) else {
                throw StoreError.unusable("\(path): no store yet; has netpulsed run with this config?")
            }
        } else {
            try FileIO.createDirectory(FileIO.parentDirectory(path), mode: 0o750)
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        writer = Mutex(StoreWriter(settings: settings))
        if access != .owner {
            let applied = try pool.read { db in try SQLiteSchema.migrator.appliedIdentifiers(db) }
            let known = Set(SQLiteSchema.migrator.migrations)
            guard applied.isSuperset(of: known) else {
                throw StoreError.unusable(
                    "\(path) was written by an older netpulsed; start the new netpulsed once to upgrade it")
            }
            guard applied.isSubset(of: known) else {
                throw StoreError.unusable("\(path) was written by a newer netpulsed; upgrade netpulse to read it")
            }
        } else {
            try SQLiteSchema.migrator.migrate(pool)
            try pool.write { db in
                for level in settings.levels { try SQLiteSchema.createRollupTable(level, in: db) }
            }
            try backfillVersion1()
        }
    }

    public var sizeOnDisk: Int {
        (FileIO.size(path) ?? 0) + (FileIO.size(path + "-wal") ?? 0)
    }

    /// A counter of the `meta` table (0 when absent).
    static func meta(_ key: String, _ db: Database) throws -> Int64 {
        try SQLiteIngestTransaction(db: db).meta(key)
    }

    /// The levels present in this store's file (a reader may be configured with fewer).
    func storedLevels(_ db: Database) throws -> [RollupLevel] {
        let names = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rollup\\_%s' ESCAPE '\\'")
        return names.compactMap { name in
            Int64(name.dropFirst("rollup_".count).dropLast()).map { RollupLevel(width: $0 * 1_000) }
        }.sorted()
    }

    /// The rows `sql` selects with `arguments`, each made a value by `make`, in one read transaction: how the store
    /// lists alerts, silences and notifications.
    func rows<Value: Sendable>(
        _ sql: String, _ arguments: StatementArguments = [], _ make: @escaping @Sendable (Row) throws -> Value
    ) async throws -> [Value] {
        try await pool.read { db in try Row.fetchAll(db, sql: sql, arguments: arguments).map(make) }
    }

    /// A GRDB row as the shared decoders read it (``StoreRow``).
    struct Columns: StoreRow {
        let row: Row
        var index = 0

        init(_ row: Row) { self.row = row }

        private mutating func next<Value: DatabaseValueConvertible>() -> Value {
            defer { index += 1 }
            return row[index]
        }

        mutating func integer() -> Int64 { next() }
        mutating func optionalInteger() -> Int64? { next() }
        mutating func text() -> String { next() }
        mutating func optionalText() -> String? { next() }
    }

    /// After a commit by `writer`: its bucket changes reach the recent buckets, and a change to the catalogue moves
    /// its generation. Called inside the writer's lock, right after the commit. A commit that wrote nothing (every
    /// batch a duplicate) has no revision of its own.
    func committed(_ writer: borrowing StoreWriter) {
        dataChanged(bills: writer.catalogueChanged)
        // (An agent's new hostname is committed even when all its batches were duplicates: no revision then.)
        if writer.catalogueChanged { catalogueCommits.add(1, ordering: .releasing) }
        guard writer.revision == writer.pendingRevision else { return }
        if let finest = settings.levels.indices.min(by: { settings.levels[$0] < settings.levels[$1] }) {
            recent.apply(writer.deltas, levelIndex: finest, revision: writer.pendingRevision)
        }
    }

    /// A number that changes whenever a commit may have changed the series, their link facts, the agents' names and
    /// labels or the memberships (not last-seen times), so a catalogue read at one generation holds at the next if
    /// the number is the same. Only the daemon's own store can tell (it makes every such change); nil elsewhere.
    public func catalogueGeneration() -> Int64? {
        isOwner ? catalogueCommits.load(ordering: .acquiring) : nil
    }

    /// Moved after every commit of this process that wrote buckets, series, bills or memberships, or deleted rows
    /// (ingest, relabelling, retention, kept bills). Only the daemon's own store can tell; nil elsewhere.
    public func dataGeneration() -> Int64? {
        isOwner ? dataCommits.load(ordering: .acquiring) : nil
    }

    /// Called after each commit that may have changed what a read gives; `bills`: that may have written bills.
    func dataChanged(bills: Bool = true) {
        if bills { billCommits.add(1, ordering: .releasing) }
        dataCommits.add(1, ordering: .releasing)
    }

    /// The levels a reader can use: the store's own.
    public func levels() async throws -> [RollupLevel] {
        try await pool.read { db in try self.storedLevels(db) }
    }
}
