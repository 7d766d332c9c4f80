#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Locale-free decimal formatting: the same number always gives the same characters on every machine.
enum DecimalFormatter {
    /// `value` with exactly `decimals` digits after the point (0 ... 9), or in exponent form beyond ±1e15.
    static func format(_ value: Double, decimals: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(value, decimals: decimals, trimZeros: false, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` rounded to at most `maxDecimals` digits after the point, without trailing zeros.
    static func shortest(_ value: Double, maxDecimals: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(value, decimals: maxDecimals, trimZeros: true, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Three significant digits and a power of ten, such as `2.5e-12`.
    static func scientific(_ value: Double) -> String {
        guard value != 0, value.isFinite else { return format(value, decimals: 0) }
        var bytes: [UInt8] = []
        appendExponent(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let powers: [Double] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    static func append(_ value: Double, decimals: Int, trimZeros: Bool, to bytes: inout [UInt8]) {
        guard value.isFinite else {
            let text = value.isNaN ? "NaN" : value < 0 ? "-∞" : "∞"
            bytes.append(contentsOf: Array(text.utf8))
            return
        }
        let places = min(max(decimals, 0), 9)
        let scale = powers[places]
        let magnitude = abs(value)
        guard magnitude * scale < 9e15 else {
            appendExponent(value, to: &bytes)
            return
        }
        let scaled = UInt64((magnitude * scale).rounded())
        if scaled == 0 {
            bytes.append(UInt8(ascii: "0"))
            if !trimZeros && places > 0 {
                bytes.append(UInt8(ascii: "."))
                for _ in 0..<places { bytes.append(UInt8(ascii: "0")) }
            }
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let divisor = UInt64(scale)
        appendInteger(scaled / divisor, to: &bytes)
        var fraction = scaled % divisor
        var digits = places
        if trimZeros {
            while digits > 0 && fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
        }
        guard digits > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var buffer = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        var i = digits - 1
        while i >= 0 {
            buffer[i] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
            i -= 1
        }
        bytes.append(contentsOf: buffer)
    }

    static func appendInteger(_ value: UInt64, to bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) {
                bytes.append(buffer[i])
            }
        }
    }

    /// Three significant digits and a power of ten, for magnitudes no axis or label should really meet.
    private static func appendExponent(_ value: Double, to bytes: inout [UInt8]) {
        var exponent = Int(magnitudeExponent(abs(value)))
        var mantissa = value / pow10(exponent)
        if abs(mantissa) >= 9.995 {
            exponent += 1
            mantissa /= 10
        }
        append(mantissa, decimals: 2, trimZeros: true, to: &bytes)
        bytes.append(UInt8(ascii: "e"))
        if exponent < 0 { bytes.append(UInt8(ascii: "-")) }
        appendInteger(UInt64(abs(exponent)), to: &bytes)
    }
}

/// floor(log10(x)) for x > 0, exact at powers of ten.
func magnitudeExponent(_ x: Double) -> Double {
    guard x > 0, x.isFinite else { return 0 }
    var e = (log10(x)).rounded(.down)
    // log10 can land a hair below an exact power of ten.
    if pow10(Int(e) + 1) <= x { e += 1 }
    if pow10(Int(e)) > x { e -= 1 }
    return e
}

/// 10^n computed by repeated multiplication from exact powers, so 10^-1 ... 10^22 are as exact as doubles allow.
func pow10(_ n: Int) -> Double {
    if n >= 0 && n <= 22 { return exactPowersOfTen[n] }
    if n < 0 && n >= -22 { return 1 / exactPowersOfTen[-n] }
    return exp10Fallback(n)
}

private let exactPowersOfTen: [Double] = (0...22).map { n in
    var value = 1.0
    for _ in 0..<n { value *= 10 }
    return value
}

private func exp10Fallback(_ n: Int) -> Double {
    var value = 1.0
    if n > 0 { for _ in 0..<min(n, 400) { value *= 10 } } else { for _ in 0..<min(-n, 400) { value /= 10 } }
    return value
}
