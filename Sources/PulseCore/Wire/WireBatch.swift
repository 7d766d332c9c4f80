/// One batch of samples from one agent stream: the unit the agent spools, the daemon acknowledges and dedupes.
///
/// Counters are cumulative. Each section starts with its interface's absolute counter values, so a batch decodes
/// on its own: losing one costs resolution, never bytes.
public struct WireBatch: Sendable, Hashable {
    /// Random per agent run; together with ``sequence`` it names the batch for deduplication.
    public var stream: UInt64
    /// 1, 2, 3 … within the stream.
    public var sequence: UInt64
    /// The agent's position of this batch in its counter order: strictly greater than every earlier batch's,
    /// across restarts of the agent (`docs/protocol.md`, "Order"). The daemon applies samples in this order.
    public var order: UInt64
    /// How many older batches of this stream the agent's spool dropped (because it was full) since the batch
    /// before this one.
    public var droppedBefore: UInt64
    /// The sampling interval in force for every tick of the batch, milliseconds (the configured interval times
    /// the daemon's `PACE` sample factor).
    public var interval: UInt64
    /// The idle heartbeat in force (milliseconds; 0: every interface is sent every tick), so the daemon can tell an
    /// interface left out because it was unchanged from one that was not sampled.
    public var heartbeat: UInt64
    /// Milliseconds since the Unix epoch of each sampling tick, strictly increasing.
    public var timestamps: [Int64]
    public var sections: [BatchSection]
    public var linkStates: [LinkStateRecord]

    public init(
        stream: UInt64,
        sequence: UInt64,
        order: UInt64? = nil,
        droppedBefore: UInt64 = 0,
        interval: UInt64 = 1_000,
        heartbeat: UInt64 = 0,
        timestamps: [Int64],
        sections: [BatchSection],
        linkStates: [LinkStateRecord] = []
    ) {
        self.stream = stream
        self.sequence = sequence
        self.order = order ?? sequence
        self.droppedBefore = droppedBefore
        self.interval = interval
        self.heartbeat = heartbeat
        self.timestamps = timestamps
        self.sections = sections
        self.linkStates = linkStates
    }

    /// The number of counter values the batch carries.
    public var valueCount: Int { sections.reduce(0) { $0 + $1.ticks.count } * Counter.count }
}

/// One interface's samples within a batch.
public struct BatchSection: Sendable, Hashable {
    public var descriptorID: UInt32
    /// Indices into the batch's timestamps at which this interface was sampled, strictly increasing. An idle
    /// interface is present only at heartbeats and around changes.
    public var ticks: [Int]
    /// `ticks.count × 16` values, sample after sample, counters in ``Counter`` order.
    public var values: [UInt64]

    public init(descriptorID: UInt32, ticks: [Int], values: [UInt64]) {
        self.descriptorID = descriptorID
        self.ticks = ticks
        self.values = values
    }

    public var sampleCount: Int { ticks.count }

    /// The counters of the `index`-th sample of this section.
    public func sample(_ index: Int) -> CounterValues {
        let start = index * Counter.count
        return CounterValues(Array(values[start..<start + Counter.count]))!
    }
}

/// A change of an interface's link facts, at one of the batch's ticks.
public struct LinkStateRecord: Sendable, Hashable {
    public var descriptorID: UInt32
    public var tick: Int
    public var state: LinkState

    public init(descriptorID: UInt32, tick: Int, state: LinkState) {
        self.descriptorID = descriptorID
        self.tick = tick
        self.state = state
    }
}
