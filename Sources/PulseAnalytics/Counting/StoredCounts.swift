import PulseCore

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
