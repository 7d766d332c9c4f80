/// Everything `docs/windows.md` defines for one series over one window. Rates are milli-bytes per second,
/// utilisation hundredths of a percent, ratios and coverage parts per million; nil where undefined.
public struct WindowFigures: Sendable, Hashable {
    public var window: Window
    public var resolution: RollupLevel
    public var elapsed: Int64
    /// Sums of the window's buckets (peaks and speed the largest).
    public var totals: BucketValues
    public var average: Direction<Int64?>
    public var minimum: Direction<Int64?>
    public var maximum: Direction<Int64?>
    public var last: Direction<Int64?>
    public var p50: Direction<Int64?>
    public var p95: Direction<Int64?>
    public var p99: Direction<Int64?>
    public var utilisation: Direction<Int64?>
    /// The peak rate: interfaces, the largest measured peak; scopes, the largest bucket rate (milli-bytes/s).
    public var peak: Direction<Int64?>
    public var errorRatio: Int64?
    public var dropRatio: Int64?
    /// Measured and interpolated time over elapsed time × members; and measured time alone.
    public var coverage: Int64
    public var measuredCoverage: Int64
    /// Buckets with data at the resolution.
    public var bucketsWithData: Int
    /// Interfaces behind the figures: 1 for an interface; for a scope, the counted interfaces its steps had (the
    /// largest of its buckets' member counts).
    public var members: Int
    /// The link speed utilisation is over, Mbit/s (0 unknown): an interface's largest; a scope's, the largest of its
    /// buckets' capacities over their time, as of its steps.
    public var speedMbps: Int64
    /// The highest revision of the buckets read.
    public var revision: Int64

    /// Bytes in and out, exactly.
    public var bytes: Direction<Int64> { Direction(rx: totals.traffic[.rxBytes], tx: totals.traffic[.txBytes]) }
}

/// A pair of figures for received and transmitted traffic.
public struct Direction<Value: Sendable & Hashable>: Sendable, Hashable {
    public var rx: Value
    public var tx: Value

    public init(rx: Value, tx: Value) {
        self.rx = rx
        self.tx = tx
    }
}

extension WindowFigures {
    /// Computes the figures of one series from its buckets of `resolution` in the window (any order).
    ///
    /// - Parameters:
    ///   - now: the time of the query; later parts of the window have not happened.
    ///   - isInterface: interfaces have measured peaks and their largest speed; scopes take the largest bucket rate,
    ///     and their members and speed from their buckets' member time and capacity.
    public static func compute(
        buckets: [Bucket], window: Window, resolution: RollupLevel, now: Int64, isInterface: Bool
    ) -> WindowFigures {
        let inside = buckets.filter { $0.start >= window.from && $0.start < window.to }.sorted { $0.start < $1.start }
        var totals = BucketValues()
        // A scope's members and link speed as of its steps (`docs/windows.md`, "Windows"): the largest of its
        // buckets', each its member time and capacity over its time (up to `now`), rounded up.
        var members = isInterface ? 1 : 0
        var scopeSpeed: Int64 = 0
        for bucket in inside {
            totals.merge(bucket.values)
            guard !isInterface, bucket.start < now else { continue }
            let time = min(bucket.end, now) - bucket.start
            members = max(members, Int(clamping: RateMath.roundedUp(bucket.values.memberMilliseconds, over: time)))
            scopeSpeed = max(scopeSpeed, RateMath.roundedUp(bucket.values.capacity, over: time))
        }
        let elapsed = window.elapsed(now: now)
        var revision: Int64 = 0
        var rates = Direction<[Int64]>(rx: [], tx: [])
        var last = Direction<Int64?>(rx: nil, tx: nil)
        var withData = 0
        for bucket in inside {
            revision = max(revision, bucket.revision)
            guard bucket.values.hasData, bucket.start < now else { continue }
            withData += 1
            // A bucket that has ended: its bytes over its width. The bucket holding `now`: over the time its data
            // covers per member, since its data runs only up to the last sample received (`docs/windows.md`).
            let (divisor, scale) =
                bucket.end <= now
                ? (bucket.end - bucket.start, Int64(1_000_000))
                : (bucket.values.coveredMilliseconds, Saturating.product(1_000_000, Int64(max(members, 1))))
            let rx = RateMath.divide(bucket.values.traffic[.rxBytes], by: divisor, scale: scale)
            let tx = RateMath.divide(bucket.values.traffic[.txBytes], by: divisor, scale: scale)
            rates.rx.append(rx)
            rates.tx.append(tx)
            last = Direction(rx: rx, tx: tx)
        }
        rates.rx.sort()
        rates.tx.sort()
        let average = Direction(
            rx: RateMath.rate(bytes: totals.traffic[.rxBytes], milliseconds: elapsed),
            tx: RateMath.rate(bytes: totals.traffic[.txBytes], milliseconds: elapsed))
        // Sums of what agents sent: clamped, never trapping (`docs/windows.md`).
        let packets = Saturating.sum(totals.traffic[.rxPackets], totals.traffic[.txPackets])
        let possible = Saturating.product(elapsed, Int64(max(members, 1)))
        let speed = isInterface ? Int64(totals.speedMbps) : scopeSpeed
        return WindowFigures(
            window: window, resolution: resolution, elapsed: elapsed, totals: totals, average: average,
            minimum: Direction(rx: rates.rx.first, tx: rates.tx.first),
            maximum: Direction(rx: rates.rx.last, tx: rates.tx.last), last: last,
            p50: Direction(rx: RateMath.percentile(rates.rx, 50), tx: RateMath.percentile(rates.tx, 50)),
            p95: Direction(rx: RateMath.percentile(rates.rx, 95), tx: RateMath.percentile(rates.tx, 95)),
            p99: Direction(rx: RateMath.percentile(rates.rx, 99), tx: RateMath.percentile(rates.tx, 99)),
            utilisation: Direction(
                rx: average.rx.flatMap { RateMath.utilisation(rate: $0, speedMbps: speed) },
                tx: average.tx.flatMap { RateMath.utilisation(rate: $0, speedMbps: speed) }),
            peak: isInterface
                ? (withData == 0
                    ? Direction(rx: nil, tx: nil)
                    : Direction(
                        rx: Int64(clamping: totals.peakRx).multipliedReportingOverflow(by: 1_000).partialValue,
                        tx: Int64(clamping: totals.peakTx).multipliedReportingOverflow(by: 1_000).partialValue))
                : Direction(rx: rates.rx.last, tx: rates.tx.last),
            errorRatio: RateMath.perMillion(
                Saturating.sum(totals.traffic[.rxErrors], totals.traffic[.txErrors]), of: packets),
            dropRatio: RateMath.perMillion(
                Saturating.sum(totals.traffic[.rxDropped], totals.traffic[.txDropped]), of: packets),
            coverage: RateMath.perMillion(totals.coveredMilliseconds, of: possible) ?? 0,
            measuredCoverage: RateMath.perMillion(totals.measuredMilliseconds, of: possible) ?? 0,
            bucketsWithData: withData, members: members, speedMbps: speed, revision: revision)
    }
}
