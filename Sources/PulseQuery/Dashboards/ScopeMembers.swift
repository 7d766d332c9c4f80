import PulseAnalytics
import PulseStore

/// The series a dashboard's scope covers during its window, from the catalogue.
public struct ScopeMembers: Sendable {
    /// The scope's own series (nil when the store has none yet: its panels show no data).
    public var record: SeriesRecord?
    /// Hosts in the scope, by name.
    public var hosts: [SeriesRecord]
    /// Interfaces counted in the scope's totals, by name.
    public var counted: [SeriesRecord]
    /// Every interface of the scope's hosts, counted or not, by name.
    public var interfaces: [SeriesRecord]
    /// Groups that hold hosts of the scope, by name.
    public var groups: [SeriesRecord]
    /// What the scope is, for people: `the fleet`, `host web-01`, `group site=fra1`.
    public var label: String

    public init(_ scope: DashboardScope, catalogue: Catalogue, window: Window) {
        let fixed: Fixed
        switch scope {
        case .fleet, .host:
            // Who they are does not depend on the window: made once per catalogue.
            fixed = catalogue.memo.members(scope) { Fixed(scope, catalogue: catalogue, window: window) }
        case .group:
            fixed = Fixed(scope, catalogue: catalogue, window: window)
        }
        record = fixed.record
        hosts = fixed.hosts
        counted = fixed.counted
        interfaces = fixed.interfaces
        label = fixed.label
        let agents = fixed.agents
        groups = Self.byName(
            catalogue.groups.filter { group in
                guard let key = group.group else { return false }
                return !catalogue.agents(in: key, during: window).isDisjoint(with: agents)
            })
    }

    /// The members but the groups, which a window decides (a host's groups are those it was in then); for the fleet
    /// and a host no window changes them.
    struct Fixed: Sendable {
        var record: SeriesRecord?
        var hosts: [SeriesRecord]
        var agents: Set<String>
        var counted: [SeriesRecord]
        var interfaces: [SeriesRecord]
        var label: String

        init(_ scope: DashboardScope, catalogue: Catalogue, window: Window) {
            switch scope {
            case .fleet:
                record = catalogue.fleet
                hosts = catalogue.hosts
                label = "the fleet"
            case .host(let agent):
                record = catalogue.host(agent)
                hosts = record.map { [$0] } ?? []
                label = "host \(agent)"
            case .group(let group):
                record = catalogue.group(group)
                let agents = catalogue.agents(in: group, during: window)
                hosts = catalogue.hosts.filter { $0.agent.map(agents.contains) ?? false }
                label = "group \(group)"
            }
            hosts = ScopeMembers.byName(hosts)
            let agents = Set(hosts.compactMap(\.agent))
            self.agents = agents
            counted = ScopeMembers.byName(record.map { catalogue.members(of: $0, during: window) } ?? [])
            interfaces = ScopeMembers.byName(catalogue.interfaces.filter { $0.agent.map(agents.contains) ?? false })
        }
    }

    /// `records` by name. A record's name is made each time it is asked for: sorting 10,000 interfaces by it made
    /// about 280,000 strings, an eighth of a fleet overview's read (`perf`, docs/benchmarks.md); each is made once.
    static func byName(_ records: [SeriesRecord]) -> [SeriesRecord] {
        records.map { (name: $0.name, record: $0) }.sorted { $0.name < $1.name }.map(\.record)
    }

    /// Those of `candidates` (in name order, as the lists above are) that have a `value`, highest first, ties by
    /// name: integers and positions are compared, not names. A name is made each time it is asked for, and the fleet
    /// overview's busiest interfaces, 10,000 of them sorted with a name comparison on each tie, were a fifth of its
    /// read (`perf`, docs/benchmarks.md).
    public static func highestFirst<Candidate>(
        _ candidates: [Candidate], name: (Candidate) -> String, value: (Candidate) -> Int64?
    ) -> [Candidate] {
        assert(zip(candidates, candidates.dropFirst()).allSatisfy { name($0) <= name($1) }, "candidates not by name")
        var keyed = [(value: Int64, position: Int)]()
        keyed.reserveCapacity(candidates.count)
        for (position, candidate) in candidates.enumerated() {
            if let value = value(candidate) { keyed.append((value, position)) }
        }
        keyed.sort { $0.value != $1.value ? $0.value > $1.value : $0.position < $1.position }
        return keyed.map { candidates[$0.position] }
    }

    /// The scope's series of `kind`: its hosts, counted interfaces or groups.
    public func series(of kind: SeriesKind) -> [SeriesRecord] {
        switch kind {
        case .host: hosts
        case .interface: counted
        case .group: groups
        case .fleet: record.map { [$0] } ?? []
        }
    }
}
