/// What one rollup bucket holds (`docs/windows.md`, "Rollups"), or what a change adds to it.
///
/// Sums are signed so a change can take a step out again; peaks and speed merge by maximum and only ever come from
/// measured and idle steps, which late data never splits, so they never need taking out.
public struct BucketValues: Sendable, Hashable {
    public var traffic: TrafficDelta
    public var measuredMilliseconds: Int64
    public var interpolatedMilliseconds: Int64
    /// The largest measured rates, bytes per second.
    public var peakRx: UInt64
    public var peakTx: UInt64
    /// The largest known link speed, Mbit/s (0: unknown).
    public var speedMbps: UInt32
    /// Steps with each event, in ``StepEvents/columns`` order (the last two lanes are unused).
    public var events: SIMD8<Int64>
    /// Milliseconds of implausible steps (`docs/windows.md`, "Time classes and spreading"): an interval holding
    /// any is flagged on bills.
    public var flaggedMilliseconds: Int64
    /// The time of the steps the bucket holds, whatever their class (an outage's too): for a scope, its members'
    /// time as of those steps, so its coverage never depends on who its members are today (`docs/windows.md`,
    /// "Rollups").
    public var memberMilliseconds: Int64
    /// The link capacity of those steps: each step's overlap × its link speed, Mbit/s × ms (kilobits); a step of
    /// unknown speed adds none. A scope's utilisation is its bytes over this.
    public var capacity: Int64

    public init(
        traffic: TrafficDelta = .zero, measuredMilliseconds: Int64 = 0, interpolatedMilliseconds: Int64 = 0,
        peakRx: UInt64 = 0, peakTx: UInt64 = 0, speedMbps: UInt32 = 0, events: SIMD8<Int64> = .zero,
        flaggedMilliseconds: Int64 = 0, memberMilliseconds: Int64 = 0, capacity: Int64 = 0
    ) {
        self.traffic = traffic
        self.measuredMilliseconds = measuredMilliseconds
        self.interpolatedMilliseconds = interpolatedMilliseconds
        self.peakRx = peakRx
        self.peakTx = peakTx
        self.speedMbps = speedMbps
        self.events = events
        self.flaggedMilliseconds = flaggedMilliseconds
        self.memberMilliseconds = memberMilliseconds
        self.capacity = capacity
    }

    public static let empty = BucketValues()

    /// Adds `other`'s sums and keeps the larger peaks and speed.
    public mutating func merge(_ other: BucketValues) {
        traffic &+= other.traffic
        measuredMilliseconds &+= other.measuredMilliseconds
        interpolatedMilliseconds &+= other.interpolatedMilliseconds
        peakRx = max(peakRx, other.peakRx)
        peakTx = max(peakTx, other.peakTx)
        speedMbps = max(speedMbps, other.speedMbps)
        events &+= other.events
        flaggedMilliseconds &+= other.flaggedMilliseconds
        memberMilliseconds &+= other.memberMilliseconds
        capacity &+= other.capacity
    }

    /// Milliseconds the bucket's data covers, measured or interpolated.
    public var coveredMilliseconds: Int64 { Saturating.sum(measuredMilliseconds, interpolatedMilliseconds) }

    /// Whether the bucket has data (`docs/windows.md`).
    public var hasData: Bool { coveredMilliseconds > 0 }

    /// Whether the bucket holds an implausible step (`docs/windows.md`, "95th-percentile billing"): by its time, or
    /// by its count for an instant one, which covers no time.
    public var isFlagged: Bool { flaggedMilliseconds > 0 || count(of: .implausible) > 0 }

    /// The count of steps with `event`.
    public func count(of event: StepEvents) -> Int64 {
        guard let lane = StepEvents.columns.firstIndex(of: event) else { return 0 }
        return events[lane]
    }

    /// These values with the columns outside `fields` zero, as a read of only those columns gives them.
    public func only(_ fields: BucketFields) -> BucketValues {
        var values = BucketValues()
        if fields.contains(.bytes) {
            values.traffic[0] = traffic[0]
            values.traffic[1] = traffic[1]
        }
        if fields.contains(.packets) { for lane in 2..<8 { values.traffic[lane] = traffic[lane] } }
        if fields.contains(.coverage) {
            values.measuredMilliseconds = measuredMilliseconds
            values.interpolatedMilliseconds = interpolatedMilliseconds
        }
        if fields.contains(.peaks) {
            values.peakRx = peakRx
            values.peakTx = peakTx
            values.speedMbps = speedMbps
        }
        if fields.contains(.events) {
            values.events = events
            values.flaggedMilliseconds = flaggedMilliseconds
        }
        if fields.contains(.members) {
            values.memberMilliseconds = memberMilliseconds
            values.capacity = capacity
        }
        return values
    }

    /// The scope form of a bucket: sums only (peaks and speed are per interface).
    public var sumsOnly: BucketValues {
        var copy = self
        copy.peakRx = 0
        copy.peakTx = 0
        copy.speedMbps = 0
        return copy
    }
}

/// A bucket as stored: its level, start, values and the store revision of its last change.
public struct Bucket: Sendable, Hashable {
    public var level: RollupLevel
    public var start: Int64
    public var values: BucketValues
    public var revision: Int64

    public init(level: RollupLevel, start: Int64, values: BucketValues, revision: Int64 = 0) {
        self.level = level
        self.start = start
        self.values = values
        self.revision = revision
    }

    public var end: Int64 { Saturating.sum(start, level.width) }
}
