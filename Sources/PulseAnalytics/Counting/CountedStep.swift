import PulseCore

/// How a step's span of time is known (`docs/windows.md`, "Time classes and spreading").
public enum StepTiming: UInt8, Sendable, Hashable {
    /// The later sample is not later in time (the agent's clock went back): counted in one bucket, covers nothing.
    case instant = 0
    /// Adjacent ticks: measured.
    case measured = 1
    /// Only idle heartbeats in between, counters unchanged: known, counted as measured time.
    case idle = 2
    /// Ticks are missing (a short outage, a lost or not yet arrived batch, an epoch change), for at most
    /// `outage_after`: spread, interpolated.
    case gap = 3
    /// A sample's time cannot be placed (older than `max_age`, or from a clock too far ahead), or the step spans more
    /// than `max_age`: counted in the unplaced totals, in no bucket (`docs/windows.md`, "Time that cannot be placed").
    case unplaced = 4
    /// Like a gap, but longer than `outage_after`: its counts are spread, its time is not covered (`docs/windows.md`,
    /// "Time classes and spreading").
    case outage = 5

    /// Whether late data may still land inside the step (so the store must be able to take it out again).
    public var mayBeSplit: Bool { self == .instant || self == .gap || self == .unplaced || self == .outage }

    /// Whether the step's counts are spread over its span later than it is counted: gaps and outages, which reads
    /// spread while late data may still split them.
    public var isInterpolated: Bool { self == .gap || self == .outage }
}

/// What happened to the counters during a step, beyond plain increases.
public struct StepEvents: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A new counter epoch (reboot, re-created interface).
    public static let epoch = StepEvents(rawValue: 1 << 0)
    /// A 32-bit counter wrapped.
    public static let wrap = StepEvents(rawValue: 1 << 1)
    /// A counter went down within its epoch: the driver reset it.
    public static let reset = StepEvents(rawValue: 1 << 2)
    /// An increase above what the link can carry: counted, and flagged.
    public static let implausible = StepEvents(rawValue: 1 << 3)
    /// The agent's clock went back, or was ahead and its batch was moved.
    public static let clock = StepEvents(rawValue: 1 << 4)
    /// A 32-bit counter could have wrapped more than once, or been reset, in the step's time: the least count that
    /// fits was taken (`docs/windows.md`, "Counting a step").
    public static let ambiguous = StepEvents(rawValue: 1 << 5)

    /// In the order of the rollups' event columns.
    public static let columns: [StepEvents] = [.epoch, .wrap, .reset, .implausible, .clock, .ambiguous]
}

/// One step between two samples adjacent in counter order: what it counted, how its time is known, and events.
public struct CountedStep: Sendable, Hashable {
    public var counted: Traffic
    public var timing: StepTiming
    public var events: StepEvents

    public init(counted: Traffic, timing: StepTiming, events: StepEvents) {
        self.counted = counted
        self.timing = timing
        self.events = events
    }

    /// When the step's counts began to accrue, at the earliest: `previous.time`, except for a step into a new epoch
    /// whose start `next` knows and that lies strictly between the two samples. Such a step's counts accrued after its
    /// epoch began: nothing of it is placed before that, and the time from `previous` to it (the host off, the
    /// interface gone) is in no step at all (`docs/windows.md`, "Counting a step").
    @inline(__always)
    public static func start(from previous: StepSample, to next: StepSample) -> Int64 {
        if previous.epoch != next.epoch, let began = next.epochBegan, previous.time < began, began < next.time {
            return began
        }
        return previous.time
    }

    /// Counts the step from `previous` to `next` by the rules of `docs/windows.md`.
    ///
    /// Times and settings come from agents (through the store), so nothing here may trap on an extreme value: every
    /// difference and product of times saturates instead of overflowing.
    ///
    /// - Parameters:
    ///   - maximumRate: bytes per second assumed possible where the link speed is unknown (`max_rate`).
    ///   - maximumSpan: the longest step that is placed in time (`max_age`); a longer one is unplaced.
    ///   - outageAfter: the longest gap whose time is covered (`outage_after`); a longer one is an outage.
    public static func between(
        _ previous: StepSample, _ next: StepSample, maximumRate: UInt64, maximumSpan: Int64 = .max,
        outageAfter: Int64 = .max
    ) -> CountedStep {
        let start = start(from: previous, to: next)
        let gap = Saturating.difference(next.time, start)
        var events: StepEvents = next.clockShifted ? .clock : []
        var counted = Traffic()
        let sameEpoch = previous.epoch == next.epoch
        if sameEpoch {
            let elapsed = gap > 0 ? gap : next.interval
            let bytesCeiling = Ceiling.bytes(speedMbps: next.speed, milliseconds: elapsed, maximumRate: maximumRate)
            let packetsCeiling = Ceiling.packets(bytesCeiling: bytesCeiling)
            let turn: UInt64 = 1 << 32
            var wrapped = false
            var reset = false
            for counter in TrafficCounter.allCases {
                let before = previous.counters[counter]
                let after = next.counters[counter]
                let ceiling = counter.isBytes ? bytesCeiling : packetsCeiling
                // A 32-bit counter: the count its values give, with one wrap when it went down.
                if next.width == .bits32, before < turn, after < turn {
                    let delta = after >= before ? after - before : turn - before + after
                    // One more turn fits the ceiling too: the counters cannot say how many; the least that fits.
                    if ceiling >= turn && delta <= ceiling - turn {
                        counted[counter] = after >= before ? after - before : after
                        events.insert(.ambiguous)
                        continue
                    }
                }
                if after >= before {
                    counted[counter] = after - before
                    if after - before > ceiling { events.insert(.implausible) }
                } else if next.width == .bits32, before < turn, after < turn, turn - before + after <= ceiling {
                    counted[counter] = turn - before + after
                    wrapped = true
                } else {
                    counted[counter] = after
                    reset = true
                }
            }
            // A driver resets an interface's counters together: one clear reset makes the step a reset, and no
            // counter of it that went down is taken as a wrap.
            if reset {
                events.insert(.reset)
                for counter in TrafficCounter.allCases where next.counters[counter] < previous.counters[counter] {
                    counted[counter] = next.counters[counter]
                }
            } else if wrapped {
                events.insert(.wrap)
            }
        } else {
            counted = next.counters
            events.insert(.epoch)
        }
        // The stores' columns are signed: no step counts more than 2⁶³ − 1 of a counter (only a broken or hostile
        // agent's counters move that much), so every share of it spread into buckets is exact.
        counted = pointwiseMin(counted, Traffic(repeating: UInt64(Int64.max)))
        let twiceGap = Saturating.product(2, gap)
        let timing: StepTiming
        // A step that starts at its epoch's start is placed by its end's batch: that start lies after `previous`.
        if !(previous.placeable || start != previous.time) || !next.placeable || gap > maximumSpan {
            timing = .unplaced
        } else if gap <= 0 {
            timing = .instant
            events.insert(.clock)
        } else if sameEpoch && twiceGap <= Saturating.product(3, next.interval) {
            timing = .measured
        } else if sameEpoch && next.heartbeat > 0 && previous.counters == next.counters
            && twiceGap
                <= Saturating.sum(Saturating.product(2, next.heartbeat), Saturating.product(3, next.interval))
        {
            timing = .idle
        } else {
            timing = gap > outageAfter ? .outage : .gap
        }
        return CountedStep(counted: counted, timing: timing, events: events)
    }
}

/// Int64 arithmetic that clamps at the type's bounds instead of trapping, for values that came off the wire.
public enum Saturating {
    /// `a − b`, clamped.
    @inline(__always)
    public static func difference(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : value
    }

    /// `a + b`, clamped.
    @inline(__always)
    public static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : value
    }

    /// `a × b`, clamped.
    @inline(__always)
    public static func product(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? ((a < 0) != (b < 0) ? .min : .max) : value
    }
}

/// The most a counter can plausibly grow between two samples (`docs/windows.md`, "Ceilings").
public enum Ceiling {
    /// Bytes: the link at full speed for `milliseconds`, with 50 % headroom, plus 64 KiB; saturating.
    public static func bytes(speedMbps: UInt32, milliseconds: Int64, maximumRate: UInt64) -> UInt64 {
        let elapsed = UInt64(clamping: max(milliseconds, 0))
        let (triple, overflow) = elapsed.multipliedReportingOverflow(by: 3)
        guard !overflow else { return .max }
        // ⌊S × 125 × e × 3 / 2⌋ with a known speed (125 bytes per millisecond per Mbit/s), else
        // ⌊max_rate × e × 3 / 2000⌋.
        let scaled = speedMbps > 0 ? muldiv(UInt64(speedMbps) * 125, triple, 2) : muldiv(maximumRate, triple, 2_000)
        return saturatingAdd(scaled, 65_536)
    }

    /// Packets, errors and drops: a minimum-size frame (84 bytes on the wire) per 84 bytes of the bytes ceiling.
    public static func packets(bytesCeiling: UInt64) -> UInt64 {
        saturatingAdd(bytesCeiling / 84, 64)
    }

    /// ⌊a × b / c⌋ without intermediate overflow, saturating at `UInt64.max`.
    static func muldiv(_ a: UInt64, _ b: UInt64, _ c: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        guard product.high < c else { return .max }
        return c.dividingFullWidth(product).quotient
    }

    static func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
