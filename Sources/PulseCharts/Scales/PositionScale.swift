#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A resolved x or y scale: maps data (numbers, seconds, or category indexes) to pixels.
struct PositionScale: Sendable {
    enum Kind: Sendable, Hashable {
        case linear, log, time, band
    }

    var kind: Kind
    /// Data bounds for continuous scales; for band scales 0 ... number of categories.
    var lower: Double
    var upper: Double
    /// Pixel positions of `lower` and `upper`; the y scale runs from bottom to top.
    var rangeStart: Double = 0
    var rangeEnd: Double = 1
    /// Band categories in display order.
    var categories: [String] = []
    /// For each category index in the mark table, its band, or -1 when the domain leaves it out.
    var bandOfTableIndex: [Int] = []
    /// Whether the scale had any data (or an explicit domain) at all.
    var hasDomain: Bool

    static let empty = PositionScale(kind: .linear, lower: 0, upper: 1, hasDomain: false)

    var isContinuous: Bool { kind != .band }

    /// Pixels per band; zero for continuous scales.
    var step: Double {
        guard kind == .band, !categories.isEmpty else { return 0 }
        return (rangeEnd - rangeStart) / Double(categories.count)
    }

    /// The pixel position of a value. For band scales the value is a table index and the result is the band's
    /// centre; NaN when the value cannot be drawn.
    @inline(__always)
    func position(_ value: Double) -> Double {
        switch kind {
        case .linear, .time:
            let span = upper - lower
            guard span != 0 else { return (rangeStart + rangeEnd) / 2 }
            return rangeStart + (value - lower) / span * (rangeEnd - rangeStart)
        case .log:
            guard value > 0 else { return .nan }
            let lo = log10(lower)
            let span = log10(upper) - lo
            guard span != 0 else { return (rangeStart + rangeEnd) / 2 }
            return rangeStart + (log10(value) - lo) / span * (rangeEnd - rangeStart)
        case .band:
            guard value.isFinite else { return .nan }
            let index = Int(value)
            guard index >= 0, index < bandOfTableIndex.count else { return .nan }
            let band = bandOfTableIndex[index]
            guard band >= 0 else { return .nan }
            return bandCenter(band)
        }
    }

    /// For linear and time scales, `position(v) == offset + v * factor`, so long series can skip the switch.
    var linearMap: (offset: Double, factor: Double)? {
        guard kind == .linear || kind == .time, upper != lower else { return nil }
        let factor = (rangeEnd - rangeStart) / (upper - lower)
        return (rangeStart - lower * factor, factor)
    }

    /// The centre of the `band`-th category in display order.
    func bandCenter(_ band: Int) -> Double {
        rangeStart + (Double(band) + 0.5) * step
    }
}
