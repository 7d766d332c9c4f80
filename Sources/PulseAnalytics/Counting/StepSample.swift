import PulseCore

/// One sample of a logical interface, with what counting a step needs to know about it (`docs/windows.md`).
public struct StepSample: Sendable, Hashable {
    /// The batch's `order` (grows across agent restarts), then the tick's index in the batch: counter order.
    public var order: Int64
    public var tick: Int32
    /// Milliseconds since the Unix epoch, after the clock check (``ClockCheck``).
    public var time: Int64
    /// Identifies the counter epoch (boot, ifindex, width); equal values mean the same epoch.
    public var epoch: Int64
    public var width: CounterWidth
    public var counters: Traffic
    /// The batch's sampling interval and idle heartbeat in milliseconds (heartbeat 0: no idle suppression).
    public var interval: Int64
    public var heartbeat: Int64
    /// Link speed in Mbit/s, 0 when unknown.
    public var speed: UInt32
    /// The interface's kind and relations as the batch reported them, for the counting rule of scopes.
    public var kind: InterfaceKind
    public var relation: InterfaceRelation
    /// The batch's timestamps were moved back because the agent's clock was ahead.
    public var clockShifted: Bool
    /// Whether the sample's time could be placed when its batch arrived: within `max_age` before the daemon's clock
    /// and not ahead of it (`docs/windows.md`, "Time that cannot be placed"). A step from or to a sample that could
    /// not is unplaced.
    public var placeable: Bool
    /// When the daemon received the sample's batch (ms); an unplaced step is filed under the later of its two
    /// samples' receive times. 0 for samples stored before it was kept.
    public var received: Int64
    /// When the sample's epoch began at the earliest, as its batch said (after the clock check's shift); nil when
    /// unknown. A step into a new epoch places nothing before it (``CountedStep/start(from:to:)``).
    public var epochBegan: Int64?

    public init(
        order: Int64, tick: Int32, time: Int64, epoch: Int64, width: CounterWidth = .bits64, counters: Traffic,
        interval: Int64, heartbeat: Int64, speed: UInt32 = 0, kind: InterfaceKind = .unknown,
        relation: InterfaceRelation = [], clockShifted: Bool = false, placeable: Bool = true, received: Int64 = 0,
        epochBegan: Int64? = nil
    ) {
        self.order = order
        self.tick = tick
        self.time = time
        self.epoch = epoch
        self.width = width
        self.counters = counters
        self.interval = interval
        self.heartbeat = heartbeat
        self.speed = speed
        self.kind = kind
        self.relation = relation
        self.clockShifted = clockShifted
        self.placeable = placeable
        self.received = received
        self.epochBegan = epochBegan
    }

    /// Whether `self` comes before `other` in counter order.
    public func precedes(_ other: StepSample) -> Bool {
        order < other.order || order == other.order && tick < other.tick
    }

    /// The position in counter order as one comparable value.
    public var position: SamplePosition { SamplePosition(order: order, tick: tick) }
}

/// A place in a logical interface's counter order.
public struct SamplePosition: Sendable, Hashable, Comparable {
    public var order: Int64
    public var tick: Int32

    public static func < (lhs: SamplePosition, rhs: SamplePosition) -> Bool {
        lhs.order < rhs.order || lhs.order == rhs.order && lhs.tick < rhs.tick
    }
}
