import PulseAnalytics

/// The commit ``StoreWriter`` is building: what its stages found to write across the batches of one group commit,
/// written once at its end. The stages add to it through `inout`; ``StoreWriter/begin(in:)`` clears it.
struct PendingCommit {
    /// The revision the commit will have (``StoreWriter/begin(in:)``).
    var revision: Int64 = 0
    /// Bucket changes at every level, of interfaces and scopes (``BucketPlacement``).
    var deltas: [StoreWriter.BucketKey: BucketValues] = [:]
    /// Spans of buckets that changed without a delta row (a virtual gap came or went), for ``ChangeTracker``.
    var changedSpans: [(series: Int64, from: Int64, to: Int64)] = []
    /// The host, group and fleet series the commit changed (remote write forwards interfaces only).
    var scopeSeries = Set<Int64>()
    /// The series whose first or last sample in counter order moved (``StepCounter/states``).
    var changedStates = Set<Int64>()
    /// Changes to the unplaced totals (`docs/windows.md`, "Time that cannot be placed"), and how many steps the
    /// commit could not place.
    var unplaced: [StoreWriter.UnplacedKey: UnplacedTotals] = [:]
    var unplacedSteps: Int64 = 0
    var anomalies: [Anomaly] = []
    /// Whether the commit may change what a catalogue holds (series, link facts, agents' names and labels,
    /// memberships; not last-seen times): see ``SQLiteStore/catalogueGeneration()``.
    var catalogueChanged = false

    /// Empties the buffers, keeping their capacity for the next commit; the revision stays until the next is taken.
    mutating func clear() {
        deltas.removeAll(keepingCapacity: true)
        changedSpans.removeAll(keepingCapacity: true)
        scopeSeries.removeAll(keepingCapacity: true)
        changedStates.removeAll(keepingCapacity: true)
        unplaced.removeAll(keepingCapacity: true)
        unplacedSteps = 0
        anomalies.removeAll()
        catalogueChanged = false
    }

    /// Adds (or with `sign` −1 takes out) an unplaced step's counts to the unplaced totals of the interface and its
    /// scopes, on the UTC day of `time`, when it was received.
    mutating func addUnplaced(_ counted: Traffic, series: Int64, scopes: [Int64], at time: Int64, sign: Int64) {
        let day = RollupLevel.oneDay.bucketStart(time)
        let change = UnplacedTotals(
            traffic: TrafficDelta(clamping: counted) &* TrafficDelta(repeating: sign), steps: sign)
        for id in [series] + scopes {
            unplaced[StoreWriter.UnplacedKey(series: id, day: day), default: UnplacedTotals()].add(change)
        }
    }

    /// Records that the buckets of `series` between `from` and `to` changed without a delta row (a virtual gap came
    /// or went), for billing and remote write.
    mutating func markChanged(from: Int64, to: Int64, series: [Int64]) {
        for id in series { changedSpans.append((id, min(from, to), max(from, to))) }
        // The first is the interface, the rest its scopes.
        for scope in series.dropFirst() { scopeSeries.insert(scope) }
    }
}

extension StoreWriter {
    /// A row of the unplaced totals: a series and the UTC day its steps were received.
    package struct UnplacedKey: Hashable {
        package var series: Int64
        package var day: Int64
    }
}
