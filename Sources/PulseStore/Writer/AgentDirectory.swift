import PulseAnalytics
import PulseCore

/// The first stage of a batch through ``StoreWriter``: the agent it came from, its labels, and the history of its
/// group memberships (`docs/windows.md`, "Scopes"). The rows of the agents this writer has seen are cached here.
struct AgentDirectory {
    /// Agents by name; bounded by ``StoreWriter/begin(in:)`` (a miss reads the row again).
    var rows: [String: StoreWriter.AgentRow] = [:]

    /// Forgets every cached agent (another writer may have changed them).
    mutating func forget() {
        rows.removeAll()
    }

    /// Forgets the agents another writer relabelled or moved: they are read again when next needed.
    mutating func forget(_ changed: Set<Int64>) {
        guard !changed.isEmpty else { return }
        rows = rows.filter { !changed.contains($0.value.id) }
    }

    /// The row of the agent a batch received at `now` came from, created or refreshed, and moved to the batch's
    /// labels when they differ and nothing moved the agent later (`docs/windows.md`, "Scopes": labels move forward in
    /// receive time only); and whether it moved.
    mutating func admit(
        _ identity: AgentIdentity, at now: Int64, commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws -> (row: StoreWriter.AgentRow, relabelled: Bool) {
        var agent = try await row(identity, at: now, commit: &commit, in: db)
        var relabelled = false
        // A batch received before the agent was last moved (a reload's move, applied while the batch waited in the
        // journal) keeps the groups it finds.
        if agent.identity.labels != identity.labels && now >= Self.lastMove(agent.memberships) {
            try await relabel(&agent, to: identity.labels, at: now, commit: &commit, in: db)
            relabelled = true
        }
        rows[identity.name] = agent
        return (agent, relabelled)
    }

    /// Moves the known agent `name` to `labels` at `now`, as the daemon's configuration now gives them; returns
    /// whether it moved. An agent never seen, one with those labels already, and one whose last move is later than
    /// `now` stay as they are.
    mutating func move(
        _ name: String, to labels: Labels, at now: Int64, commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws -> Bool {
        guard var agent = try await known(name, in: db) else { return false }
        guard agent.identity.labels != labels, now >= Self.lastMove(agent.memberships) else { return false }
        try await relabel(&agent, to: labels, at: now, commit: &commit, in: db)
        rows[name] = agent
        return true
    }

    private mutating func row(
        _ identity: AgentIdentity, at now: Int64, commit: inout PendingCommit, in db: some IngestTransaction
    ) async throws -> StoreWriter.AgentRow {
        if let cached = rows[identity.name], cached.identity.hostname == identity.hostname,
            cached.identity.version == identity.version, now - cached.lastSeen < 60_000
        {
            return cached
        }
        // One this writer had not cached (after a restart, or one another writer changed) is in the catalogues
        // already: as for a cached one, only a new hostname or version changes them.
        if var known = try await known(identity.name, in: db) {
            if known.identity.hostname != identity.hostname || known.identity.version != identity.version {
                commit.catalogueChanged = true
            }
            try await db.touchAgent(id: known.id, hostname: identity.hostname, version: identity.version, at: now)
            known.identity.hostname = identity.hostname
            known.identity.version = identity.version
            known.lastSeen = now
            return known
        }
        let (id, labels) = try await db.upsertAgent(identity, at: now)
        commit.catalogueChanged = true
        var stored = identity
        stored.labels = labels
        return StoreWriter.AgentRow(
            id: id, identity: stored, lastSeen: now,
            memberships: try await db.memberships(agent: id, name: identity.name))
    }

    /// The row of the agent `name`: cached, else as stored with its memberships; nil for an agent never seen.
    private func known(_ name: String, in db: some IngestTransaction) async throws -> StoreWriter.AgentRow? {
        if let cached = rows[name] { return cached }
        guard let row = try await db.agent(named: name) else { return nil }
        return StoreWriter.AgentRow(
            id: row.id, identity: row.identity, lastSeen: row.lastSeen,
            memberships: try await db.memberships(agent: row.id, name: name))
    }

    /// Records that the agent's labels changed at `now`: memberships of groups it left end, new ones begin.
    private func relabel(
        _ agent: inout StoreWriter.AgentRow, to labels: Labels, at now: Int64, commit: inout PendingCommit,
        in db: some IngestTransaction
    ) async throws {
        let groups = Set(labels.pairs.map { GroupKey(key: $0.key, value: $0.value) })
        for index in agent.memberships.indices where agent.memberships[index].to == nil {
            let membership = agent.memberships[index]
            guard !groups.contains(membership.group) else { continue }
            agent.memberships[index].to = now
            try await db.endMembership(agent: agent.id, membership, at: now)
        }
        let current = Set(agent.memberships.filter { $0.to == nil }.map(\.group))
        for group in groups.subtracting(current).sorted() {
            agent.memberships.append(Membership(agent: agent.identity.name, group: group, from: now, to: nil))
            try await db.beginMembership(agent: agent.id, group: group, at: now)
        }
        agent.identity.labels = labels
        try await db.setLabels(agent: agent.id, labels)
        commit.catalogueChanged = true
    }

    /// When the agent's groups last changed (its first memberships' beginning when they never did).
    static func lastMove(_ memberships: [Membership]) -> Int64 {
        var last = Int64.min
        for membership in memberships { last = max(last, membership.to ?? membership.from, membership.from) }
        return last
    }

    /// The groups of the memberships in force at `time`; before the first membership began, the first ones.
    static func groups(of memberships: [Membership], at time: Int64) -> [GroupKey] {
        guard let earliest = memberships.map(\.from).min() else { return [] }
        let at = max(time, earliest)
        return memberships.filter { $0.from <= at && ($0.to.map { at < $0 } ?? true) }.map(\.group).sorted()
    }

    /// Whether ``groups(of:at:)`` gives the same groups at `first` and `second`: no membership begins or ends
    /// between them.
    static func sameGroups(_ memberships: [Membership], at first: Int64, _ second: Int64) -> Bool {
        guard !memberships.isEmpty else { return true }
        var earliest = Int64.max
        for membership in memberships { earliest = min(earliest, membership.from) }
        let (a, b) = (max(first, earliest), max(second, earliest))
        for membership in memberships {
            if (membership.from <= a) != (membership.from <= b) { return false }
            if let to = membership.to, (a < to) != (b < to) { return false }
        }
        return true
    }
}

extension StoreWriter {
    package struct AgentRow {
        var id: Int64
        var identity: AgentIdentity
        var lastSeen: Int64
        /// Memberships, oldest first.
        var memberships: [Membership]

        package init(id: Int64, identity: AgentIdentity, lastSeen: Int64, memberships: [Membership]) {
            self.id = id
            self.identity = identity
            self.lastSeen = lastSeen
            self.memberships = memberships
        }
    }
}
