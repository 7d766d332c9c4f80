import PulseAnalytics
import PulseCore

@testable import PulseStore

/// The rows of ``IngestTransaction`` in dictionaries, for driving the writer's stages alone, where what a store's
/// SQL does is not the point (the real stores' tests check that). Every write is also told in ``log``, in order.
final class MemoryIngestTransaction: IngestTransaction {
    struct SeriesKey: Hashable {
        var kind: SeriesKind
        var agent: Int64
        var name: [UInt8]
    }

    var revision: Int64 = 0
    /// What ``changes(after:)`` answers.
    var shared: StoreWriter.SharedChanges?
    var metas: [String: Int64] = [:]
    var log: [String] = []

    var agents: [String: (id: Int64, identity: AgentIdentity, lastSeen: Int64)] = [:]
    var memberships: [Int64: [Membership]] = [:]
    var streams: [String: Int64] = [:]
    var ranges: [Int64: [ClosedRange<UInt64>]] = [:]
    var dropped: [Int64: Int64] = [:]
    var series: [SeriesKey: Int64] = [:]
    var epochs: [CounterEpoch: Int64] = [:]
    var facts: [Int64: LinkState] = [:]
    var states: [Int64: StoreWriter.SeriesState] = [:]
    var gaps: [Int64: [StoreWriter.Gap]] = [:]
    var buckets: [StoreWriter.BucketKey: BucketValues] = [:]
    var billChanges: [StoreWriter.ChangeKey: StoreWriter.Change] = [:]
    var forwardChanges: [StoreWriter.ChangeKey: StoreWriter.Change] = [:]
    var unplaced: [StoreWriter.UnplacedKey: UnplacedTotals] = [:]
    var anomalies: [Anomaly] = []
    private var lastID: Int64 = 0

    private func newID() -> Int64 {
        lastID += 1
        return lastID
    }

    func lockRevision() throws -> Int64 { revision }
    func changes(after revision: Int64) throws -> StoreWriter.SharedChanges? { shared }
    func meta(_ key: String) throws -> Int64 { metas[key] ?? 0 }

    func advanceTotals(revision: Int64, batches: Int64, values: Int64, unplacedSteps: Int64) throws {
        self.revision = revision
        log.append("advanceTotals \(revision) batches \(batches) values \(values) unplaced \(unplacedSteps)")
    }

    // MARK: Agents and memberships

    func upsertAgent(_ identity: AgentIdentity, at now: Int64) throws -> (id: Int64, labels: Labels) {
        log.append("upsertAgent \(identity.name)")
        if var known = agents[identity.name] {
            known.identity.hostname = identity.hostname
            known.identity.version = identity.version
            known.lastSeen = now
            agents[identity.name] = known
            return (known.id, known.identity.labels)
        }
        var stored = identity
        stored.labels = Labels([])
        let id = newID()
        agents[identity.name] = (id, stored, now)
        return (id, stored.labels)
    }

    func touchAgent(id: Int64, hostname: String, version: String, at now: Int64) throws {
        log.append("touchAgent \(id) \(hostname) \(version) \(now)")
    }

    func agent(named name: String) throws -> (id: Int64, identity: AgentIdentity, lastSeen: Int64)? { agents[name] }

    func memberships(agent id: Int64, name: String) throws -> [Membership] { memberships[id] ?? [] }

    func endMembership(agent: Int64, _ membership: Membership, at time: Int64) throws {
        log.append("end \(membership.group) at \(time)")
        guard let index = memberships[agent]?.firstIndex(of: membership) else { return }
        memberships[agent]![index].to = time
    }

    func beginMembership(agent: Int64, group: GroupKey, at time: Int64) throws {
        log.append("begin \(group) at \(time)")
        let name = agents.values.first { $0.id == agent }?.identity.name ?? ""
        memberships[agent, default: []].append(Membership(agent: name, group: group, from: time, to: nil))
    }

    func setLabels(agent: Int64, _ labels: Labels) throws {
        log.append("setLabels \(labels.pairs.map { "\($0.key)=\($0.value)" }.joined(separator: ","))")
        for (name, row) in agents where row.id == agent { agents[name]!.identity.labels = labels }
    }

    // MARK: Deduplication

    func streamID(agent: Int64, stream: UInt64) throws -> Int64 {
        if let known = streams["\(agent)/\(stream)"] { return known }
        let id = newID()
        streams["\(agent)/\(stream)"] = id
        return id
    }

    func ranges(stream: Int64) throws -> [ClosedRange<UInt64>] { ranges[stream] ?? [] }

    func insertRange(stream: Int64, _ range: ClosedRange<UInt64>) throws {
        log.append("insertRange \(range)")
        ranges[stream, default: []].append(range)
        ranges[stream]!.sort { $0.lowerBound < $1.lowerBound }
    }

    func updateRange(stream: Int64, first: UInt64, to range: ClosedRange<UInt64>) throws {
        log.append("updateRange \(first) to \(range)")
        guard let index = ranges[stream]?.firstIndex(where: { $0.lowerBound == first }) else { return }
        ranges[stream]![index] = range
    }

    func deleteRange(stream: Int64, first: UInt64) throws {
        log.append("deleteRange \(first)")
        ranges[stream]?.removeAll { $0.lowerBound == first }
    }

    func addDropped(stream: Int64, _ count: Int64) throws {
        dropped[stream, default: 0] += count
    }

    // MARK: Series

    func seriesID(_ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64) throws -> (id: Int64, created: Bool) {
        let key = SeriesKey(kind: kind, agent: agent, name: name)
        if let known = series[key] { return (known, false) }
        let id = newID()
        series[key] = id
        return (id, true)
    }

    func epochID(_ epoch: CounterEpoch) throws -> Int64 {
        if let known = epochs[epoch] { return known }
        let id = newID()
        epochs[epoch] = id
        return id
    }

    func facts(series: Int64) throws -> LinkState? { facts[series] }

    func setFacts(series: Int64, _ state: LinkState, at time: Int64) throws {
        log.append("setFacts \(series) at \(time)")
        facts[series] = state
    }

    func insertRaw(
        _ raw: RawBatch, agent: Int64, order: Int64, shift: Int64, interval: Int64, heartbeat: Int64, from: Int64,
        to: Int64
    ) throws {
        log.append("insertRaw \(order)")
    }

    // MARK: Counter order

    func seriesState(_ series: Int64) throws -> StoreWriter.SeriesState? { states[series] }

    func writeStates(_ states: [(series: Int64, state: StoreWriter.SeriesState)]) throws {
        for (series, state) in states { self.states[series] = state }
    }

    func gap(series: Int64, before position: SamplePosition) throws -> StoreWriter.Gap? {
        gaps[series]?.filter { $0.previous.position < position }.max { $0.previous.position < $1.previous.position }
    }

    func deleteGap(series: Int64, previous: SamplePosition) throws {
        log.append("deleteGap \(series) from \(previous.order)")
        gaps[series]?.removeAll { $0.previous.position == previous }
    }

    func saveGap(_ gap: StoreWriter.Gap, series: Int64, revision: Int64) throws {
        log.append("saveGap \(series) \(gap.previous.order)-\(gap.next.order) \(gap.step.timing)")
        gaps[series, default: []].append(gap)
    }

    func virtualGaps(endedBefore cutoff: Int64, limit: Int) throws -> [(series: Int64, gap: StoreWriter.Gap)] {
        let all = gaps.flatMap { series, gaps in gaps.map { (series: series, gap: $0) } }
        return Array(all.filter { $0.gap.isVirtual && $0.gap.next.time < cutoff }.prefix(limit))
    }

    // MARK: The commit's changes

    func writeBuckets(_ deltas: [StoreWriter.BucketKey: BucketValues], levels: [RollupLevel], revision: Int64) throws {
        for (key, values) in deltas { buckets[key, default: .empty].merge(values) }
    }

    func writeChanges(
        bill: [StoreWriter.ChangeKey: StoreWriter.Change], forward: [StoreWriter.ChangeKey: StoreWriter.Change],
        revision: Int64
    ) throws {
        for (key, change) in bill { billChanges[key, default: StoreWriter.Change()].add(change) }
        for (key, change) in forward { forwardChanges[key, default: StoreWriter.Change()].add(change) }
    }

    func writeUnplaced(_ changes: [StoreWriter.UnplacedKey: UnplacedTotals], revision: Int64) throws {
        for (key, change) in changes { unplaced[key, default: UnplacedTotals()].add(change) }
    }

    func insertAnomaly(_ anomaly: Anomaly, revision: Int64) throws {
        anomalies.append(anomaly)
    }
}
