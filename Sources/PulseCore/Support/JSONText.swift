/// JSON as Netpulse writes it, in one place: every JSON text a module writes (snapshots, exports, listings, the
/// report ledger, alert event files and webhook bodies, the labels the stores keep) is built from these values.
///
/// The builders take values already written as JSON, so a caller lays out its fields in the order it wants; objects
/// made from dictionaries sort their keys, so the same map gives the same bytes. Strings are escaped here and only
/// here: interface names may hold any byte but '/', ':', whitespace and NUL (`a<b&c`, `p"q>`), and labels anything
/// but control characters.
public enum JSONText {
    /// `text` as a JSON string. Worked on its UTF-8 bytes: every byte that needs an escape is ASCII, and the others
    /// (multi-byte characters included) are copied as they are. Why: a live page's event carries its panels' SVG
    /// pictures as strings (17 KB for a host page, 46–52 KB for the fleet overview), escaped for each open stream;
    /// scalar by scalar into a `String`, the fleet's 46 KB took 3.5 ms, byte by byte 0.3 ms (release build, best of
    /// 20, one idle core).
    public static func string(_ text: String) -> String {
        var text = text
        return text.withUTF8 { input in
            var out = [UInt8]()
            out.reserveCapacity(input.count + input.count / 16 + 2)
            func escaped(_ byte: UInt8) {
                out.append(backslash)
                out.append(byte)
            }
            out.append(quote)
            for byte in input {
                switch byte {
                case quote, backslash: escaped(byte)
                case 0x0A: escaped(UInt8(ascii: "n"))
                case 0x0D: escaped(UInt8(ascii: "r"))
                case 0x09: escaped(UInt8(ascii: "t"))
                case 0x00..<0x20, 0x7F:
                    out.append(backslash)
                    out.append(contentsOf: ("u" + Hex.string(UInt64(byte), width: 4)).utf8)
                default: out.append(byte)
                }
            }
            out.append(quote)
            return String(decoding: out, as: UTF8.self)
        }
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

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
