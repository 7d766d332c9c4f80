import PulseAnalytics
import PulseCore

extension StepCounter {
    /// The scope series a step ending at `next` counts toward: the host and the fleet when the standard rule
    /// counts the interface, and each group the agent belonged to at `next.time` whose rule counts it.
    func scopes(
        of name: InterfaceName, agent: StoreWriter.AgentRow, at next: StepSample, catalogue: inout SeriesCatalogue,
        commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws -> [Int64] {
        var ids = [Int64]()
        let rules = settings.rules
        if rules.standard.counts(name: name, kind: next.kind, relation: next.relation) {
            ids.append(try await catalogue.seriesID(.host, agent: agent.id, name: [], at: next.time, commit: &commit, in: db))
            ids.append(try await catalogue.seriesID(.fleet, agent: 0, name: [], at: next.time, commit: &commit, in: db))
        }
        for group in AgentDirectory.groups(of: agent.memberships, at: next.time)
        where rules.rule(for: group).counts(name: name, kind: next.kind, relation: next.relation) {
            ids.append(
                try await catalogue.seriesID(
                    .group, agent: 0, name: Array(group.description.utf8), at: next.time, commit: &commit, in: db))
        }
        return ids
    }

    /// The scopes of a step from `start` to `next` during which the agent joined or left a group: the host and the
    /// fleet whole (they depend on the kind alone), each group for the parts of `[start, next.time)` the agent was in
    /// it (``AgentDirectory/groups(of:at:)`` at each time), one entry per part.
    func scopes(
        of name: InterfaceName, agent: StoreWriter.AgentRow, at next: StepSample, from start: Int64,
        catalogue: inout SeriesCatalogue, commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws -> (ids: [Int64], parts: [Range<Int64>?]) {
        var ids = [Int64]()
        var parts = [Range<Int64>?]()
        let rules = settings.rules
        if rules.standard.counts(name: name, kind: next.kind, relation: next.relation) {
            ids.append(try await catalogue.seriesID(.host, agent: agent.id, name: [], at: next.time, commit: &commit, in: db))
            ids.append(try await catalogue.seriesID(.fleet, agent: 0, name: [], at: next.time, commit: &commit, in: db))
            parts += [nil, nil]
        }
        // The times inside the span where the groups change, then each stretch between them by its groups.
        var cuts = [start]
        for membership in agent.memberships {
            for time in [membership.from, membership.to].compactMap({ $0 }) where start < time && time < next.time {
                cuts.append(time)
            }
        }
        cuts = Array(Set(cuts)).sorted() + [next.time]
        for index in cuts.indices.dropLast() {
            let part = cuts[index]..<cuts[index + 1]
            for group in AgentDirectory.groups(of: agent.memberships, at: part.lowerBound)
            where rules.rule(for: group).counts(name: name, kind: next.kind, relation: next.relation) {
                let id = try await catalogue.seriesID(
                    .group, agent: 0, name: Array(group.description.utf8), at: next.time, commit: &commit, in: db)
                // A group the agent stayed in across a cut keeps one part.
                if let previous = ids.indices.last(where: {
                    ids[$0] == id && parts[$0]?.upperBound == part.lowerBound
                }) {
                    parts[previous] = parts[previous]!.lowerBound..<part.upperBound
                } else {
                    ids.append(id)
                    parts.append(part)
                }
            }
        }
        return (ids, parts)
    }
}
