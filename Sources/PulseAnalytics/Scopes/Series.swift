import PulseCore

/// What a rollup series is: a logical interface, or a scope that sums counted interfaces.
public enum SeriesKind: Int, Sendable, Hashable, CaseIterable {
    case interface = 0
    case host = 1
    case group = 2
    case fleet = 3

    public var name: String {
        switch self {
        case .interface: "interface"
        case .host: "host"
        case .group: "group"
        case .fleet: "fleet"
        }
    }
}

/// One rollup series of the store.
public struct SeriesRecord: Sendable, Hashable {
    public var id: Int64
    public var kind: SeriesKind
    /// The agent (interface and host series).
    public var agent: String?
    /// The interface name (interface series).
    public var interface: InterfaceName?
    /// The group (group series).
    public var group: GroupKey?
    /// The latest link facts (interface series).
    public var facts: LinkState?
    public var firstSeen: Int64
    public var lastSeen: Int64

    public init(
        id: Int64, kind: SeriesKind, agent: String? = nil, interface: InterfaceName? = nil, group: GroupKey? = nil,
        facts: LinkState? = nil, firstSeen: Int64 = 0, lastSeen: Int64 = 0
    ) {
        self.id = id
        self.kind = kind
        self.agent = agent
        self.interface = interface
        self.group = group
        self.facts = facts
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    /// `web-01/eth0`, `web-01`, `site=fra1`, `fleet`.
    public var name: String {
        switch kind {
        case .interface: "\(agent ?? "")/\(interface?.description ?? "")"
        case .host: agent ?? ""
        case .group: group?.description ?? ""
        case .fleet: "fleet"
        }
    }
}

/// An agent as the store knows it.
public struct AgentRecord: Sendable, Hashable {
    public var name: String
    public var hostname: String
    public var version: String
    public var labels: Labels
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Batches the agent's spool dropped because it was full, as the agent reported them.
    public var droppedBatches: Int64

    public init(
        name: String, hostname: String, version: String, labels: Labels, firstSeen: Int64, lastSeen: Int64,
        droppedBatches: Int64
    ) {
        self.name = name
        self.hostname = hostname
        self.version = version
        self.labels = labels
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.droppedBatches = droppedBatches
    }
}

/// An agent's membership of a group over a span of time: `[from, to)`, `to` nil while it lasts.
public struct Membership: Sendable, Hashable {
    public var agent: String
    public var group: GroupKey
    public var from: Int64
    public var to: Int64?

    public init(agent: String, group: GroupKey, from: Int64, to: Int64?) {
        self.agent = agent
        self.group = group
        self.from = from
        self.to = to
    }
}
