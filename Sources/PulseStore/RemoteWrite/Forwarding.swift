import PulseAnalytics

/// What remote write has sent of one interface series (`docs/remote-write.md`): the bytes in and out counted
/// before the forward cursor, and the reset-corrected counters last sent (never more than those, never less than
/// what was sent before: a counter sent to Prometheus must not go down).
public struct ForwardState: Sendable, Hashable {
    public var series: Int64
    /// Bytes of the series' buckets before the forward cursor, as the last pass knew them.
    public var countedRx: Int64
    public var countedTx: Int64
    /// The counters' values last sent.
    public var sentRx: Int64
    public var sentTx: Int64

    public init(series: Int64, countedRx: Int64, countedTx: Int64, sentRx: Int64, sentTx: Int64) {
        self.series = series
        self.countedRx = countedRx
        self.countedTx = countedTx
        self.sentRx = sentRx
        self.sentTx = sentTx
    }
}

/// Bytes added to one bucket before the forward mark after remote write read it (late data), as one snapshot saw
/// them; `unknown` counts changes that cannot be told in bytes (a virtual gap came or went): the series' bytes
/// before the mark must then be added up again.
public struct ForwardChange: Sendable, Hashable {
    public var series: Int64
    public var start: Int64
    public var rx: Int64
    public var tx: Int64
    public var unknown: Int
    public var revision: Int64
}

extension ForwardChange {
    /// The columns of the `forward_change` table ``init(row:)`` reads, in order.
    package static let columns = "series_id, start, rx, tx, unknown, revision"

    package init(row: inout some StoreRow) throws {
        self.init(
            series: try row.integer(), start: try row.integer(), rx: try row.integer(), tx: try row.integer(),
            unknown: Int(try row.integer()), revision: try row.integer())
    }
}

/// One consistent read for a pass of remote write (``MetricStore/withForwardSnapshot(_:)``).
public protocol ForwardSnapshot {
    /// The level forwarded: the finest the store keeps up to date.
    var level: RollupLevel { get }
    /// Every bucket before this has been forwarded (0: nothing yet).
    var cursor: Int64 { get }
    func states() async throws -> [Int64: ForwardState]
    /// Changes recorded since the last pass: every one at or after `cursor` (committed between raising the mark
    /// and this snapshot, so already in the buckets it reads: to be settled, not added), and at most `limit` of the
    /// late ones before it (the rest wait for the next pass).
    func changes(cursor: Int64, limit: Int) async throws -> [ForwardChange]
    /// Each series' buckets at ``level`` in `[from, to)`, virtual gaps spread in, in series order.
    func buckets(series: [Int64], from: Int64, to: Int64, _ body: (Int64, [Bucket]) throws -> Void) async throws
    /// The bytes in and out of `series` before `time` (a multiple of ``level``), added up over every level: whole
    /// days from the daily buckets, the rest from finer ones.
    func total(series: Int64, before time: Int64) async throws -> (rx: Int64, tx: Int64)
}

/// One pass of remote write, saved in one transaction once the receiver has taken what it sent.
public struct ForwardUpdate: Sendable {
    public var states: [ForwardState]
    /// Every bucket before this has now been forwarded.
    public var cursor: Int64
    /// Changes accounted for, as the pass read them (only what changed since stays).
    public var settled: [ForwardChange]

    public init(states: [ForwardState], cursor: Int64, settled: [ForwardChange]) {
        self.states = states
        self.cursor = cursor
        self.settled = settled
    }
}
