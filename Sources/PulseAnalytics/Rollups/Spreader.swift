/// Spreads a counted step over the buckets of one level, in proportion to time and in exact integers
/// (`docs/windows.md`, "Time classes and spreading").
public enum Spreader {
    /// Calls `add(start, values)` for every bucket of `level` that the step from `previous` to `next` touches (only
    /// those whose start lies in `wanted`, when given).
    ///
    /// - Parameters:
    ///   - sign: `1` to add the step, `-1` to take it out again (only instant and gap steps are ever taken out, and
    ///     they carry no peaks or speed).
    ///   - wanted: bucket starts to spread into. A bucket's share depends only on its own bounds, so leaving the
    ///     others out changes nothing in those spread: a read of the last minutes no longer walks every bucket of a
    ///     month-long gap.
    ///   - part: only the part of the step's span inside it (the time its agent was in a group, `docs/windows.md`,
    ///     "Scopes"): each bucket gets `F(min(end, part.end)) − F(max(start, part.start))` of the whole step's `F`, so
    ///     the parts of a step add up to the whole step exactly; its events go with the part that holds its end.
    public static func spread(
        _ step: CountedStep, from previous: StepSample, to next: StepSample, level: RollupLevel, sign: Int64 = 1,
        startingIn wanted: Range<Int64>? = nil, part: Range<Int64>? = nil, _ add: (Int64, BucketValues) -> Void
    ) {
        guard let wanted else {
            spread(step, from: previous, to: next, level: level, sign: sign, from: .min, to: .max, part: part, add)
            return
        }
        spread(
            step, from: previous, to: next, level: level, sign: sign, from: wanted.lowerBound, to: wanted.upperBound,
            part: part
        ) { start, values in
            if wanted.contains(start) { add(start, values) }
        }
    }

    /// ``spread(_:from:to:level:sign:startingIn:_:)`` walking only the buckets that start in `[first, last)` (plus
    /// the step's single bucket when it has one: the caller filters).
    private static func spread(
        _ step: CountedStep, from previous: StepSample, to next: StepSample, level: RollupLevel, sign: Int64,
        from first: Int64, to last: Int64, part: Range<Int64>?, _ add: (Int64, BucketValues) -> Void
    ) {
        precondition(sign == 1 || sign == -1 && step.timing.mayBeSplit, "only gap, outage and instant steps are taken out")
        // An unplaced step has no time to be spread over: the store keeps its counts apart (`docs/windows.md`).
        guard step.timing != .unplaced else { return }
        var events = SIMD8<Int64>.zero
        for (lane, event) in StepEvents.columns.enumerated() where step.events.contains(event) {
            events[lane] = sign
        }
        let signedCounted = TrafficDelta(clamping: step.counted) &* TrafficDelta(repeating: sign)
        guard step.timing != .instant else {
            // No span: whole, to whoever the caller adds it to (an instant step goes to the groups at its end).
            add(level.bucketStart(next.time), BucketValues(traffic: signedCounted, events: events))
            return
        }
        // A step into a new epoch places nothing before the epoch began (``CountedStep/start(from:to:)``).
        let start = CountedStep.start(from: previous, to: next)
        let end = next.time
        // Placed steps span at most `max_age` between times the wire bounds (`docs/windows.md`), so this cannot
        // overflow for a step the store spreads; clamped all the same, so no stored value can trap here.
        let span = Saturating.difference(end, start)
        // Measured and idle steps' time is measured, a gap's interpolated, an outage's neither; an implausible step's
        // is also flagged.
        let measured = step.timing == .measured || step.timing == .idle
        let interpolated = step.timing == .gap
        let flagged = step.events.contains(.implausible)
        var peakRx: UInt64 = 0
        var peakTx: UInt64 = 0
        var speed: UInt32 = 0
        // Only a step at least half an interval long gives a peak: a few milliseconds say nothing about a rate.
        if step.timing == .measured && Saturating.product(2, span) >= next.interval {
            peakRx = Ceiling.muldiv(step.counted[.rxBytes], 1_000, UInt64(span))
            peakTx = Ceiling.muldiv(step.counted[.txBytes], 1_000, UInt64(span))
        }
        if measured { speed = next.speed }
        // Every class spread here is member time, and its link speed (of any class: a gap's and an outage's bytes
        // are in the bucket too) is capacity.
        let link = Int64(next.speed)
        let whole = part.map { $0.lowerBound <= start && end <= $0.upperBound } ?? true
        // The common case, a measured step inside one bucket, needs no apportioning.
        if whole && level.bucketStart(start) == level.bucketStart(end - 1) {
            add(
                level.bucketStart(start),
                BucketValues(
                    traffic: signedCounted, measuredMilliseconds: measured ? span * sign : 0,
                    interpolatedMilliseconds: interpolated ? span * sign : 0, peakRx: peakRx, peakTx: peakTx,
                    speedMbps: speed, events: events, flaggedMilliseconds: flagged ? span * sign : 0,
                    memberMilliseconds: span * sign, capacity: Saturating.product(span, link) * sign))
            return
        }
        walk(
            step, start: start, end: end, span: span, part: whole ? start..<end : part!, level: level, sign: sign,
            first: first, last: last, values: (measured, interpolated, flagged, peakRx, peakTx, speed, link, events), add)
    }

    /// The buckets of the part `part` of a step spanning `[start, end)` (the whole step, or the time its agent was
    /// in a group): `F` of the whole step, restricted to the part; the events in the bucket holding the step's end
    /// when the part reaches it.
    private static func walk(
        _ step: CountedStep, start: Int64, end: Int64, span: Int64, part: Range<Int64>, level: RollupLevel,
        sign: Int64, first: Int64, last: Int64,
        values: (
            measured: Bool, interpolated: Bool, flagged: Bool, peakRx: UInt64, peakTx: UInt64, speed: UInt32,
            link: Int64, events: SIMD8<Int64>
        ), _ add: (Int64, BucketValues) -> Void
    ) {
        let low = max(start, part.lowerBound)
        let high = min(end, part.upperBound)
        guard low < high else { return }
        /// F(x) = ⌊V × (x − start) / span⌋, per counter; a bucket gets F(upper) − F(lower), which telescopes to V
        /// over the step.
        func upTo(_ x: Int64) -> Traffic {
            guard x < end else { return step.counted }
            var traffic = Traffic.zero
            for lane in 0..<8 { traffic[lane] = Ceiling.muldiv(step.counted[lane], UInt64(x - start), UInt64(span)) }
            return traffic
        }
        let eventBucket = high == end ? level.bucketStart(end - 1) : nil
        var bucket = level.bucketStart(low)
        if first > bucket {
            let aligned = level.bucketStart(first)
            bucket = aligned < first ? Saturating.sum(aligned, level.width) : aligned
        }
        guard bucket < high else { return }
        var before = upTo(max(bucket, low))
        while bucket < high && bucket < last {
            let lower = max(bucket, low)
            let upper = min(Saturating.sum(bucket, level.width), high)
            let after = upTo(upper)
            let share = TrafficDelta(truncatingIfNeeded: after &- before) &* TrafficDelta(repeating: sign)
            before = after
            let overlap = (upper - lower) * sign
            add(
                bucket,
                BucketValues(
                    traffic: share, measuredMilliseconds: values.measured ? overlap : 0,
                    interpolatedMilliseconds: values.interpolated ? overlap : 0, peakRx: values.peakRx,
                    peakTx: values.peakTx, speedMbps: values.speed,
                    events: bucket == eventBucket ? values.events : .zero,
                    flaggedMilliseconds: values.flagged ? overlap : 0, memberMilliseconds: overlap,
                    capacity: Saturating.product(overlap, values.link)))
            bucket = Saturating.sum(bucket, level.width)
        }
    }
}
