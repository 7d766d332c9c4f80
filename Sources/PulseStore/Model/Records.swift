import PulseAnalytics
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

/// One stored raw sample of a logical interface, as counted (timestamps after the clock check).
public struct RawSample: Sendable, Hashable {
    /// The order of the batch the sample came in.
    public var order: Int64
    public var timestamp: Int64
    public var epoch: CounterEpoch
    public var counters: CounterValues

    public init(order: Int64, timestamp: Int64, epoch: CounterEpoch, counters: CounterValues) {
        self.order = order
        self.timestamp = timestamp
        self.epoch = epoch
        self.counters = counters
    }
}

/// Something the counting rules flagged that a bucket's event counts cannot say on their own.
public struct Anomaly: Sendable, Hashable {
    public var series: Int64
    public var timestamp: Int64
    public var kind: String
    public var detail: String

    public init(series: Int64, timestamp: Int64, kind: String, detail: String) {
        self.series = series
        self.timestamp = timestamp
        self.kind = kind
        self.detail = detail
    }
}

/// Totals since the store was created, for status lines and benchmarks.
public struct IngestTotals: Sendable, Hashable {
    public var batches: Int64
    public var values: Int64
    public var revision: Int64
    /// Steps whose time could not be placed (`docs/windows.md`, "Time that cannot be placed") since the store was
    /// made: a count of events, so one that late data splits again counts once more for each step it becomes.
    public var unplacedSteps: Int64

    public init(batches: Int64, values: Int64, revision: Int64, unplacedSteps: Int64 = 0) {
        self.batches = batches
        self.values = values
        self.revision = revision
        self.unplacedSteps = unplacedSteps
    }
}

/// What a series counted in steps whose time could not be placed (`docs/windows.md`, "Time that cannot be
/// placed"): the eight counters' sums, and how many steps.
public struct UnplacedTotals: Sendable, Hashable {
    public var traffic: TrafficDelta
    public var steps: Int64

    public init(traffic: TrafficDelta = .zero, steps: Int64 = 0) {
        self.traffic = traffic
        self.steps = steps
    }

    public mutating func add(_ other: UnplacedTotals) {
        traffic &+= other.traffic
        steps &+= other.steps
    }

    public var isEmpty: Bool { steps == 0 && traffic == .zero }
}

/// The unplaced totals of one series received on one UTC day.
public struct UnplacedDay: Sendable, Hashable {
    /// The day's start (UTC midnight, ms).
    public var day: Int64
    public var totals: UnplacedTotals

    public init(day: Int64, totals: UnplacedTotals) {
        self.day = day
        self.totals = totals
    }
}

/// What one pruning pass removed.
public struct PruneReport: Sendable, Hashable {
    public var rawChunks: Int
    public var buckets: Int
    /// Gaps spread into the rollups for good (past the late-data horizon).
    public var settledGaps: Int

    public init(rawChunks: Int = 0, buckets: Int = 0, settledGaps: Int = 0) {
        self.rawChunks = rawChunks
        self.buckets = buckets
        self.settledGaps = settledGaps
    }
}
