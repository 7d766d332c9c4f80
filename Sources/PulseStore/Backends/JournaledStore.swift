/// A store in a file on the daemon's own disk (SQLite), which takes batches through an ingest journal: the daemon
/// acknowledges a batch once the journal, a file of its own beside the store, holds it, and applies the journal to
/// the store in larger commits (docs/operations.md, "The ingest journal").
///
/// The daemon asks a store for this by capability (`store as? any JournaledStore`), never by its concrete type.
public protocol JournaledStore: MetricStore {
    /// Opens (or creates) the journal beside this store, its ids continuing after ``journalApplied()``.
    func openJournal() throws -> any BatchJournal

    /// The last journal entry the store has applied (0 before the first).
    func journalApplied() throws -> Int64

    /// Stores `batches` as ``MetricStore/ingest(_:receivedAt:willStore:)`` does and, in the same transaction,
    /// records that the journal is applied up to entry `journalThrough`: after a crash, exactly the entries after
    /// ``journalApplied()`` are still to apply.
    func ingest(
        _ batches: [IngestBatch], receivedAt: Int64, journalThrough: Int64?, willStore: (@Sendable (Int) -> Void)?
    ) async throws -> [IngestOutcome]
}

extension JournaledStore {
    public func ingest(_ batches: [IngestBatch], receivedAt: Int64, journalThrough: Int64?) async throws
        -> [IngestOutcome]
    {
        try await ingest(batches, receivedAt: receivedAt, journalThrough: journalThrough, willStore: nil)
    }
}

/// The daemon's ingest journal (see ``JournaledStore``): batches made durable on arrival, applied to the store
/// afterwards in large groups, and removed once applied.
public protocol BatchJournal: Sendable {
    /// The journal's file, for messages.
    var path: String { get }

    /// Appends `batches` (each with its `receivedAt`) in one durable transaction; returns their ids, increasing.
    /// - Throws: ``StoreError/cannotWrite(_:)`` when the disk refuses (full, failing), the database's error otherwise.
    func append(_ batches: [IngestBatch]) async throws -> [Int64]

    /// Up to `limit` entries after `id`, in id order, and those among them that cannot be read (damaged), with why.
    func entries(after id: Int64, limit: Int) throws -> (
        entries: [(id: Int64, batch: IngestBatch)], damaged: [(id: Int64, reason: String)]
    )

    /// Removes the entries up to `id` (the store has applied them).
    func remove(through id: Int64) async throws

    /// Moves an entry the store refused for good aside, with the reason, for an operator to look at.
    func setAside(_ id: Int64, reason: String) async throws

    /// Entries not yet removed, and entries set aside.
    func counts() throws -> (entries: Int, setAside: Int)
}

/// A journal entry set aside: the store refused it, it could not be read, or the daemon died twice while applying
/// it. Kept for an operator to look at (`netpulse journal show`).
public struct SetAsideEntry: Sendable {
    public var id: Int64
    public var receivedAt: Int64
    public var reason: String
    /// The batch, or nil when its bytes cannot be read (then `damage` says why).
    public var batch: IngestBatch?
    public var damage: String?

    package init(id: Int64, receivedAt: Int64, reason: String, batch: IngestBatch?, damage: String?) {
        self.id = id
        self.receivedAt = receivedAt
        self.reason = reason
        self.batch = batch
        self.damage = damage
    }
}
