/// Integers holding a fixed number of decimal places, written exactly (`1234567` with 3 places: `1234.567`).
public enum FixedPoint {
    public static func text(_ value: Int64, places: Int) -> String {
        guard places > 0 else { return "\(value)" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = value.magnitude
        let whole = magnitude / UInt64(scale)
        let fraction = String(magnitude % UInt64(scale))
        return (value < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
