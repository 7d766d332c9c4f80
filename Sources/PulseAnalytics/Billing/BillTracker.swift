/// A billing period's 95th percentiles kept current one interval at a time, without the whole period's rates.
///
/// The percentile of `n` rates is at most the `(n − ⌊(95n + 50)/100⌋)`-th largest (counting from 0; the rank
/// `round(0.95 n)`, and `⌈0.95 n⌉` is never lower), which is never more than the 5 % + 1 largest rates of the
/// period: the tracker keeps only those (about 450 per direction for a 31-day month), so the state of a bill is a
/// few kilobytes and adding an interval costs a few hundred compares. It counts the intervals it is given by class
/// (measured, interpolated, flagged), and keeps the rates of those its ``terms`` count. An interval that changes
/// after it was added (late data) is swapped in with ``replace(_:with:)`` when the tracker can tell the result;
/// when it cannot, the bill is rebuilt from the period's buckets (``rebuilt(from:period:now:terms:)``).
public struct BillTracker: Sendable, Hashable {
    /// The most rates each direction keeps: enough for the percentile of a full period.
    public let capacity: Int
    /// Which intervals count; a tracker kept for other terms must be rebuilt.
    public let terms: IntervalTerms
    /// Intervals that count (`n`).
    public private(set) var count = 0
    /// The classes of every interval with data added.
    public private(set) var classes = IntervalClasses()
    /// The largest rates, largest first.
    public private(set) var inbound: [Int64] = []
    public private(set) var outbound: [Int64] = []
    public private(set) var sum: [Int64] = []

    /// A tracker for a period of `intervals` 5-minute intervals.
    public init(intervals: Int, terms: IntervalTerms = IntervalTerms()) {
        capacity = max(1, intervals - (95 * intervals + 50) / 100 + 1)
        self.terms = terms
    }

    init(
        capacity: Int, terms: IntervalTerms, count: Int, classes: IntervalClasses, inbound: [Int64],
        outbound: [Int64], sum: [Int64]
    ) {
        self.capacity = capacity
        self.terms = terms
        self.count = count
        self.classes = classes
        self.inbound = inbound
        self.outbound = outbound
        self.sum = sum
    }

    /// Adds one interval with data.
    public mutating func add(_ interval: BillInterval) {
        classes.count(interval, sign: 1)
        if terms.counts(interval) { insert(inbound: interval.inbound, outbound: interval.outbound) }
    }

    /// Counts one interval's rates (milli-bytes per second).
    private mutating func insert(inbound rx: Int64, outbound tx: Int64) {
        count += 1
        Self.insert(rx, into: &inbound, capacity: capacity)
        Self.insert(tx, into: &outbound, capacity: capacity)
        Self.insert(Saturating.sum(rx, tx), into: &sum, capacity: capacity)
    }

    /// Replaces one interval added earlier (`old`; nil when it had no data) with what it holds now (`new`; nil when
    /// it has none), as late data requires. Returns false, with the tracker unchanged, when the result depends on
    /// rates it does not keep: a kept rate goes down, or out, below the smallest kept one while smaller rates were
    /// dropped. Late data mostly adds bytes, so that is rare; the caller then rebuilds the tracker.
    public mutating func replace(_ old: BillInterval?, with new: BillInterval?) -> Bool {
        var next = self
        if let old { next.classes.count(old, sign: -1) }
        if let new { next.classes.count(new, sign: 1) }
        let terms = self.terms
        func counted(_ interval: BillInterval?) -> (inbound: Int64, outbound: Int64)? {
            interval.flatMap { terms.counts($0) ? ($0.inbound, $0.outbound) : nil }
        }
        let old = counted(old)
        let new = counted(new)
        if let old {
            // Every rate is kept while the period has no more than `capacity` of them; past that the smaller are
            // dropped, so the largest of them is at most the smallest kept.
            let complete = count <= capacity
            next.count -= 1
            guard
                Self.remove(old.inbound, from: &next.inbound, complete: complete, refill: new?.inbound),
                Self.remove(old.outbound, from: &next.outbound, complete: complete, refill: new?.outbound),
                Self.remove(
                    Saturating.sum(old.inbound, old.outbound), from: &next.sum, complete: complete,
                    refill: new.map { Saturating.sum($0.inbound, $0.outbound) })
            else { return false }
        }
        if let new { next.insert(inbound: new.inbound, outbound: new.outbound) }
        self = next
        return true
    }

    /// Takes `value` out of the kept rates `top` (largest first) before `refill` goes in. False when the rates kept
    /// afterwards could not be told: `value` was kept, the list was not `complete`, and `refill` (if any) is smaller
    /// than the smallest kept rate, so a dropped rate may belong in its place.
    private static func remove(_ value: Int64, from top: inout [Int64], complete: Bool, refill: Int64?) -> Bool {
        guard let smallest = top.last, value >= smallest else {
            // Not among the kept rates: only a list missing the dropped rates can lack it.
            return !complete
        }
        guard let index = top.firstIndex(of: value) else { return false }
        if !complete {
            guard let refill, refill >= smallest else { return false }
        }
        top.remove(at: index)
        return true
    }

    private static func insert(_ value: Int64, into top: inout [Int64], capacity: Int) {
        if top.count == capacity {
            guard value > top[capacity - 1] else { return }
            top.removeLast()
        }
        // Binary search for the first position holding a smaller value (stable for equal values).
        var low = 0
        var high = top.count
        while low < high {
            let middle = (low + high) / 2
            if top[middle] >= value { low = middle + 1 } else { high = middle }
        }
        top.insert(value, at: low)
    }

    /// The 95th percentile of what counts, at `rank`: the same value ``RateMath/percentile(_:_:rank:)`` gives for all
    /// rates.
    private func percentile(_ top: [Int64], rank: RankConvention) -> Int64? {
        guard count > 0 else { return nil }
        let position = count - 1 - RateMath.percentileIndex(count: count, percent: 95, rank: rank)
        return position < top.count ? top[position] : nil
    }

    /// The tracker's bill for `period` as of `now`, its percentiles at `rank`.
    public func bill(
        period: Window, now: Int64, method: BillingMethod, rank: RankConvention = .round, revision: Int64
    ) -> Bill {
        Bill(
            period: period, method: method, intervals: count,
            missing: Bill.endedIntervals(in: period, now: now) - classes.measured - classes.interpolated,
            classes: classes, rank: rank, inbound: percentile(inbound, rank: rank),
            outbound: percentile(outbound, rank: rank), sum: percentile(sum, rank: rank), revision: revision)
    }

    /// Whether `bucket` is a 5-minute interval of `period` that ended by `now`.
    static func isEnded(_ bucket: Bucket, in period: Window, now: Int64) -> Bool {
        bucket.level.width == Bill.interval && bucket.start >= period.from && bucket.end <= min(now, period.to)
    }

    /// The tracker of a period rebuilt from its 5-minute buckets that ended by `now` (any order; others are ignored).
    public static func rebuilt(
        from buckets: [Bucket], period: Window, now: Int64, terms: IntervalTerms = IntervalTerms()
    ) -> BillTracker {
        var tracker = BillTracker(intervals: Int(period.length / Bill.interval), terms: terms)
        for bucket in buckets.sorted(by: { $0.start < $1.start }) where isEnded(bucket, in: period, now: now) {
            if let interval = BillInterval(bucket.values) { tracker.add(interval) }
        }
        return tracker
    }

    /// The form version of ``encoded``: a leading zero (a capacity never is), then this.
    static let encodingVersion: UInt64 = 2

    /// A compact stored form: varints.
    public var encoded: [UInt8] {
        var bytes = [UInt8]()
        func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
        varint(0)
        varint(Self.encodingVersion)
        varint(UInt64(capacity))
        varint(terms.interpolated == .count ? 0 : 1)
        varint(terms.flagged == .count ? 0 : 1)
        varint(UInt64(count))
        varint(UInt64(classes.measured))
        varint(UInt64(classes.interpolated))
        varint(UInt64(classes.flagged))
        for list in [inbound, outbound, sum] {
            varint(UInt64(list.count))
            for value in list { varint(UInt64(max(0, value))) }
        }
        return bytes
    }

    /// Reads ``encoded``; nil when the bytes are not a tracker of this form (one stored before the store kept
    /// interval classes is rebuilt from its period's buckets).
    public init?(encoded bytes: [UInt8]) {
        var index = 0
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        guard varint() == 0, varint() == Self.encodingVersion, let capacity = varint(), capacity > 0,
            let interpolated = varint(), interpolated <= 1, let flagged = varint(), flagged <= 1, let count = varint(),
            let measuredIntervals = varint(), let interpolatedIntervals = varint(), let flaggedIntervals = varint()
        else { return nil }
        var lists = [[Int64]]()
        for _ in 0..<3 {
            guard let length = varint(), length <= capacity else { return nil }
            var list = [Int64]()
            for _ in 0..<length {
                guard let value = varint() else { return nil }
                list.append(Int64(clamping: value))
            }
            lists.append(list)
        }
        guard index == bytes.count else { return nil }
        self.init(
            capacity: Int(capacity),
            terms: IntervalTerms(interpolated: interpolated == 0 ? .count : .exclude, flagged: flagged == 0 ? .count : .exclude),
            count: Int(clamping: count),
            classes: IntervalClasses(
                measured: Int(clamping: measuredIntervals), interpolated: Int(clamping: interpolatedIntervals),
                flagged: Int(clamping: flaggedIntervals)),
            inbound: lists[0], outbound: lists[1], sum: lists[2])
    }
}
