/// A billing period's 95th percentiles kept current one interval at a time, without the whole period's rates.
///
/// The percentile of `n` rates is the `(n − ⌊(95n + 50)/100⌋)`-th largest (counting from 0), which is never more
/// than the 5 % + 1 largest rates of the period: the tracker keeps only those (about 450 per direction for a
/// 31-day month), so the state of a bill is a few kilobytes and adding an interval costs a few hundred compares.
/// An interval whose rate changes after it was added (late data) is swapped in with
/// ``replace(_:with:)`` when the tracker can tell the result; when it cannot, the bill is rebuilt from the period's
/// buckets (``rebuilt(from:period:now:)``).
public struct BillTracker: Sendable, Hashable {
    /// The most rates each direction keeps: enough for the percentile of a full period.
    public let capacity: Int
    /// Intervals added (those with data).
    public private(set) var count = 0
    /// The largest rates, largest first.
    public private(set) var inbound: [Int64] = []
    public private(set) var outbound: [Int64] = []
    public private(set) var sum: [Int64] = []

    /// A tracker for a period of `intervals` 5-minute intervals.
    public init(intervals: Int) {
        capacity = max(1, intervals - (95 * intervals + 50) / 100 + 1)
    }

    init(capacity: Int, count: Int, inbound: [Int64], outbound: [Int64], sum: [Int64]) {
        self.capacity = capacity
        self.count = count
        self.inbound = inbound
        self.outbound = outbound
        self.sum = sum
    }

    /// Adds one interval's rates (milli-bytes per second).
    public mutating func add(inbound rx: Int64, outbound tx: Int64) {
        count += 1
        Self.insert(rx, into: &inbound, capacity: capacity)
        Self.insert(tx, into: &outbound, capacity: capacity)
        Self.insert(Saturating.sum(rx, tx), into: &sum, capacity: capacity)
    }

    /// Replaces one interval's rates added earlier (`old`; nil when it had no data) with what it holds now (`new`;
    /// nil when it has none), as late data requires. Returns false, with the tracker unchanged, when the result
    /// depends on rates it does not keep: a kept rate goes down, or out, below the smallest kept one while smaller
    /// rates were dropped. Late data mostly adds bytes, so that is rare; the caller then rebuilds the tracker.
    public mutating func replace(
        _ old: (inbound: Int64, outbound: Int64)?, with new: (inbound: Int64, outbound: Int64)?
    )
        -> Bool
    {
        var next = self
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
        if let new { next.add(inbound: new.inbound, outbound: new.outbound) }
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

    /// The 95th percentile of what was added: the same value ``RateMath/percentile(_:_:)`` gives for all rates.
    private func percentile(_ top: [Int64]) -> Int64? {
        guard count > 0 else { return nil }
        let rank = count - 1 - RateMath.percentileIndex(count: count, percent: 95)
        return rank < top.count ? top[rank] : nil
    }

    public var inboundPercentile: Int64? { percentile(inbound) }
    public var outboundPercentile: Int64? { percentile(outbound) }
    public var sumPercentile: Int64? { percentile(sum) }

    /// The tracker's bill for `period` as of `now`.
    public func bill(period: Window, now: Int64, method: BillingMethod, revision: Int64) -> Bill {
        Bill(
            period: period, method: method, intervals: count,
            missing: Bill.endedIntervals(in: period, now: now) - count, inbound: inboundPercentile,
            outbound: outboundPercentile, sum: sumPercentile, revision: revision)
    }

    /// The tracker of a period rebuilt from its 5-minute buckets that ended by `now`.
    public static func rebuilt(from buckets: [Bucket], period: Window, now: Int64) -> BillTracker {
        var tracker = BillTracker(intervals: Int(period.length / Bill.interval))
        for bucket in buckets.sorted(by: { $0.start < $1.start })
        where bucket.start >= period.from && bucket.end <= min(now, period.to) && bucket.values.hasData {
            tracker.add(
                inbound: Bill.intervalRate(bytes: bucket.values.traffic[.rxBytes]),
                outbound: Bill.intervalRate(bytes: bucket.values.traffic[.txBytes]))
        }
        return tracker
    }

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
        varint(UInt64(capacity))
        varint(UInt64(count))
        for list in [inbound, outbound, sum] {
            varint(UInt64(list.count))
            for value in list { varint(UInt64(max(0, value))) }
        }
        return bytes
    }

    /// Reads ``encoded``; nil when the bytes are not a tracker.
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
        guard let capacity = varint(), let count = varint() else { return nil }
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
            capacity: Int(capacity), count: Int(count), inbound: lists[0], outbound: lists[1], sum: lists[2])
    }
}
