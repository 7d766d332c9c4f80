import Testing

@testable import PulseCore

@Suite struct CounterStepTests {
    let boot = BootID(high: 1, low: 1)
    var epoch64: CounterEpoch { CounterEpoch(bootID: boot, ifindex: 2, width: .bits64) }
    var epoch32: CounterEpoch { CounterEpoch(bootID: boot, ifindex: 2, width: .bits32) }

    @Test func increase() {
        #expect(CounterStep.between(previous: (100, epoch64), current: (250, epoch64)) == .increase(150))
    }

    @Test func thirtyTwoBitWrapIsTheRealIncrease() {
        let step = CounterStep.between(previous: (4_294_967_000, epoch32), current: (200, epoch32))
        #expect(step == .wrapped(496))
        #expect(step.counted == 496)
    }

    @Test func sixtyFourBitDecreaseIsADriverReset() {
        #expect(CounterStep.between(previous: (5_000_000, epoch64), current: (1_200, epoch64)) == .reset(1_200))
    }

    @Test func newEpochRestartsFromZero() {
        let rebooted = CounterEpoch(bootID: BootID(high: 9, low: 9), ifindex: 2, width: .bits64)
        let recreated = CounterEpoch(bootID: boot, ifindex: 3, width: .bits64)
        // Even a larger value in a new epoch is a restart, not an increase.
        #expect(CounterStep.between(previous: (100, epoch64), current: (5_000, rebooted)) == .reset(5_000))
        #expect(CounterStep.between(previous: (100, epoch64), current: (50, recreated)) == .reset(50))
    }

    @Test func jumpsAboveLinkSpeedAreImplausible() {
        let ceiling = CounterStep.ceiling(for: .rxBytes, speedMbps: 1_000, milliseconds: 1_000)
        #expect(ceiling == 187_565_536)
        #expect(CounterStep.between(previous: (0, epoch64), current: (10_000_000_000, epoch64), ceiling: ceiling) == .implausible(10_000_000_000))
        #expect(CounterStep.between(previous: (0, epoch64), current: (100_000_000, epoch64), ceiling: ceiling) == .increase(100_000_000))
        // A 32-bit decrease too large to be a wrap at link speed is a reset.
        #expect(CounterStep.between(previous: (4_000, epoch32), current: (1_000, epoch32), ceiling: 1_000_000) == .reset(1_000))
        #expect(CounterStep.ceiling(for: .rxErrors, speedMbps: 1_000, milliseconds: 1_000) == nil)
        #expect(CounterStep.ceiling(for: .rxBytes, speedMbps: nil, milliseconds: 1_000) == nil)
    }
}
