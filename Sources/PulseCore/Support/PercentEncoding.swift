/// Percent-encoding for URLs (RFC 3986): the API's query strings and the live pages' links.
public enum PercentEncoding {
    /// `text` with every byte but the unreserved characters (`A-Z a-z 0-9 - . _ ~`) as `%XX`: safe as a path
    /// segment or a query name or value.
    public static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + Hex.string(UInt64(byte), width: 2).uppercased()
            }
        }
        return out
    }
}
