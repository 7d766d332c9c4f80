/// JSON as Netpulse writes it, in one place: every JSON text a module writes (snapshots, exports, listings, the
/// report ledger, alert event files and webhook bodies, the labels the stores keep) is built from these values.
///
/// The builders take values already written as JSON, so a caller lays out its fields in the order it wants; objects
/// made from dictionaries sort their keys, so the same map gives the same bytes. Strings are escaped here and only
/// here: interface names may hold any byte but '/', ':', whitespace and NUL (`a<b&c`, `p"q>`), and labels anything
/// but control characters.
public enum JSONText {
    public static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + Hex.string(UInt64(scalar.value), width: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// An object from fields already written as JSON values, in order.
    public static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// An object from fields already written as JSON values, keys sorted.
    public static func object(sorting fields: [String: String]) -> String {
        object(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// An object of strings (a label map), keys sorted.
    public static func object(strings: [String: String]) -> String {
        object(sorting: strings.mapValues(string))
    }

    /// An object with one field a line, indented by two spaces, for files people read; values as given.
    public static func lines(_ fields: [(String, String)]) -> String {
        guard !fields.isEmpty else { return "{}" }
        return "{\n" + fields.map { "  \(string($0.0)): \($0.1)" }.joined(separator: ",\n") + "\n}"
    }

    public static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }

    /// An array of strings.
    public static func array(strings: [String]) -> String { array(strings.map(string)) }

    /// A number or `null`.
    public static func number(_ value: Int64?) -> String { value.map { "\($0)" } ?? "null" }

    /// A number or `null`: whole numbers without a fraction (`20000000`), others in the shortest form that reads
    /// back as the same double (`0.25`, `1e+21`); infinities and NaN, which JSON cannot hold, as `null`.
    public static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 9.007_199_254_740_992e15 { return "\(Int64(value))" }
        return "\(value)"
    }

    public static func bool(_ value: Bool) -> String { value ? "true" : "false" }

    /// A fixed-point number with `decimals` places from an integer of that many decimal places, or `null`.
    public static func decimal(_ value: Int64?, places: Int) -> String {
        value.map { FixedPoint.text($0, places: places) } ?? "null"
    }
}
