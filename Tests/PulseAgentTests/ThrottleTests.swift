import PulseCore
import TestSupport
import Testing

@testable import PulseAgent

@Suite struct IdleSuppressorTests {
    let epoch = CounterEpoch(bootID: BootID(high: 1, low: 1), ifindex: 2, width: .bits64)

    func tick(_ time: Int64, _ rxBytes: UInt64, epoch: CounterEpoch? = nil) -> TickSample {
        var counters = CounterValues()
        counters.values[0] = rxBytes
        return TickSample(
            timestamp: time,
            interfaces: [InterfaceSample(name: "eth0", epoch: epoch ?? self.epoch, counters: counters, linkState: nil)])
    }

    @Test func idleInterfacesAreSentOnlyAsHeartbeats() {
        var suppressor = IdleSuppressor(heartbeat: 60_000)
        var sent = [Int64]()
        for second in 0..<180 {
            sent += suppressor.filter(tick(Int64(second) * 1_000, 500)).map(\.timestamp)
        }
        #expect(sent == [0, 60_000, 120_000])
    }

    @Test func trafficAfterSilenceBringsTheLastQuietSample() {
        var suppressor = IdleSuppressor(heartbeat: 60_000)
        _ = suppressor.filter(tick(0, 500))
        for second in 1..<10 { #expect(suppressor.filter(tick(Int64(second) * 1_000, 500)).isEmpty) }
        let out = suppressor.filter(tick(10_000, 900))
        // The 9-second sample pins where the traffic started; 10 s carries it.
        #expect(out.map(\.timestamp) == [9_000, 10_000])
        #expect(out.map { $0.sample.counters.values[0] } == [500, 900])
        // Busy interfaces are sent every tick.
        #expect(suppressor.filter(tick(11_000, 1_000)).map(\.timestamp) == [11_000])
    }

    /// Link facts read every 30 s do not count as a change when they are the same as last time.
    @Test func unchangedLinkFactsDoNotDefeatSuppression() {
        var suppressor = IdleSuppressor(heartbeat: 60_000)
        let state = LinkState(speedMbps: 1_000, operState: .up, carrier: true, mtu: 1_500)
        var sent = [Int64]()
        for second in 0..<150 {
            var sample = tick(Int64(second) * 1_000, 500)
            if second % 30 == 0 { sample.interfaces[0].linkState = state }
            sent += suppressor.filter(sample).map(\.timestamp)
        }
        #expect(sent == [0, 60_000, 120_000])
        var changed = tick(150_000, 500)
        changed.interfaces[0].linkState = LinkState(speedMbps: 1_000, operState: .down, carrier: false, mtu: 1_500)
        #expect(suppressor.filter(changed).count == 1)
    }

    @Test func newEpochIsSentAtOnceAndZeroHeartbeatDisablesSuppression() {
        var suppressor = IdleSuppressor(heartbeat: 60_000)
        _ = suppressor.filter(tick(0, 500))
        let recreated = CounterEpoch(bootID: epoch.bootID, ifindex: 9, width: .bits64)
        #expect(suppressor.filter(tick(1_000, 500, epoch: recreated)).count == 1)

        var everything = IdleSuppressor(heartbeat: 0)
        for second in 0..<5 { #expect(everything.filter(tick(Int64(second) * 1_000, 500)).count == 1) }
    }
}

@Suite struct TokenBucketTests {
    @Test func limitsToTheBudgetAfterTheBurst() {
        let start = ContinuousClock.now
        var bucket = TokenBucket(rate: 10_000, capacity: 20_000, now: start)
        #expect(bucket.delay(for: 20_000, now: start) == .zero)
        bucket.consume(20_000, now: start)
        // Empty: 5,000 bytes need half a second.
        #expect(bucket.delay(for: 5_000, now: start) == .milliseconds(500))
        #expect(bucket.delay(for: 5_000, now: start + .milliseconds(500)) == .zero)
        // Larger than the burst: waits for a full bucket, then goes into debt.
        bucket.consume(5_000, now: start + .milliseconds(500))
        #expect(bucket.delay(for: 50_000, now: start + .milliseconds(500)) == .seconds(2))
    }

    @Test func unlimitedNeverWaits() {
        var bucket = TokenBucket(rate: 0)
        bucket.consume(1 << 30)
        #expect(bucket.delay(for: 1 << 30) == .zero)
    }

    @Test func sustainedRateMatchesTheBudget() {
        // Simulated time: send 1 KiB frames as fast as the bucket allows for 60 s.
        var now = ContinuousClock.now
        let end = now + .seconds(60)
        var bucket = TokenBucket(rate: 8_192, capacity: 16_384, now: now)
        var sent = 0
        while now < end {
            let delay = bucket.delay(for: 1_024, now: now)
            if delay > .zero {
                now += delay
                continue
            }
            bucket.consume(1_024, now: now)
            sent += 1_024
        }
        // 60 s at 8 KiB/s plus the initial 16 KiB burst.
        #expect(sent >= 8_192 * 60 + 16_384 - 1_024 && sent <= 8_192 * 60 + 16_384 + 1_024)
    }
}

@Suite struct BackoffTests {
    @Test func growsWithJitterToTheMaximumAndResets() {
        var generator = SplitMix64(seed: 5)
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(8))
        var ceilings: [Duration] = [
            .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8),
        ]
        for ceiling in ceilings {
            let delay = backoff.next(using: &generator)
            #expect(delay >= ceiling / 2 && delay <= ceiling)
        }
        backoff.reset()
        ceilings = [.milliseconds(500)]
        #expect(backoff.next(using: &generator) <= .milliseconds(500))
    }
}
