import PulseAnalytics
import PulseCore

/// The ingest side of every store: one write transaction at a time, through the store's ``IngestTransaction``. It
/// owns the commit (its revision and ``PendingCommit``) and runs each batch through the stages in order:
///
/// 1. ``AgentDirectory``: the agent's row, its labels and the history of its memberships (first: its id keys the
///    streams, and new labels are recorded even from a batch that turns out a duplicate);
/// 2. ``Deduplicator``: whether the batch was stored before (its stream's sequence ranges);
/// 3. ``BatchIntake``, with ``SeriesCatalogue``'s ids and link facts: the batch checked and moved by the clock check,
///    its raw samples and link facts filed, each interface's samples in tick order;
/// 4. ``StepCounter``: the counted steps in counter order, with gaps, late data and unplaced steps, and their scopes;
/// 5. ``BucketPlacement``: each step spread into every rollup level, for the interface and its scopes;
/// 6. ``ChangeTracker``, as the commit is written: its changes to buckets billing or remote write already took in.
///
/// The stages' caches mirror rows the transaction may roll back, so they are dropped after a failure (``reset()``),
/// and the caches of rows another writer may change (states, ranges, agents, facts) are brought up to date when
/// another writer committed since this one last did (``IngestTransaction/lockRevision()``,
/// ``IngestTransaction/changes(after:)``).
package struct StoreWriter {
    let settings: StoreSettings

    var deduplicator: Deduplicator
    var agents = AgentDirectory()
    var catalogue = SeriesCatalogue()
    let intake: BatchIntake
    var counter: StepCounter
    var placement: BucketPlacement
    var tracker: ChangeTracker

    /// The store's revision this writer last saw or committed (nil before its first commit).
    package var revision: Int64?
    /// The commit being built.
    var commit = PendingCommit()

    package init(settings: StoreSettings) {
        self.settings = settings
        deduplicator = Deduplicator(maximumRanges: settings.maximumSequenceRanges)
        intake = BatchIntake(settings: settings)
        counter = StepCounter(settings: settings)
        placement = BucketPlacement(levels: settings.levels)
        tracker = ChangeTracker(levels: settings.levels)
    }

    /// The commit's bucket changes (read after it, for the recent buckets).
    package var deltas: [BucketKey: BucketValues] { commit.deltas }
    /// The revision of the commit being built: equal to ``revision`` once it committed.
    package var pendingRevision: Int64 { commit.revision }
    /// Whether the commit may have changed what a catalogue holds (``PendingCommit/catalogueChanged``).
    package var catalogueChanged: Bool { commit.catalogueChanged }
    /// The commit's changes to the unplaced totals (``PendingCommit/unplaced``).
    package var unplaced: [UnplacedKey: UnplacedTotals] { commit.unplaced }

    /// Forgets everything cached (after a failed commit, whose rows were rolled back).
    package mutating func reset() {
        self = StoreWriter(settings: settings)
    }

    /// Forgets the cached rows another writer may change; ids, which never change, stay.
    mutating func forgetSharedRows() {
        agents.forget()
        deduplicator.forget()
        counter.states.removeAll()
        catalogue.facts.removeAll()
    }

    /// The rows other writers changed since this one last committed (``IngestTransaction/changes(after:)``): the
    /// new first and last samples of series, link facts, and every sequence range of the streams whose ranges
    /// changed; agents whose labels or memberships changed are only named, and read again when next needed.
    package struct SharedChanges {
        package var states: [Int64: SeriesState] = [:]
        package var facts: [Int64: LinkState] = [:]
        package var ranges: [Int64: [ClosedRange<UInt64>]] = [:]
        package var agents = Set<Int64>()

        package init(
            states: [Int64: SeriesState] = [:], facts: [Int64: LinkState] = [:],
            ranges: [Int64: [ClosedRange<UInt64>]] = [:], agents: Set<Int64> = Set<Int64>()
        ) {
            self.states = states
            self.facts = facts
            self.ranges = ranges
            self.agents = agents
        }
    }

    /// Brings the caches up to date with what other writers committed. Only rows this writer holds are taken: the
    /// others are read when first needed, so each daemon holds the rows of its own agents, not the whole fleet's.
    mutating func apply(_ changes: SharedChanges) {
        counter.apply(changes.states)
        catalogue.apply(changes.facts)
        deduplicator.apply(changes.ranges)
        agents.forget(changes.agents)
    }

    // MARK: The commit

    package mutating func ingest(
        _ batches: [IngestBatch], receivedAt now: Int64, willStore: ((Int) -> Void)? = nil,
        in db: some IngestTransaction
    ) async throws -> [IngestOutcome] {
        let revision = try await begin(in: db)
        var outcomes = [IngestOutcome]()
        outcomes.reserveCapacity(batches.count)
        var stored: Int64 = 0
        var values: Int64 = 0
        // A relabelling counts as a change even when every batch was a duplicate: other writers learn of it from
        // the revision moving (``begin(in:)``).
        var relabelled = false
        for (index, batch) in batches.enumerated() {
            willStore?(index)
            let now = batch.receivedAt ?? now
            let agent = try await agents.admit(batch.agent, at: now, commit: &commit, in: db)
            relabelled = relabelled || agent.relabelled
            guard
                try await deduplicator.recordFirstDelivery(
                    agent: agent.row.id, stream: batch.stream, sequence: batch.sequence,
                    droppedBefore: batch.droppedBefore, in: db)
            else {
                outcomes.append(.duplicate)
                continue
            }
            try await store(batch, agent: agent.row, receivedAt: now, in: db)
            outcomes.append(.stored)
            stored += 1
            values += Int64(batch.valueCount)
        }
        willStore?(batches.count)
        if stored > 0 || relabelled || !commit.deltas.isEmpty || !commit.changedSpans.isEmpty
            || !commit.unplaced.isEmpty
        {
            try await writeStates(in: db)
            try await writeDeltas(revision: revision, in: db)
            if !commit.unplaced.isEmpty { try await db.writeUnplaced(commit.unplaced, revision: revision) }
            for anomaly in commit.anomalies { try await db.insertAnomaly(anomaly, revision: revision) }
            try await db.advanceTotals(
                revision: revision, batches: stored, values: values, unplacedSteps: commit.unplacedSteps)
            self.revision = revision
        }
        return outcomes
    }

    /// Clears the commit being built, takes the store's revision, and returns the commit's.
    package mutating func begin(in db: some IngestTransaction) async throws -> Int64 {
        commit.clear()
        placement.run = nil
        // Between commits nothing is pending in them: the caches of series' samples and facts stay bounded however
        // many interfaces agents name (a miss costs a lookup).
        if counter.states.count >= 200_000 || catalogue.facts.count >= 200_000 {
            counter.states.removeAll(keepingCapacity: true)
            catalogue.facts.removeAll(keepingCapacity: true)
        }
        if agents.rows.count >= 100_000 { agents.rows.removeAll(keepingCapacity: true) }
        let current = try await db.lockRevision()
        if current != revision {
            // A revision lower than the last one seen means the database went back (see PostgresStore.WriterSide).
            if let last = revision, current > last, let changes = try await db.changes(after: last) {
                apply(changes)
            } else {
                forgetSharedRows()
            }
            revision = current
        }
        try await tracker.readMarks(in: db)
        commit.revision = current + 1
        return commit.revision
    }

    /// Moves known agents to new labels at `now`, as the daemon's configuration now gives them (a reload or a
    /// start with new `[labels.*]`, `docs/windows.md`, "Scopes"), so a host moved while it is away is moved at once,
    /// not when it comes back. Agents never seen, and agents whose last move is later than `now`, are left as they
    /// are. Returns the names of the agents moved.
    package mutating func relabel(
        _ labels: [String: Labels], at now: Int64, in db: some IngestTransaction
    ) async throws -> [String] {
        let revision = try await begin(in: db)
        var moved = [String]()
        for (name, new) in labels.sorted(by: { $0.key < $1.key }) {
            if try await agents.move(name, to: new, at: now, commit: &commit, in: db) { moved.append(name) }
        }
        if !moved.isEmpty {
            try await writeStates(in: db)
            try await writeDeltas(revision: revision, in: db)
            try await db.advanceTotals(revision: revision, batches: 0, values: 0, unplacedSteps: 0)
            self.revision = revision
        }
        return moved
    }

    /// A stored batch through intake, counting and placement.
    private mutating func store(
        _ batch: IngestBatch, agent: AgentRow, receivedAt now: Int64, in db: some IngestTransaction
    ) async throws {
        let samples = try await intake.read(
            batch, agent: agent, receivedAt: now, catalogue: &catalogue, commit: &commit, in: db)
        let unplacedBefore = commit.unplacedSteps
        var unplacedInterfaces = 0
        for interface in samples.interfaces {
            let before = commit.unplacedSteps
            try await place(interface.samples, series: interface.series, name: interface.name, agent: agent, in: db)
            if commit.unplacedSteps > before { unplacedInterfaces += 1 }
        }
        if commit.unplacedSteps > unplacedBefore {
            commit.anomalies.append(
                BatchIntake.unplacedAnomaly(
                    steps: commit.unplacedSteps - unplacedBefore, interfaces: unplacedInterfaces, of: batch,
                    agent: agent, times: samples.unplacedTimes, receivedAt: now))
        }
    }

    /// Counts and places one logical interface's samples (in counter order); for callers that have samples rather
    /// than batches, too (the 0.1 backfill).
    package mutating func place(
        _ samples: [StepSample], series: Int64, name: InterfaceName, agent: AgentRow, in db: some IngestTransaction
    ) async throws {
        try await counter.place(
            samples, series: series, name: name, agent: agent, catalogue: &catalogue, placement: &placement,
            commit: &commit, in: db)
    }

    package mutating func seriesID(
        _ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64, in db: some IngestTransaction
    ) async throws -> Int64 {
        try await catalogue.seriesID(kind, agent: agent, name: name, at: now, commit: &commit, in: db)
    }

    package mutating func epochID(_ epoch: CounterEpoch, in db: some IngestTransaction) async throws -> Int64 {
        try await catalogue.epochID(epoch, in: db)
    }

    /// Writes the first and last samples of the series this commit moved (once each, however many batches did).
    package mutating func writeStates(in db: some IngestTransaction) async throws {
        try await counter.writeStates(&commit.changedStates, in: db)
    }

    /// Writes the commit's bucket changes, and their changes to buckets billed or forwarded (``ChangeTracker``),
    /// unless `billed` is false: a settled gap moves bytes from its spread into the rows, which changes no
    /// interval's figures.
    package mutating func writeDeltas(revision: Int64, billed: Bool = true, in db: some IngestTransaction) async throws {
        placement.flush(into: &commit)
        let changes = tracker.changes(in: commit, billed: billed)
        try await db.writeBuckets(commit.deltas, levels: settings.levels, revision: revision)
        if !changes.bill.isEmpty || !changes.forward.isEmpty {
            try await db.writeChanges(bill: changes.bill, forward: changes.forward, revision: revision)
        }
    }

    // MARK: Settling gaps

    /// Spreads up to `limit` virtual gaps that ended before `cutoff` into the rollup rows and deletes them; returns
    /// how many. Late data for them is then unplaced (`docs/windows.md`).
    package mutating func settleGaps(
        endedBefore cutoff: Int64, policy: RetentionPolicy, now: Int64, limit: Int, in db: some IngestTransaction
    ) async throws -> Int {
        // The revision first: another daemon's ingest may split or fill these gaps until this one holds it.
        let revision = try await begin(in: db)
        let gaps = try await db.virtualGaps(endedBefore: cutoff, limit: limit)
        guard !gaps.isEmpty else { return 0 }
        for (owner, gap) in gaps {
            placement.settle(gap, of: owner, policy: policy, now: now, into: &commit)
            try await db.deleteGap(series: owner, previous: gap.previous.position)
        }
        try await writeDeltas(revision: revision, billed: false, in: db)
        try await db.advanceTotals(revision: revision, batches: 0, values: 0, unplacedSteps: 0)
        self.revision = revision
        return gaps.count
    }
}
