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
        hosts = Self.byName(hosts)
        let agents = Set(hosts.compactMap(\.agent))
        counted = Self.byName(record.map { catalogue.members(of: $0, during: window) } ?? [])
        interfaces = Self.byName(catalogue.interfaces.filter { $0.agent.map(agents.contains) ?? false })
        groups = Self.byName(
            catalogue.groups.filter { group in
                guard let key = group.group else { return false }
                return !catalogue.agents(in: key, during: window).isDisjoint(with: agents)
            })
    }

    /// `records` by name. A record's name is made each time it is asked for: sorting 10,000 interfaces by it made
    /// about 280,000 strings, an eighth of a fleet overview's read (`perf`, docs/benchmarks.md); each is made once.
    static func byName(_ records: [SeriesRecord]) -> [SeriesRecord] {
        records.map { (name: $0.name, record: $0) }.sorted { $0.name < $1.name }.map(\.record)
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
