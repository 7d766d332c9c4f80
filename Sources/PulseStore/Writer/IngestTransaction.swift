import PulseAnalytics
import PulseCore

/// The rows ``StoreWriter`` reads and writes, inside one write transaction of its store. The counting logic
/// (deduplication, counter order, late data, spreading, scopes) is written once, in StoreWriter; each store says
/// here, in its own SQL, how its rows are found and changed. The calls are `async` for PostgreSQL, whose client is;
/// SQLite's are synchronous (GRDB's transactions are closures) and run the writer inline (``InlineAsync``).
///
/// Writes that a commit makes many of (bucket changes, series states) come in one call each, so a store across a
/// network (PostgreSQL) sends them in a few statements rather than one round trip per row.
package protocol IngestTransaction {
    /// The store's revision, held for this transaction: commits take turns here, so revisions follow commit order
    /// (readers page through changes by revision). A revision other than the one this writer last committed means
    /// another writer committed in between, and its caches of mutable rows are dropped.
    func lockRevision() async throws -> Int64
    /// What other writers changed after `revision` (this writer's last commit) in the rows writers cache, or nil when
    /// the store cannot tell, and every cached row another writer may change is dropped instead. A store with
    /// several writers stamps those rows with the revision of the commit that changed them and reads them back here,
    /// one query per table, so a writer that takes turns with others refreshes only what they changed.
    func changes(after revision: Int64) async throws -> StoreWriter.SharedChanges?
    func meta(_ key: String) async throws -> Int64
    /// Sets the revision and adds to the totals of stored batches, values and unplaced steps.
    func advanceTotals(revision: Int64, batches: Int64, values: Int64, unplacedSteps: Int64) async throws

    // MARK: Agents and memberships

    /// Creates the agent or refreshes its hostname, version and last-seen time; returns its id and stored labels.
    func upsertAgent(_ identity: AgentIdentity, at now: Int64) async throws -> (id: Int64, labels: Labels)
    func touchAgent(id: Int64, hostname: String, version: String, at now: Int64) async throws
    /// A known agent's row without touching it (nil for an agent never seen).
    func agent(named name: String) async throws -> (id: Int64, identity: AgentIdentity, lastSeen: Int64)?
    /// The agent's memberships, oldest first.
    func memberships(agent id: Int64, name: String) async throws -> [Membership]
    func endMembership(agent: Int64, _ membership: Membership, at time: Int64) async throws
    func beginMembership(agent: Int64, group: GroupKey, at time: Int64) async throws
    func setLabels(agent: Int64, _ labels: Labels) async throws

    // MARK: Deduplication

    /// The id of an agent's stream, created if new.
    func streamID(agent: Int64, stream: UInt64) async throws -> Int64
    /// The sequence ranges the stream has stored, in order.
    func ranges(stream: Int64) async throws -> [ClosedRange<UInt64>]
    func insertRange(stream: Int64, _ range: ClosedRange<UInt64>) async throws
    /// Replaces the range that starts at `first` by `range`.
    func updateRange(stream: Int64, first: UInt64, to range: ClosedRange<UInt64>) async throws
    func deleteRange(stream: Int64, first: UInt64) async throws
    func addDropped(stream: Int64, _ count: Int64) async throws

    // MARK: Series

    /// The id of a series, created (seen first at `now`) if new; and whether this call created it.
    func seriesID(_ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64) async throws -> (
        id: Int64, created: Bool
    )
    func epochID(_ epoch: CounterEpoch) async throws -> Int64
    /// The interface's latest link facts (nil for a series that has none yet).
    func facts(series: Int64) async throws -> LinkState?
    /// Sets the interface's latest link facts and records them in its history at `time`.
    func setFacts(series: Int64, _ state: LinkState, at time: Int64) async throws
    /// One batch's raw samples (see ``RawBatch``).
    func insertRaw(
        _ raw: RawBatch, agent: Int64, order: Int64, shift: Int64, interval: Int64, heartbeat: Int64, from: Int64,
        to: Int64) async throws

    // MARK: Counter order

    /// The series' first and last sample in counter order, nil before its first.
    func seriesState(_ series: Int64) async throws -> StoreWriter.SeriesState?
    func writeStates(_ states: [(series: Int64, state: StoreWriter.SeriesState)]) async throws
    /// The gap of `series` that starts last before `position`.
    func gap(series: Int64, before position: SamplePosition) async throws -> StoreWriter.Gap?
    func deleteGap(series: Int64, previous: SamplePosition) async throws
    /// Saves a step late data may split (gap, instant or unplaced: its ``StoreWriter/Gap/step`` says which).
    func saveGap(_ gap: StoreWriter.Gap, series: Int64, revision: Int64) async throws
    /// Up to `limit` virtual gaps that ended before `cutoff`, with their series (for settling them).
    func virtualGaps(endedBefore cutoff: Int64, limit: Int) async throws -> [(series: Int64, gap: StoreWriter.Gap)]

    // MARK: The commit's changes

    /// Adds each change to its bucket (peaks and speeds by maximum), creating buckets as needed.
    func writeBuckets(_ deltas: [StoreWriter.BucketKey: BucketValues], levels: [RollupLevel], revision: Int64)
        async throws
    /// Adds to `bill_change` and `forward_change` (see ``StoreWriter/Change``).
    func writeChanges(
        bill: [StoreWriter.ChangeKey: StoreWriter.Change], forward: [StoreWriter.ChangeKey: StoreWriter.Change],
        revision: Int64) async throws
    /// Adds each change to the unplaced totals of its series and day.
    func writeUnplaced(_ changes: [StoreWriter.UnplacedKey: UnplacedTotals], revision: Int64) async throws
    func insertAnomaly(_ anomaly: Anomaly, revision: Int64) async throws
}
