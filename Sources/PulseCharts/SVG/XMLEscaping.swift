/// The one place where text meets markup: every text node and attribute value goes through here on its way
/// into the SVG, so labels such as `a<b&c` or `"><script>` are always data, never markup. PulseReports escapes its
/// own pages (HTML and the dashboards' SVG headers) with it too: one escaper for XML and HTML.
public enum XMLEscaping {
    /// Appends `text` to `out` with `& < > " '` replaced by entities and characters that XML 1.0 forbids
    /// (control characters, unpaired surrogates cannot occur in Swift strings) replaced by U+FFFD.
    public static func append(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: ampersand)
            case UInt8(ascii: "<"): out.append(contentsOf: lessThan)
            case UInt8(ascii: ">"): out.append(contentsOf: greaterThan)
            case UInt8(ascii: "\""): out.append(contentsOf: quote)
            case UInt8(ascii: "'"): out.append(contentsOf: apostrophe)
            case 0x09, 0x0A, 0x0D: out.append(byte)
            case 0x00..<0x20, 0x7F: out.append(contentsOf: replacement)
            default: out.append(byte)
            }
        }
    }

    /// `text` escaped, for a text node or a quoted attribute value.
    public static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let ampersand = Array("&amp;".utf8)
    private static let lessThan = Array("&lt;".utf8)
    private static let greaterThan = Array("&gt;".utf8)
    private static let quote = Array("&quot;".utf8)
    private static let apostrophe = Array("&#39;".utf8)
    private static let replacement = Array("\u{FFFD}".utf8)
}
