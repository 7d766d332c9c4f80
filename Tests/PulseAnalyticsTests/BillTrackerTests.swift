import PulseAnalytics
import PulseCore
import TestSupport
import Testing

/// The tracker keeps only a period's largest rates; swapping a changed interval in must give what sorting every
/// counted rate gives, or say it cannot (and then leave the tracker as it was). It counts intervals by class and
/// counts only what its terms count.
@Suite struct BillTrackerTests {
    /// The percentile of the rates `terms` count, sorted (docs/windows.md): the direct computation.
    static func direct(
        _ intervals: [BillInterval?], _ terms: IntervalTerms, _ rank: RankConvention,
        _ rate: (BillInterval) -> Int64
    ) -> Int64? {
        RateMath.percentile(intervals.compactMap { $0 }.filter(terms.counts).map(rate).sorted(), 95, rank: rank)
    }

    static func interval(_ rx: Int64, _ tx: Int64, _ random: inout SplitMix64) -> BillInterval {
        // Mostly measured, some interpolated, a few flagged.
        BillInterval(
            rxBytes: rx * 300, txBytes: tx * 300, measuredMilliseconds: random.next() % 4 == 0 ? 0 : 1_000,
            coveredMilliseconds: 300_000, flagged: random.next() % 9 == 0)!
    }

    @Test func swappingIntervalsAgreesWithSortingThemAll() {
        var random = SplitMix64(seed: 7)
        var swapped = 0
        var refused = 0
        // Kept small: the check sorts every rate after each swap (a debug build, on the tests' shared threads).
        for round in 0..<16 {
            // Short periods keep few rates (a 300-interval period keeps 16), so drops and refusals happen often.
            let count = [20, 60, 300, 1_000][round % 4]
            let terms = IntervalTerms(
                interpolated: round % 8 < 4 ? .count : .exclude, flagged: round % 3 == 0 ? .exclude : .count)
            let rank: RankConvention = round % 2 == 0 ? .round : .nearestRank
            var intervals = [BillInterval?](repeating: nil, count: count)
            var tracker = BillTracker(intervals: count, terms: terms)
            for index in 0..<count where random.next() % 5 != 0 {
                intervals[index] = Self.interval(
                    Int64(random.next() % 1_000), Int64(random.next() % 1_000), &random)
                tracker.add(intervals[index]!)
            }
            for _ in 0..<min(count * 2, 300) {
                let index = Int(random.next() % UInt64(count))
                let old = intervals[index]
                // Mostly more bytes (late data adds), sometimes fewer, sometimes data comes or goes.
                let new: BillInterval?
                switch random.next() % 10 {
                case 0: new = nil
                case 1: new = Self.interval(Int64(random.next() % 1_000), Int64(random.next() % 1_000), &random)
                default:
                    new = Self.interval(
                        (old?.inbound ?? 0) / 1_000 + Int64(random.next() % 300),
                        (old?.outbound ?? 0) / 1_000 + Int64(random.next() % 300), &random)
                }
                let before = tracker
                if tracker.replace(old, with: new) {
                    swapped += 1
                    intervals[index] = new
                } else {
                    refused += 1
                    #expect(tracker == before, "a refused swap leaves the tracker as it was")
                    // What the bill keeper does then: read the period again.
                    intervals[index] = new
                    tracker = BillTracker(intervals: count, terms: terms)
                    for interval in intervals { if let interval { tracker.add(interval) } }
                }
                let present = intervals.compactMap { $0 }
                #expect(tracker.count == present.filter(terms.counts).count)
                #expect(
                    tracker.classes
                        == IntervalClasses(
                            measured: present.filter(\.isMeasured).count,
                            interpolated: present.filter { !$0.isMeasured }.count,
                            flagged: present.filter(\.isFlagged).count))
                let bill = tracker.bill(
                    period: Window(from: 0, to: Int64(count) * Bill.interval), now: Int64(count) * Bill.interval,
                    method: .max, rank: rank, revision: 0)
                #expect(bill.inbound == Self.direct(intervals, terms, rank, \.inbound), "in, \(count) intervals")
                #expect(bill.outbound == Self.direct(intervals, terms, rank, \.outbound), "out, \(count) intervals")
                #expect(
                    bill.sum == Self.direct(intervals, terms, rank) { $0.inbound + $0.outbound },
                    "sum, \(count) intervals")
                #expect(bill.missing == count - present.count)
            }
        }
        // Both paths were taken, the swap far more often (late data mostly adds bytes).
        #expect(swapped > 10 * refused && refused > 0, "\(swapped) swapped, \(refused) refused")
    }

    /// docs/windows.md, worked examples 12 and 13: what a bill rests on, and the two rank conventions.
    @Test func theWorkedExamplesOfTheBillingRules() {
        #expect(RateMath.percentileIndex(count: 11, percent: 95, rank: .round) + 1 == 10)
        #expect(RateMath.percentileIndex(count: 11, percent: 95, rank: .nearestRank) + 1 == 11)
        #expect(RateMath.percentileIndex(count: 8_640, percent: 95, rank: .round) + 1 == 8_208)
        #expect(RateMath.percentileIndex(count: 8_640, percent: 95, rank: .nearestRank) + 1 == 8_208)
        #expect(RateMath.percentileIndex(count: 8_611, percent: 95, rank: .round) + 1 == 8_180)
        #expect(RateMath.percentileIndex(count: 8_611, percent: 95, rank: .nearestRank) + 1 == 8_181)
        // 8,560 measured (2 flagged), 30 interpolated, 50 missing of 8,640.
        var buckets = [Bucket]()
        for index in 0..<8_590 {
            let measured = index < 8_560
            buckets.append(
                Bucket(
                    level: .fiveMinutes, start: Int64(index) * Bill.interval,
                    values: BucketValues(
                        traffic: TrafficDelta(repeating: Int64(index)), measuredMilliseconds: measured ? 300_000 : 0,
                        interpolatedMilliseconds: measured ? 0 : 300_000, flaggedMilliseconds: index < 2 ? 1_000 : 0)))
        }
        let period = Window(from: 0, to: 8_640 * Bill.interval)
        let counted = Bill.compute(buckets: buckets, period: period, now: period.to, method: .max)
        #expect(counted.classes == IntervalClasses(measured: 8_560, interpolated: 30, flagged: 2))
        #expect(counted.intervals == 8_590 && counted.missing == 50 && counted.rankPosition == 8_161)
        let strict = Bill.compute(
            buckets: buckets, period: period, now: period.to, method: .max,
            terms: IntervalTerms(interpolated: .exclude, flagged: .exclude))
        #expect(strict.classes == counted.classes && strict.missing == 50)
        #expect(strict.intervals == 8_558 && strict.rankPosition == 8_130)
    }
}
