/// How numbers are written on axes, in tooltips and in annotations.
///
/// Formats are locale-free so an SVG is the same on every machine. `.bitsPerSecond` writes `12.5 Mbit/s`;
/// `.bytes` writes `3.2 GiB`.
public struct ValueFormat: Sendable {
    enum Style: Sendable {
        case plain
        case abbreviated
        case prefixed(unit: String, base: Double, prefixes: [String])
        case percent
        case fixed(decimals: Int, unit: String)
        case custom(@Sendable (Double) -> String)
    }

    var style: Style

    /// Plain digits; numbers from 10,000 up are abbreviated (`20k`, `1.5M`).
    public static let number = ValueFormat(style: .plain)
    /// Always abbreviated with SI suffixes: `1.5k`, `20M`.
    public static let abbreviated = ValueFormat(style: .abbreviated)
    /// A fraction written as a percentage: 0.25 is `25%`.
    public static let percent = ValueFormat(style: .percent)
    /// Bit rates with SI prefixes: `12.5 Mbit/s`.
    public static let bitsPerSecond = ValueFormat.si(unit: "bit/s")
    /// Byte rates with SI prefixes: `3.1 MB/s`.
    public static let bytesPerSecond = ValueFormat.si(unit: "B/s")
    /// Byte rates with IEC prefixes: `3.0 MiB/s`.
    public static let iecBytesPerSecond = ValueFormat.iec(unit: "B/s")
    /// Sizes with IEC prefixes: `3.2 GiB`.
    public static let bytes = ValueFormat.iec(unit: "B")
    /// Sizes with SI prefixes: `3.4 GB`.
    public static let siBytes = ValueFormat.si(unit: "B")
    /// Packet rates with SI prefixes: `1.2 kpkt/s`.
    public static let packetsPerSecond = ValueFormat.si(unit: "pkt/s")

    /// A unit with SI prefixes (k, M, G, T, P, E; powers of 1000).
    public static func si(unit: String) -> ValueFormat {
        ValueFormat(style: .prefixed(unit: unit, base: 1000, prefixes: ["", "k", "M", "G", "T", "P", "E"]))
    }

    /// A unit with IEC prefixes (Ki, Mi, Gi, Ti, Pi, Ei; powers of 1024).
    public static func iec(unit: String) -> ValueFormat {
        ValueFormat(style: .prefixed(unit: unit, base: 1024, prefixes: ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]))
    }

    /// A fixed number of decimals and an optional unit, such as `fixed(decimals: 1, unit: "ms")`.
    public static func fixed(decimals: Int, unit: String = "") -> ValueFormat {
        ValueFormat(style: .fixed(decimals: decimals, unit: unit))
    }

    /// Your own formatting. Keep it locale-free if the SVG must be the same on every machine.
    public static func custom(_ format: @escaping @Sendable (Double) -> String) -> ValueFormat {
        ValueFormat(style: .custom(format))
    }

    /// One value on its own, with three significant digits: `12.5 Mbit/s`, `3.2 GiB`, `1.23k`.
    public func format(_ value: Double) -> String {
        switch style {
        case .plain:
            // Large numbers read better abbreviated, as on axes: 29.6G rather than 29589773316.
            if abs(value) >= 10_000 {
                return ValueFormat.prefixedText(
                    value, unit: "", base: 1000, prefixes: ValueFormat.abbreviations, decimals: nil)
            }
            return ValueFormat.significant(value, digits: 4)
        case .abbreviated:
            return ValueFormat.prefixedText(
                value, unit: "", base: 1000, prefixes: ValueFormat.abbreviations, decimals: nil)
        case .prefixed(let unit, let base, let prefixes):
            return ValueFormat.prefixedText(value, unit: unit, base: base, prefixes: prefixes, decimals: nil)
        case .percent:
            return ValueFormat.significant(value * 100, digits: 3) + "%"
        case .fixed(let decimals, let unit):
            return DecimalFormatter.format(value, decimals: decimals) + (unit.isEmpty ? "" : " " + unit)
        case .custom(let format):
            return format(value)
        }
    }

    /// Labels for evenly spaced ticks: one prefix for the whole axis and just enough decimals to tell
    /// neighbouring ticks apart, so labels line up and never repeat.
    func formatTicks(_ ticks: [Double]) -> [String] {
        guard !ticks.isEmpty else { return [] }
        let largest = ticks.map(abs).max() ?? 0
        let step = ValueFormat.smallestGap(ticks)
        switch style {
        case .plain:
            if largest >= 10_000 {
                return ValueFormat.prefixedTicks(
                    ticks, unit: "", base: 1000, prefixes: ValueFormat.abbreviations,
                    largest: largest, step: step)
            }
            let decimals = ValueFormat.decimals(forStep: step)
            return ticks.map { ValueFormat.tickText($0, decimals: decimals) }
        case .abbreviated:
            return ValueFormat.prefixedTicks(
                ticks, unit: "", base: 1000, prefixes: ValueFormat.abbreviations,
                largest: largest, step: step)
        case .prefixed(let unit, let base, let prefixes):
            return ValueFormat.prefixedTicks(
                ticks, unit: unit, base: base, prefixes: prefixes, largest: largest, step: step)
        case .percent:
            let decimals = ValueFormat.decimals(forStep: step * 100)
            return ticks.map { ValueFormat.tickText($0 * 100, decimals: decimals) + "%" }
        case .fixed, .custom:
            return ticks.map(format)
        }
    }

    static let abbreviations = ["", "k", "M", "G", "T", "P", "E"]

    static func smallestGap(_ ticks: [Double]) -> Double {
        var gap = Double.infinity
        for i in 1..<max(ticks.count, 1) where ticks.count > 1 {
            let d = abs(ticks[i] - ticks[i - 1])
            if d > 0 { gap = min(gap, d) }
        }
        return gap.isFinite ? gap : max(abs(ticks.first ?? 1), 1)
    }

    /// The fewest decimals (0 ... 9) that write every multiple of `step` exactly; nil when even nine are not
    /// enough, and the ticks are written in exponent form instead.
    static func decimals(forStep step: Double) -> Int? {
        guard step.isFinite, step > 0 else { return 0 }
        for decimals in 0...9 {
            let scaled = step * pow10(decimals)
            if abs(scaled - scaled.rounded()) < 1e-6 * max(1, scaled) && scaled >= 0.999 { return decimals }
        }
        return nil
    }

    /// `value` with `decimals` digits, or in exponent form when no decimal count suits the step.
    static func tickText(_ value: Double, decimals: Int?) -> String {
        guard let decimals else { return DecimalFormatter.scientific(value) }
        return DecimalFormatter.format(value, decimals: decimals)
    }

    static func prefixIndex(for magnitude: Double, base: Double, count: Int) -> Int {
        var index = 0
        var scaled = magnitude
        while scaled >= base * 0.9995 && index < count - 1 {
            scaled /= base
            index += 1
        }
        return index
    }

    static func prefixedTicks(
        _ ticks: [Double], unit: String, base: Double, prefixes: [String], largest: Double, step: Double
    ) -> [String] {
        let index = prefixIndex(for: largest, base: base, count: prefixes.count)
        var divisor = 1.0
        for _ in 0..<index { divisor *= base }
        if largest / divisor >= 1e6 {
            // Beyond the largest prefix: plain exponents read better than 1e282E.
            let suffix = unit.isEmpty ? "" : " " + unit
            return ticks.map { $0 == 0 ? "0" : DecimalFormatter.scientific($0) + suffix }
        }
        let decimals = decimals(forStep: step / divisor)
        let suffix = unit.isEmpty ? prefixes[index] : " " + prefixes[index] + unit
        return ticks.map { tick in
            tick == 0 ? "0" : ValueFormat.tickText(tick / divisor, decimals: decimals) + suffix
        }
    }

    static func prefixedText(
        _ value: Double, unit: String, base: Double, prefixes: [String], decimals: Int?
    ) -> String {
        guard value.isFinite else { return DecimalFormatter.format(value, decimals: 0) }
        var index = prefixIndex(for: abs(value), base: base, count: prefixes.count)
        var divisor = 1.0
        for _ in 0..<index { divisor *= base }
        var scaled = value / divisor
        // Rounding to three digits can carry into the next prefix (999.96 k is 1.00 M).
        if abs(scaled) >= 999.5 && index < prefixes.count - 1 && base == 1000 {
            index += 1
            divisor *= base
            scaled = value / divisor
        }
        if abs(scaled) >= 1e6 {
            return DecimalFormatter.scientific(value) + (unit.isEmpty ? "" : " " + unit)
        }
        let text = significant(scaled, digits: 3)
        if unit.isEmpty { return text + prefixes[index] }
        return text + " " + prefixes[index] + unit
    }

    /// `digits` significant digits, trailing zeros dropped; large integers keep all their digits.
    static func significant(_ value: Double, digits: Int) -> String {
        guard value != 0, value.isFinite else { return DecimalFormatter.format(value, decimals: 0) }
        let exponent = Int(magnitudeExponent(abs(value)))
        let decimals = max(0, digits - 1 - exponent)
        return DecimalFormatter.shortest(value, maxDecimals: decimals)
    }
}
