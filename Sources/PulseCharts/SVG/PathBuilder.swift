/// Builds SVG path data (`d`) as bytes, with coordinates rounded to two decimals.
///
/// Lines of thousands of points are written here, so it avoids `String` interpolation: one growing byte array,
/// and consecutive line segments share a single `L` command.
struct PathBuilder {
    private(set) var bytes: [UInt8] = []
    private var lastCommand: UInt8 = 0

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    var isEmpty: Bool { bytes.isEmpty }

    var string: String { String(decoding: bytes, as: UTF8.self) }

    mutating func move(_ x: Double, _ y: Double) {
        command(UInt8(ascii: "M"))
        pair(x, y)
    }

    mutating func line(_ x: Double, _ y: Double) {
        if lastCommand == UInt8(ascii: "L") || lastCommand == UInt8(ascii: "M") {
            bytes.append(UInt8(ascii: " "))
            pair(x, y)
            lastCommand = UInt8(ascii: "L")
        } else {
            command(UInt8(ascii: "L"))
            pair(x, y)
        }
    }

    mutating func horizontal(_ x: Double) {
        command(UInt8(ascii: "H"))
        Coordinates.append(x, to: &bytes)
    }

    mutating func vertical(_ y: Double) {
        command(UInt8(ascii: "V"))
        Coordinates.append(y, to: &bytes)
    }

    mutating func curve(_ c1x: Double, _ c1y: Double, _ c2x: Double, _ c2y: Double, _ x: Double, _ y: Double) {
        command(UInt8(ascii: "C"))
        pair(c1x, c1y)
        bytes.append(UInt8(ascii: " "))
        pair(c2x, c2y)
        bytes.append(UInt8(ascii: " "))
        pair(x, y)
    }

    mutating func arc(radius: Double, largeArc: Bool, sweep: Bool, _ x: Double, _ y: Double) {
        command(UInt8(ascii: "A"))
        pair(radius, radius)
        bytes.append(contentsOf: Array(" 0 ".utf8))
        bytes.append(largeArc ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: " "))
        bytes.append(sweep ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: " "))
        pair(x, y)
    }

    mutating func close() {
        command(UInt8(ascii: "Z"))
    }

    private mutating func command(_ c: UInt8) {
        bytes.append(c)
        lastCommand = c
    }

    private mutating func pair(_ x: Double, _ y: Double) {
        Coordinates.append(x, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        Coordinates.append(y, to: &bytes)
    }
}

/// Pixel coordinates as short, fixed text: two decimals at most, no trailing zeros, no `-0`.
enum Coordinates {
    static func append(_ value: Double, to bytes: inout [UInt8]) {
        guard value.isFinite else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        let hundredths = (value * 100).rounded()
        guard abs(hundredths) < 1e15 else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var scaled = Int64(hundredths)
        if scaled < 0 {
            bytes.append(UInt8(ascii: "-"))
            scaled = -scaled
        }
        DecimalFormatter.appendInteger(UInt64(scaled / 100), to: &bytes)
        let fraction = Int(scaled % 100)
        if fraction != 0 {
            bytes.append(UInt8(ascii: "."))
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / 10))
            if fraction % 10 != 0 { bytes.append(UInt8(ascii: "0") + UInt8(fraction % 10)) }
        }
    }

    /// A coordinate as an attribute value.
    static func text(_ value: Double) -> String {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
