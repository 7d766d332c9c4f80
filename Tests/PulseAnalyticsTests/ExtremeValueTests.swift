import PulseCore
import Testing

@testable import PulseAnalytics

/// Every product and sum of values that came off the wire, in counting, spreading, windows and bills, fed the most
/// extreme value it can hold: nothing traps (a trap here was a crash loop of the daemon, replaying the same
/// acknowledged batch at every start). Each test ran into an overflow trap before the arithmetic saturated.
@Suite struct ExtremeValueTests {
    func sample(
        time: Int64, rx: UInt64 = 0, epoch: Int64 = 1, interval: Int64 = 1_000, heartbeat: Int64 = 0,
        placeable: Bool = true
    ) -> StepSample {
        var counters = Traffic.zero
        counters[.rxBytes] = rx
        counters[.rxPackets] = rx
        return StepSample(
            order: 1, tick: 0, time: time, epoch: epoch, counters: counters, interval: interval,
            heartbeat: heartbeat, placeable: placeable)
    }

    /// The step of the crash: a sample at 0 and one near 2⁶² (a batch ending far ahead, moved back), then the next.
    @Test func aStepBetweenTimesAtTheEndsOfTheRangeDoesNotTrap() {
        for (from, to) in [(Int64.min, Int64.max), (Int64.max, Int64.min), (-(1 << 62), 1 << 62), (0, Int64.max)] {
            let step = CountedStep.between(
                sample(time: from, rx: 1), sample(time: to, rx: 2), maximumRate: .max, maximumSpan: .max)
            #expect(step.counted[.rxBytes] == 1)
            // With the default span (max_age) the step is not placed.
            let bounded = CountedStep.between(
                sample(time: from, rx: 1), sample(time: to, rx: 2), maximumRate: .max,
                maximumSpan: 14 * 86_400_000)
            #expect(from < to ? bounded.timing == .unplaced : bounded.timing == .instant)
        }
    }

    @Test func intervalsAndHeartbeatsAtTheirLargestDoNotTrap() {
        let step = CountedStep.between(
            sample(time: 0, rx: 5, interval: .max, heartbeat: .max),
            sample(time: Int64.max, rx: 5, interval: .max, heartbeat: .max), maximumRate: .max)
        #expect(step.timing == .measured)
    }

    /// A counter that moves by 2⁶⁴ − 1 counts 2⁶³ − 1 (the largest a signed column holds), and its spread shares
    /// add up to exactly that, however many buckets it covers.
    @Test func theLargestStepIsClampedAndSpreadExactly() {
        let step = CountedStep.between(
            sample(time: 0, rx: 0), sample(time: 10 * 86_400_000, rx: .max, interval: 3_600_000),
            maximumRate: .max)
        #expect(step.counted[.rxBytes] == UInt64(Int64.max))
        for level in RollupLevel.standard {
            var total: Int64 = 0
            var negative = false
            Spreader.spread(
                step, from: sample(time: 0), to: sample(time: 10 * 86_400_000), level: level
            ) { _, values in
                total &+= values.traffic[.rxBytes]
                negative = negative || values.traffic[.rxBytes] < 0
            }
            #expect(total == Int64.max && !negative, "\(level)")
        }
    }

    @Test func spreadingNearTheEndsOfTimeDoesNotTrap() {
        let gap = CountedStep(counted: Traffic(repeating: 10), timing: .gap, events: [])
        var buckets = 0
        Spreader.spread(
            gap, from: sample(time: Int64.max - 90_000), to: sample(time: Int64.max), level: .oneMinute
        ) { _, _ in buckets += 1 }
        Spreader.spread(gap, from: sample(time: Int64.min), to: sample(time: Int64.min + 90_000), level: .oneDay) {
            _, _ in buckets += 1
        }
        #expect(buckets >= 2)
        #expect(RollupLevel.oneDay.bucketStart(Int64.min) == Int64.min)
        #expect(RollupLevel.oneDay.bucketStart(Int64.max) <= Int64.max)
        #expect(Bucket(level: .oneDay, start: Int64.max - 1, values: .empty).end == Int64.max)
    }

    /// An unplaced step has no time: it is never spread.
    @Test func anUnplacedStepIsNotSpread() {
        let step = CountedStep.between(
            sample(time: 0, rx: 1, placeable: false), sample(time: 1_000, rx: 2), maximumRate: .max)
        #expect(step.timing == .unplaced)
        var called = false
        Spreader.spread(step, from: sample(time: 0), to: sample(time: 1_000), level: .oneMinute) { _, _ in
            called = true
        }
        #expect(!called)
    }

    /// Sums past 2⁶³ − 1 (only hostile counters reach them) wrap as the stores' columns do not trap either, and the
    /// covered time saturates.
    @Test func bucketSumsWrapInsteadOfTrapping() {
        var values = BucketValues(
            traffic: TrafficDelta(repeating: .max), measuredMilliseconds: .max, interpolatedMilliseconds: 1)
        values.merge(values)
        #expect(values.traffic[.rxBytes] == -2)
        #expect(BucketValues(measuredMilliseconds: .max, interpolatedMilliseconds: .max).coveredMilliseconds == .max)
    }

    /// Window figures over buckets at the largest values: packets, errors and drops summed in and out, a scope's
    /// members from the largest member time, its utilisation over the largest capacity.
    @Test func windowFiguresOfTheLargestBucketsDoNotTrap() {
        let full = BucketValues(
            traffic: TrafficDelta(repeating: .max), measuredMilliseconds: 60_000, interpolatedMilliseconds: 0,
            speedMbps: .max, memberMilliseconds: .max, capacity: .max)
        let figures = WindowFigures.compute(
            buckets: [Bucket(level: .oneMinute, start: 0, values: full)], window: Window(from: 0, to: 60_000),
            resolution: .oneMinute, now: 60_000, isInterface: false)
        #expect(figures.bytes.rx == Int64.max)
        #expect(figures.members > 0 && figures.utilisation.rx != nil)
        #expect(RateMath.utilisation(rate: .max, speedMbps: .max) != nil)
    }

    /// Bills of intervals at the largest rate: in + out per interval (the `sum` method), kept and computed.
    @Test func billsOfTheLargestRatesDoNotTrap() {
        let full = BucketValues(
            traffic: TrafficDelta(repeating: .max), measuredMilliseconds: 300_000, interpolatedMilliseconds: 0)
        let bill = Bill.compute(
            buckets: [Bucket(level: .fiveMinutes, start: 0, values: full)], period: Window(from: 0, to: 600_000),
            now: 600_000, method: .sum)
        #expect(bill.sum == Int64.max)
        var tracker = BillTracker(intervals: 8_640)
        let largest = BillInterval(full)!
        tracker.add(largest)
        var smaller = largest
        smaller.outbound = 1
        let replaced = tracker.replace(largest, with: smaller)
        #expect(replaced)
    }
}
