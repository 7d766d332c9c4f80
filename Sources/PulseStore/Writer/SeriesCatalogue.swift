import PulseAnalytics
import PulseCore

/// The ids a batch's samples are filed under (series and counter epochs) and each interface's latest link facts,
/// with a history row when they change. Cached here; ids never change, facts are another writer's to change too.
struct SeriesCatalogue {
    struct SeriesKey: Hashable {
        var kind: SeriesKind
        var agent: Int64
        var name: [UInt8]
    }

    var series: [SeriesKey: Int64] = [:]
    var epochs: [CounterEpoch: Int64] = [:]
    /// Interfaces' latest link facts; bounded by ``StoreWriter/begin(in:)`` with ``StepCounter/states``.
    var facts: [Int64: LinkState] = [:]

    /// Takes the link facts another writer changed, for the series this one holds.
    mutating func apply(_ changed: [Int64: LinkState]) {
        for (series, state) in changed where facts[series] != nil { facts[series] = state }
    }

    /// The id of a series, created (seen first at `now`) if new.
    mutating func seriesID(
        _ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64, commit: inout PendingCommit,
        in db: some IngestTransaction
    ) async throws -> Int64 {
        let key = SeriesKey(kind: kind, agent: agent, name: name)
        if let known = series[key] { return known }
        // Interfaces come and go (containers, VPNs): keep the cache bounded; a miss only costs a lookup.
        if series.count >= 200_000 { series.removeAll(keepingCapacity: true) }
        let (id, created) = try await db.seriesID(kind, agent: agent, name: name, at: now)
        series[key] = id
        // A series this writer had not cached (after a restart, or past the bound) is in the catalogues already.
        if created { commit.catalogueChanged = true }
        return id
    }

    mutating func epochID(_ epoch: CounterEpoch, in db: some IngestTransaction) async throws -> Int64 {
        if let known = epochs[epoch] { return known }
        if epochs.count >= 200_000 { epochs.removeAll(keepingCapacity: true) }
        let id = try await db.epochID(epoch)
        epochs[epoch] = id
        return id
    }

    /// Keeps the interface's latest link facts, and a history row when they change.
    mutating func updateFacts(
        _ series: Int64, _ state: LinkState, at time: Int64, commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws {
        if facts[series] == nil { facts[series] = try await db.facts(series: series) }
        guard facts[series] != state else { return }
        facts[series] = state
        try await db.setFacts(series: series, state, at: time)
        commit.catalogueChanged = true
    }
}
