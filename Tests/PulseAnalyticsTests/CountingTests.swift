import PulseCore
import TestSupport
import Testing

@testable import PulseAnalytics

/// The counting rules of docs/windows.md, with its worked examples.
@Suite struct CountingTests {
    func sample(
        _ order: Int64, time: Int64, rx: UInt64, tx: UInt64 = 0, epoch: Int64 = 1, width: CounterWidth = .bits64,
        speed: UInt32 = 0, interval: Int64 = 1_000, heartbeat: Int64 = 60_000
    ) -> StepSample {
        var counters = Traffic.zero
        counters[.rxBytes] = rx
        counters[.txBytes] = tx
        return StepSample(
            order: order, tick: 0, time: time, epoch: epoch, width: width, counters: counters, interval: interval,
            heartbeat: heartbeat, speed: speed)
    }

    let maximumRate: UInt64 = 50_000_000_000

    @Test func wrapBelowTheCeilingIsAWrap() {
        let step = CountedStep.between(
            sample(1, time: 0, rx: 4_294_960_000, width: .bits32, speed: 1_000),
            sample(2, time: 1_000, rx: 2_000, width: .bits32, speed: 1_000), maximumRate: maximumRate)
        #expect(Ceiling.bytes(speedMbps: 1_000, milliseconds: 1_000, maximumRate: maximumRate) == 187_565_536)
        #expect(step.counted[.rxBytes] == 9_296)
        #expect(step.events == [.wrap])
        #expect(step.timing == .measured)
    }

    @Test func wrapAboveTheCeilingIsAReset() {
        let step = CountedStep.between(
            sample(1, time: 0, rx: 3_000_000_000, width: .bits32, speed: 1_000),
            sample(2, time: 1_000, rx: 5_000, width: .bits32, speed: 1_000), maximumRate: maximumRate)
        #expect(step.counted[.rxBytes] == 5_000)
        #expect(step.events == [.reset])
    }

    @Test func sixtyFourBitDecreaseIsAResetAndANewEpochCountsFromItsFirstValue() {
        let reset = CountedStep.between(
            sample(1, time: 0, rx: 10_000), sample(2, time: 1_000, rx: 300), maximumRate: maximumRate)
        #expect(reset.counted[.rxBytes] == 300 && reset.events == [.reset])
        let reboot = CountedStep.between(
            sample(1, time: 0, rx: 10_000), sample(2, time: 1_000, rx: 20_000, epoch: 2), maximumRate: maximumRate)
        #expect(reboot.counted[.rxBytes] == 20_000 && reboot.events == [.epoch] && reboot.timing == .gap)
    }

    @Test func implausibleStepsAreCountedAndFlagged() {
        let step = CountedStep.between(
            sample(1, time: 0, rx: 0, speed: 10), sample(2, time: 1_000, rx: 10_000_000_000, speed: 10),
            maximumRate: maximumRate)
        #expect(step.counted[.rxBytes] == 10_000_000_000)
        #expect(step.events == [.implausible])
    }

    @Test func timingClasses() {
        let idle = CountedStep.between(
            sample(1, time: 0, rx: 5), sample(2, time: 60_000, rx: 5), maximumRate: maximumRate)
        #expect(idle.timing == .idle)
        let missing = CountedStep.between(
            sample(1, time: 60_000, rx: 5), sample(2, time: 180_000, rx: 5), maximumRate: maximumRate)
        #expect(missing.timing == .gap)
        let noSuppression = CountedStep.between(
            sample(1, time: 0, rx: 5), sample(2, time: 60_000, rx: 5, heartbeat: 0), maximumRate: maximumRate)
        #expect(noSuppression.timing == .gap)
        let back = CountedStep.between(
            sample(1, time: 43_200_000, rx: 5), sample(2, time: 39_601_000, rx: 9), maximumRate: maximumRate)
        #expect(back.timing == .instant && back.events == [.clock] && back.counted[.rxBytes] == 4)
        let late = CountedStep.between(
            sample(1, time: 0, rx: 5), sample(2, time: 1_500, rx: 9), maximumRate: maximumRate)
        #expect(late.timing == .measured)
    }

    /// docs/windows.md, worked example 11: a gap longer than `outage_after` is an outage: its bytes are spread
    /// (totals exact), its time is not covered, and its implausible steps' time is flagged.
    @Test func anOutageSpreadsItsBytesAndCoversNoTime() {
        let p = sample(1, time: 36_000_000, rx: 1_000)  // 10:00:00
        let n = sample(2, time: 50_400_000, rx: 4_801_000)  // 14:00:00
        let outage = CountedStep.between(p, n, maximumRate: maximumRate, outageAfter: 900_000)
        #expect(outage.timing == .outage && outage.timing.mayBeSplit)
        var buckets = [(Int64, BucketValues)]()
        Spreader.spread(outage, from: p, to: n, level: .fiveMinutes) { buckets.append(($0, $1)) }
        #expect(buckets.count == 48 && buckets.allSatisfy { $0.1.traffic[.rxBytes] == 100_000 })
        #expect(buckets.allSatisfy { !$0.1.hasData && $0.1.flaggedMilliseconds == 0 })
        // Up to `outage_after` it is a gap: interpolated.
        let gap = CountedStep.between(p, n, maximumRate: maximumRate, outageAfter: 14_400_000)
        #expect(gap.timing == .gap)
        // An implausible step flags every bucket it spreads into, by its time there.
        let flagged = CountedStep(counted: outage.counted, timing: .outage, events: [.implausible])
        var flaggedTime: Int64 = 0
        Spreader.spread(flagged, from: p, to: n, level: .oneHour) { flaggedTime += $1.flaggedMilliseconds }
        #expect(flaggedTime == 14_400_000)
    }

    /// docs/windows.md, worked example 3: a short gap's bytes are spread over it.
    @Test func aShortGapIsSpreadOverItsBuckets() {
        let p = sample(1, time: 36_180_000, rx: 1_000)  // 10:03:00
        let n = sample(2, time: 36_780_000, rx: 601_000)  // 10:13:00
        let step = CountedStep.between(p, n, maximumRate: maximumRate)
        var buckets = [(Int64, BucketValues)]()
        Spreader.spread(step, from: p, to: n, level: .fiveMinutes) { buckets.append(($0, $1)) }
        #expect(buckets.map(\.0) == [36_000_000, 36_300_000, 36_600_000])
        #expect(buckets.map { $0.1.traffic[.rxBytes] } == [120_000, 300_000, 180_000])
        #expect(buckets.map { $0.1.interpolatedMilliseconds } == [120_000, 300_000, 180_000])
        #expect(buckets.allSatisfy { $0.1.measuredMilliseconds == 0 && $0.1.peakRx == 0 })

        // Coarse buckets get exactly the sum of the fine ones, and the total is exact.
        var minutes = [Int64: Int64]()
        Spreader.spread(step, from: p, to: n, level: .oneMinute) { minutes[$0, default: 0] += $1.traffic[.rxBytes] }
        #expect(minutes.values.reduce(0, +) == 600_000)
        for (start, bytes) in buckets.map({ ($0.0, $0.1.traffic[.rxBytes]) }) {
            let inside = minutes.filter { $0.key >= start && $0.key < start + 300_000 }.values.reduce(0, +)
            #expect(inside == bytes)
        }

        // Taking the step out again cancels it exactly.
        var total = BucketValues()
        Spreader.spread(step, from: p, to: n, level: .oneHour) { total.merge($1) }
        Spreader.spread(step, from: p, to: n, level: .oneHour, sign: -1) { total.merge($1) }
        #expect(total == BucketValues())
    }

    /// Spreading into some buckets only (a read of the last minutes over a month-long gap) gives those buckets
    /// exactly what spreading into all of them gives.
    @Test func spreadingIntoSomeBucketsGivesThemWhatTheWholeSpreadGives() {
        var random = SplitMix64(seed: 3)
        for _ in 0..<300 {
            let from = Int64(random.next() % 10_000_000)
            let to = from + 1 + Int64(random.next() % 40_000_000)
            let p = sample(1, time: from, rx: 0, tx: 0, speed: 1_000)
            let n = sample(
                2, time: to, rx: random.next() % 1_000_000_000_000, tx: random.next() % 1_000_000, speed: 1_000)
            let step = CountedStep.between(p, n, maximumRate: maximumRate)
            for level in [RollupLevel.oneMinute, .fiveMinutes, .oneHour] {
                var whole = [Int64: BucketValues]()
                Spreader.spread(step, from: p, to: n, level: level) { whole[$0] = $1 }
                let low = Int64(random.next() % 50_000_000)
                let wanted = low..<(low + Int64(random.next() % 5_000_000))
                var some = [Int64: BucketValues]()
                Spreader.spread(step, from: p, to: n, level: level, startingIn: wanted) { some[$0] = $1 }
                #expect(some == whole.filter { wanted.contains($0.key) }, "\(level) \(from)…\(to) in \(wanted)")
            }
        }
    }

    @Test func measuredStepsCarryPeaksAndSpeed() {
        let p = sample(1, time: 59_500, rx: 0, tx: 0, speed: 1_000)
        let n = sample(2, time: 60_500, rx: 125_000, tx: 2_000, speed: 1_000)
        let step = CountedStep.between(p, n, maximumRate: maximumRate)
        var buckets = [(Int64, BucketValues)]()
        Spreader.spread(step, from: p, to: n, level: .oneMinute) { buckets.append(($0, $1)) }
        #expect(buckets.map(\.0) == [0, 60_000])
        #expect(buckets.map { $0.1.traffic[.rxBytes] } == [62_500, 62_500])
        #expect(buckets.allSatisfy { $0.1.peakRx == 125_000 && $0.1.peakTx == 2_000 && $0.1.speedMbps == 1_000 })
        #expect(buckets.map { $0.1.measuredMilliseconds } == [500, 500])
    }
}
