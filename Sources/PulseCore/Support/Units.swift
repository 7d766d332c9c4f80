/// Parsing and formatting of durations, sizes and rates, without Foundation so output is the same on every host.
public enum Units {
    /// `"250ms"`, `"1s"`, `"1.5s"`, `"5m"`, `"2h"`, `"7d"` → milliseconds; `nil` when malformed or negative.
    public static func parseDuration(_ text: String) -> Int64? {
        let trimmed = text.trimmingWhitespace()
        let units: [(String, Double)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count)
            // "5ms" also ends in "s": only accept the suffix when the rest is a number.
            guard let value = Double(number), value.isFinite, value >= 0 else { continue }
            let milliseconds = value * scale
            guard milliseconds < 9.2e18, milliseconds == milliseconds.rounded() else { return nil }
            return Int64(milliseconds)
        }
        return nil
    }

    /// Milliseconds as the shortest exact duration text: `500ms`, `10s`, `5m`, `2h`, `30d`.
    public static func formatDuration(_ milliseconds: Int64) -> String {
        for (suffix, scale) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)]
        where milliseconds != 0 && milliseconds % scale == 0 {
            return "\(milliseconds / scale)\(suffix)"
        }
        return "\(milliseconds)ms"
    }

    /// How long ago something was, for people: the two largest whole units, `45s`, `2m 5s`, `1h 2m`, `3d 4h` (seconds
    /// at the finest; less than a second is `0s`). `formatDuration` gives exact durations for configs, where `3723s`
    /// is right and hard to read in a table.
    public static func formatAge(_ milliseconds: Int64) -> String {
        var left = max(0, milliseconds) / 1_000
        var parts = [String]()
        for (suffix, scale) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60), ("s", 1)] {
            guard parts.count < 2 else { break }
            let count = left / scale
            // Once the largest unit is given, the next is given even when zero (`1h 0m`): its place says the scale.
            if count > 0 || !parts.isEmpty || scale == 1 { parts.append("\(count)\(suffix)") }
            left -= count * scale
        }
        return parts.joined(separator: " ")
    }

    /// `"65536"`, `"256KiB"`, `"64MiB"`, `"1GiB"`, `"10kB"`, `"1MB"`, `"1GB"` → bytes.
    public static func parseByteSize(_ text: String) -> Int64? {
        let trimmed = text.trimmingWhitespace()
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776),
            ("kB", 1e3), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("B", 1),
        ]
        for (suffix, scale) in units where trimmed.hasSuffix(suffix) {
            guard let value = Double(trimmed.dropLast(suffix.count).trimmingWhitespace()), value.isFinite, value >= 0
            else { return nil }
            let bytes = (value * scale).rounded()
            return bytes < 9.2e18 ? Int64(bytes) : nil
        }
        return Int64(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// Bytes with IEC units and three significant digits: `812 B`, `1.50 KiB`, `3.21 GiB`.
    public static func formatBytes(_ bytes: Double) -> String {
        scaled(bytes, base: 1024, units: ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
    }

    /// Bits per second with SI units: `0 bit/s`, `12.5 Mbit/s`.
    public static func formatBitRate(bytesPerSecond: Double) -> String {
        scaled(bytesPerSecond * 8, base: 1000, units: ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "Pbit/s"])
    }

    /// A count with SI prefixes: `950`, `3.40k`, `14.3M`.
    public static func formatCount(_ value: Double) -> String {
        scaled(value, base: 1000, units: ["", "k", "M", "G", "T"]).replacingAll(" ", with: "")
    }

    /// A plain count per second with SI prefixes: `3.40k/s`.
    public static func formatRate(_ perSecond: Double) -> String {
        scaled(perSecond, base: 1000, units: ["/s", "k/s", "M/s", "G/s", "T/s"]).replacingAll(" ", with: "")
    }

    static func scaled(_ value: Double, base: Double, units: [String]) -> String {
        var magnitude = value
        var index = 0
        while abs(magnitude) >= base * 0.9995 && index < units.count - 1 {
            magnitude /= base
            index += 1
        }
        return "\(fixed(magnitude, significant: index == 0 ? 0 : 3)) \(units[index])"
    }

    /// `value` with `significant` digits (0: rounded to an integer), fixed notation, no locale.
    public static func fixed(_ value: Double, significant: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        if significant == 0 || abs(value) >= 100 { return "\(Int64(value.rounded()))" }
        let decimals = abs(value) >= 10 ? max(0, significant - 2) : max(0, significant - 1)
        return fixed(value, decimals: decimals)
    }

    /// `value` rounded to `decimals` places, fixed notation.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale: Double = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaledValue = (abs(value) * scale).rounded()
        let whole = Int64(scaledValue / scale)
        let fraction = Int64(scaledValue - Double(whole) * scale)
        let sign = value < 0 && scaledValue != 0 ? "-" : ""
        guard decimals > 0 else { return "\(sign)\(whole)" }
        let digits = String(fraction)
        return "\(sign)\(whole).\(String(repeating: "0", count: decimals - digits.count))\(digits)"
    }
}
