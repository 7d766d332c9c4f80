import PulseAnalytics
import PulseCore
import PulseStore
import Synchronization

/// What the store holds, to choose series by name and to know a scope's members: the series, agents and group
/// memberships, read once per query.
public struct Catalogue: Sendable {
    public let series: [SeriesRecord]
    public let agents: [AgentRecord]
    public let memberships: [Membership]
    public let rules: ScopeRules
    private let byID: [Int64: SeriesRecord]
    /// The series of each kind, in catalogue order.
    public let interfaces: [SeriesRecord]
    public let hosts: [SeriesRecord]
    public let groups: [SeriesRecord]
    public let fleet: SeriesRecord?
    /// What is worked out from the catalogue once for all the reads over it (the daemon keeps one catalogue while the
    /// store's does not change).
    let memo = CatalogueMemo()

    public init(series: [SeriesRecord], agents: [AgentRecord], memberships: [Membership], rules: ScopeRules) {
        self.series = series
        self.agents = agents
        self.memberships = memberships
        self.rules = rules
        byID = Dictionary(series.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        interfaces = series.filter { $0.kind == .interface }
        hosts = series.filter { $0.kind == .host }
        groups = series.filter { $0.kind == .group }
        fleet = series.first { $0.kind == .fleet }
    }

    /// Reads the catalogue of `store`.
    public static func load(from store: any MetricStore, rules: ScopeRules) async throws -> Catalogue {
        Catalogue(
            series: try await store.series(), agents: try await store.agents(),
            memberships: try await store.memberships(), rules: rules)
    }

    public subscript(id: Int64) -> SeriesRecord? { byID[id] }

    public func host(_ agent: String) -> SeriesRecord? { series.first { $0.kind == .host && $0.agent == agent } }
    public func group(_ key: GroupKey) -> SeriesRecord? { series.first { $0.kind == .group && $0.group == key } }

    /// Whether an interface counts toward `rule` by its latest facts.
    public func counts(_ interface: SeriesRecord, _ rule: CountingRule) -> Bool {
        guard let name = interface.interface else { return false }
        return rule.counts(
            name: name, kind: interface.facts?.kind ?? .unknown, relation: interface.facts?.relation ?? [])
    }

    /// The agents in `group` at some time in `window`. As at ingest, an agent's first memberships hold from the
    /// beginning of time (its data may be older than the first time the daemon saw its labels).
    public func agents(in group: GroupKey, during window: Window) -> Set<String> {
        Set(memberships(of: group, during: window).map(\.agent))
    }

    /// The memberships of `group` that overlap `window`, an agent's first ones beginning at `Int64.min` (as at
    /// ingest: its data may be older than the first time the daemon saw its labels).
    public func memberships(of group: GroupKey, during window: Window) -> [Membership] {
        var first = [String: Int64]()
        for membership in memberships {
            first[membership.agent] = min(first[membership.agent] ?? .max, membership.from)
        }
        return memberships.compactMap { membership in
            var held = membership
            if held.from == first[held.agent] { held.from = .min }
            guard held.group == group, held.from < window.to, held.to.map({ $0 > window.from }) ?? true else {
                return nil
            }
            return held
        }
    }

    /// The interfaces counted in a scope during `window` (a scope's members; an interface is its own).
    public func members(of scope: SeriesRecord, during window: Window) -> [SeriesRecord] {
        switch scope.kind {
        case .interface:
            return [scope]
        case .host:
            return interfaces.filter { $0.agent == scope.agent && counts($0, rules.standard) }
        case .fleet:
            return interfaces.filter { counts($0, rules.standard) }
        case .group:
            guard let group = scope.group else { return [] }
            let agents = agents(in: group, during: window)
            let rule = rules.rule(for: group)
            return interfaces.filter { $0.agent.map(agents.contains) ?? false && counts($0, rule) }
        }
    }

    /// The series a selection names, with a clear error when it names nothing.
    public func select(_ selection: Selection) throws(QueryError) -> [SeriesRecord] {
        if let agent = selection.agent, !agents.contains(where: { $0.name == agent }) {
            throw QueryError("unknown agent '\(agent)'; known: \(list(agents.map(\.name)))", about: "agent")
        }
        if let group = selection.group, !series.contains(where: { $0.group == group }) {
            throw QueryError(
                "unknown group '\(group)'; known: \(list(groups.compactMap { $0.group?.description }))", about: "group")
        }
        var chosen: [SeriesRecord]
        switch selection.kind {
        case .interface:
            chosen = interfaces.filter { interface in
                (selection.agent.map { interface.agent == $0 } ?? true)
                    && (selection.interface.map { InterfaceFilter.matches($0, interface.interface!) } ?? true)
                    && (selection.group.map { group in
                        memberships.contains { $0.agent == interface.agent && $0.group == group }
                    } ?? true)
            }
            if chosen.isEmpty, let interface = selection.interface {
                throw QueryError(
                    "no interface matches '\(interface)'\(selection.agent.map { " on \($0)" } ?? ""); known: \(list(interfaces.filter { selection.agent == nil || $0.agent == selection.agent }.map(\.name)))",
                    about: "interface")
            }
        case .host:
            chosen = hosts.filter { host in
                (selection.agent.map { host.agent == $0 } ?? true)
                    && (selection.group.map { group in
                        memberships.contains { $0.agent == host.agent && $0.group == group }
                    }
                        ?? true)
            }
        case .group:
            chosen = selection.group.map { group in groups.filter { $0.group == group } } ?? groups
        case .fleet:
            chosen = fleet.map { [$0] } ?? []
        }
        return chosen
    }

    private func list(_ names: [String]) -> String {
        names.isEmpty ? "none yet" : names.sorted().prefix(20).joined(separator: ", ") + (names.count > 20 ? " …" : "")
    }
}

/// Which series a query is about (the CLI's `--agent`, `--interface`, `--group`, and the scope).
public struct Selection: Sendable, Hashable {
    public var kind: SeriesKind
    public var agent: String?
    /// A shell glob of interface names.
    public var interface: String?
    public var group: GroupKey?

    public init(kind: SeriesKind, agent: String? = nil, interface: String? = nil, group: GroupKey? = nil) {
        self.kind = kind
        self.agent = agent
        self.interface = interface
        self.group = group
    }
}

/// Lists made from one catalogue, kept with it: the daemon's live pages read the same catalogue again and again, and
/// the fleet overview's members (10,000 interfaces in name order) were an eighth of each of its reads (`perf`,
/// docs/benchmarks.md). Bounded by the catalogue: one entry per scope it has.
final class CatalogueMemo: Sendable {
    private let members = Mutex<[DashboardScope: ScopeMembers.Fixed]>([:])

    /// The members of `scope` that do not depend on a window, made by `make` the first time.
    func members(_ scope: DashboardScope, _ make: () -> ScopeMembers.Fixed) -> ScopeMembers.Fixed {
        if let kept = members.withLock({ $0[scope] }) { return kept }
        let made = make()
        members.withLock { $0[scope] = made }
        return made
    }
}
