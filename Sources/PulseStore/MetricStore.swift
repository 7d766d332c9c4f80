import PulseAnalytics
import PulseCore

/// The storage protocol: everything that must survive a restart or be shared by several daemons goes through it
/// (deduplication, each series' last counter, rollups, memberships, bill state), and nothing else in Netpulse
/// speaks SQL. Ingest, the window engine, exporters and the CLI all use it.
///
/// Every method is one transaction (reads see one consistent revision); ``ingest(_:receivedAt:)`` is one durable
/// group commit. ``SQLiteStore`` is the embedded implementation.
public protocol MetricStore: RollupReader, AlertStore, AnyObject, Sendable {
    /// Stores one group commit: deduplicates each batch by (agent, stream, sequence), counts its samples into
    /// every rollup level in counter order (taking out and re-spreading steps that late data splits), keeps the raw
    /// samples, and commits durably. Nothing is visible, and nothing may be acknowledged, before it returns.
    ///
    /// - Parameters:
    ///   - receivedAt: the daemon's clock (ms), for the clock check and bookkeeping.
    ///   - willStore: called on the writer's thread with each batch's index before it is applied, and with
    ///     `batches.count` once all are and the commit begins (the daemon's ``ApplyMarker``).
    /// - Returns: one outcome per batch, in order.
    /// - Throws: when the commit failed; then nothing of it was stored.
    func ingest(_ batches: [IngestBatch], receivedAt: Int64, willStore: (@Sendable (Int) -> Void)?)
        async throws -> [IngestOutcome]

    /// The rollup levels the store keeps (a reader may be configured with fewer or more).
    /// Moves known agents to the labels the daemon's configuration now gives them, at `now` (``StoreWriter``'s
    /// `relabel`): the names of the agents moved.
    func relabel(_ labels: [String: Labels], at now: Int64) async throws -> [String]
    func levels() async throws -> [RollupLevel]

    /// Every rollup series: interfaces, hosts, groups and the fleet.
    func series() async throws -> [SeriesRecord]

    func agents() async throws -> [AgentRecord]

    /// Group memberships over time (for bills and group figures).
    func memberships() async throws -> [Membership]

    /// The raw samples of an interface series with timestamps in `[from, to)`, in counter order.
    func samples(series: Int64, from: Int64, to: Int64) async throws -> [RawSample]

    /// Anomalies recorded at or after `since` (ms).
    func anomalies(since: Int64) async throws -> [Anomaly]

    /// Batches and values stored since the store was made, and its current revision.
    func totals() async throws -> IngestTotals

    /// What the steps of `series` whose time could not be placed counted (`docs/windows.md`, "Time that cannot be
    /// placed"), per series and UTC day of receipt, for the days that start in `[from, to)`, oldest first; series
    /// without any are absent.
    func unplacedDays(series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [UnplacedDay]]

    // MARK: Bills

    /// The end of the last 5-minute interval bills have taken in (0 before the first pass).
    func billCursor() async throws -> Int64

    /// The time zone the store's calendar periods (its bills) are cut in, as the daemon recorded it; nil when it has
    /// recorded none (`docs/configuration.md`, `[daemon] time_zone`). A store that billed before zones were recorded
    /// says UTC, the default it billed in.
    func recordedTimeZone() async throws -> String?

    /// Records `name` as the zone the store's calendar periods are cut in from now on.
    func recordTimeZone(_ name: String) async throws

    /// From now on, changes to 5-minute intervals before `time` are recorded for billing (``BillSnapshot``): a
    /// pass marks the intervals it is about to take in before it reads them.
    func markBillIntervals(before time: Int64) async throws

    /// Runs `body` on one consistent snapshot of the store.
    func withBillSnapshot<Result: Sendable>(_ body: @escaping @Sendable (any BillSnapshot) async throws -> Result)
        async throws -> Result

    /// The bills not yet issued, with their trackers.
    func openBills() async throws -> [StoredBill]

    /// The bills of `series` (every series when nil) whose period holds `time`, issued or not (without trackers).
    func bills(series: [Int64]?, containing time: Int64) async throws -> [StoredBill]

    /// Adjustments recorded for the bills of `series` whose period holds `time`, oldest first.
    func billAdjustments(series: [Int64]?, containing time: Int64) async throws -> [BillAdjustment]

    /// Writes one pass of bill keeping in one transaction.
    func saveBills(_ update: BillUpdate) async throws

    /// From now on, late changes to buckets of the forwarded level before `time` are recorded for remote write
    /// (``ForwardSnapshot/changes(cursor:limit:)``); never lowered.
    func raiseForwardMark(to time: Int64) async throws

    /// Runs `body` on one consistent snapshot of the store, for a pass of remote write.
    func withForwardSnapshot<Result: Sendable>(_ body: @escaping @Sendable (any ForwardSnapshot) async throws -> Result)
        async throws -> Result

    /// Writes one pass of remote write in one transaction.
    func saveForward(_ update: ForwardUpdate) async throws

    /// Clears remote write's state when `[remote_write]` is off (a later one starts afresh); whether there was any
    /// to clear. On a shared store only the leader may (it is fenced).
    func stopForwarding() async throws -> Bool

    /// Deletes data past `policy`, in transactions of at most `slice` rows so ingest is never held off for long.
    func prune(_ policy: RetentionPolicy, now: Int64, slice: Int) async throws -> PruneReport

    /// Bytes the store takes on disk.
    var sizeOnDisk: Int { get }

    // MARK: Held in memory

    /// Asks the store to keep every series' buckets of its finest level from `from` on in memory for `holder`, fed
    /// by its own commits, so ``RollupReader/sums(level:series:from:to:fields:)`` over them reads no rows; nil: this
    /// holder needs none. The store holds from the earliest its holders ask for (the alert service asks every
    /// round, the live pages while one is open). A store that cannot (PostgreSQL, written by several daemons)
    /// ignores it.
    func keepRecentBuckets(from: Int64?, for holder: RecentBucketHolder) async throws

    /// Whether every series' buckets of `level` starting at or after `from` are held in memory
    /// (``keepRecentBuckets(from:for:)``), so a sum over them reads no rows at that level however long the window.
    func holdsRecentBuckets(level: RollupLevel, from: Int64) -> Bool

    /// A number that changes whenever the series, their link facts, the agents' names and labels or the memberships
    /// may have changed (not last-seen times), so a catalogue read at one generation holds while it stays the same;
    /// nil when the store cannot tell, and the catalogue must be read each time.
    func catalogueGeneration() -> Int64?

    /// A number that changes whenever a commit may have changed what a read of buckets, bills or the catalogue
    /// gives, so an answer read at one generation holds while it stays the same (the live pages' shared reads);
    /// nil when the store cannot tell (another process writes it).
    func dataGeneration() -> Int64?
}

extension MetricStore {
    public func ingest(_ batches: [IngestBatch], receivedAt: Int64) async throws -> [IngestOutcome] {
        try await ingest(batches, receivedAt: receivedAt, willStore: nil)
    }

    /// ``unplacedDays(series:from:to:)`` summed per series over the days.
    public func unplaced(series: [Int64], from: Int64, to: Int64) async throws -> [Int64: UnplacedTotals] {
        try await unplacedDays(series: series, from: from, to: to).mapValues { days in
            days.reduce(into: UnplacedTotals()) { $0.add($1.totals) }
        }
    }

    public func keepRecentBuckets(from: Int64?, for holder: RecentBucketHolder) async throws {}

    public func holdsRecentBuckets(level: RollupLevel, from: Int64) -> Bool { false }

    public func catalogueGeneration() -> Int64? { nil }

    public func dataGeneration() -> Int64? { nil }
}

/// Who asks a store to hold recent buckets (``MetricStore/keepRecentBuckets(from:for:)``): each asks for its own
/// `from`, and one letting go leaves the others' held.
public enum RecentBucketHolder: Hashable, Sendable {
    /// The alert service, for its rules' windows.
    case alerts
    /// The live pages, for the windows of the open ones.
    case livePages
}

/// How much ``MetricStore/keepRecentBuckets(from:for:)`` may ask a store to hold.
public enum RecentBucketLimit {
    /// The most buckets of one series: a bound on memory (10,000 interfaces and their scopes × 64 × 192 bytes is
    /// about 130 MB). Longer windows are read from the rows.
    public static let perSeries = 64
}
