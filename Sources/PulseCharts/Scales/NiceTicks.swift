#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Round tick values for quantitative scales: multiples of 1, 2, 2.5 or 5 times a power of ten.
enum NiceTicks {
    private static let multipliers: [Double] = [1, 2, 2.5, 5]

    /// The smallest nice step at least `rawStep`.
    static func step(atLeast rawStep: Double) -> Double {
        guard rawStep.isFinite, rawStep > 0 else { return 1 }
        let exponent = Int(magnitudeExponent(rawStep))
        let base = pow10(exponent)
        for m in multipliers where m * base >= rawStep * (1 - 1e-9) {
            return m * base
        }
        return 10 * base
    }

    /// The nice step after `step`, for thinning labels that do not fit.
    static func nextStep(after current: Double) -> Double {
        step(atLeast: current * 1.0001)
    }

    /// A step giving about `count` intervals over `lower ... upper`.
    static func step(lower: Double, upper: Double, count: Int) -> Double {
        let span = upper - lower
        guard span > 0, span.isFinite else { return max(abs(lower), 1) }
        return step(atLeast: span / Double(max(count, 1)))
    }

    /// Multiples of `step` inside `lower ... upper`, computed from integers so they do not drift.
    static func ticks(lower: Double, upper: Double, step: Double) -> [Double] {
        guard step > 0, lower.isFinite, upper.isFinite, upper >= lower else { return [] }
        let first = (lower / step - 1e-9).rounded(.up)
        let last = (upper / step + 1e-9).rounded(.down)
        guard last >= first, last - first < 10_000 else { return [] }
        return stride(from: first, through: last, by: 1).map { clean($0 * step, step: step) }
    }

    /// `lower ... upper` widened to multiples of a nice step for about `count` ticks.
    static func niceDomain(lower: Double, upper: Double, count: Int) -> (Double, Double) {
        var lo = lower
        var hi = upper
        if lo == hi {
            let pad = lo == 0 ? 1 : abs(lo) * 0.1
            lo -= pad
            hi += pad
        }
        for _ in 0..<3 {
            let s = step(lower: lo, upper: hi, count: count)
            let newLo = (lo / s + 1e-9).rounded(.down) * s
            let newHi = (hi / s - 1e-9).rounded(.up) * s
            if newLo == lo && newHi == hi { break }
            lo = clean(newLo, step: s)
            hi = clean(newHi, step: s)
        }
        return (lo, hi)
    }

    /// Removes binary noise such as 0.30000000000000004 so that equal ticks compare equal.
    static func clean(_ value: Double, step: Double) -> Double {
        let decimals = max(0, -Int(magnitudeExponent(step)) + 2)
        guard decimals < 15 else { return value }
        let scale = pow10(decimals)
        let cleaned = (value * scale).rounded() / scale
        return cleaned == 0 ? 0 : cleaned
    }

    /// Powers of ten (and 2 and 5 times them when the domain spans few decades) inside a log domain.
    static func logTicks(lower: Double, upper: Double, maxCount: Int) -> [Double] {
        guard lower > 0, upper >= lower else { return [] }
        let first = Int(magnitudeExponent(lower))
        let last = Int(magnitudeExponent(upper)) + 1
        let decades = last - first
        let multipliers: [Double] = decades * 3 <= maxCount ? [1, 2, 5] : [1]
        let every = max(1, Int((Double(decades) / Double(max(maxCount, 1))).rounded(.up)))
        var ticks: [Double] = []
        var e = first
        while e <= last {
            for m in multipliers {
                let t = m * pow10(e)
                if t >= lower * (1 - 1e-9) && t <= upper * (1 + 1e-9) { ticks.append(t) }
            }
            e += every
        }
        return ticks
    }
}
