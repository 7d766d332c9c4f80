/// An sRGB colour with opacity.
public struct Color: Sendable, Hashable {
    /// Red, 0 ... 255.
    public var red: UInt8
    /// Green, 0 ... 255.
    public var green: UInt8
    /// Blue, 0 ... 255.
    public var blue: UInt8
    /// 0 (transparent) ... 1 (opaque).
    public var alpha: Double

    /// Creates a colour from components in 0 ... 1, as SwiftUI's `Color(red:green:blue:opacity:)`.
    public init(red: Double, green: Double, blue: Double, opacity: Double = 1) {
        self.red = Color.byte(red)
        self.green = Color.byte(green)
        self.blue = Color.byte(blue)
        self.alpha = min(max(opacity, 0), 1)
    }

    /// Creates a colour from a 24-bit hexadecimal literal, such as `Color(hex: 0x0072B2)`.
    public init(hex: UInt32, opacity: Double = 1) {
        self.red = UInt8((hex >> 16) & 0xFF)
        self.green = UInt8((hex >> 8) & 0xFF)
        self.blue = UInt8(hex & 0xFF)
        self.alpha = min(max(opacity, 0), 1)
    }

    /// The same colour with its opacity multiplied by `opacity`.
    public func opacity(_ opacity: Double) -> Color {
        var copy = self
        copy.alpha = min(max(alpha * opacity, 0), 1)
        return copy
    }

    /// `#rrggbb`, the form written into SVG attributes.
    public var hexString: String {
        let digits: [Character] = Array("0123456789abcdef")
        var text = "#"
        for byte in [red, green, blue] {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    /// A colour `fraction` of the way from `self` to `other`, mixed in sRGB.
    func mixed(with other: Color, fraction: Double) -> Color {
        let t = min(max(fraction, 0), 1)
        func mix(_ a: UInt8, _ b: UInt8) -> Double { (Double(a) + (Double(b) - Double(a)) * t) / 255 }
        return Color(
            red: mix(red, other.red), green: mix(green, other.green), blue: mix(blue, other.blue),
            opacity: alpha + (other.alpha - alpha) * t)
    }

    private static func byte(_ component: Double) -> UInt8 {
        guard component.isFinite else { return 0 }
        return UInt8((min(max(component, 0), 1) * 255).rounded())
    }

    // The named colours are Okabe and Ito's, so charts coloured by name stay distinguishable for colour-blind readers.

    /// Black.
    public static let black = Color(hex: 0x000000)
    /// White.
    public static let white = Color(hex: 0xFFFFFF)
    /// A neutral grey for de-emphasised marks.
    public static let gray = Color(hex: 0x8E8E93)
    /// Okabe and Ito's vermillion.
    public static let red = Color(hex: 0xD55E00)
    /// Okabe and Ito's orange.
    public static let orange = Color(hex: 0xE69F00)
    /// Okabe and Ito's yellow.
    public static let yellow = Color(hex: 0xF0E442)
    /// Okabe and Ito's bluish green.
    public static let green = Color(hex: 0x009E73)
    /// Okabe and Ito's sky blue.
    public static let teal = Color(hex: 0x56B4E9)
    /// Okabe and Ito's blue.
    public static let blue = Color(hex: 0x0072B2)
    /// Okabe and Ito's reddish purple.
    public static let purple = Color(hex: 0xCC79A7)
    /// Fully transparent.
    public static let clear = Color(hex: 0x000000, opacity: 0)
}
