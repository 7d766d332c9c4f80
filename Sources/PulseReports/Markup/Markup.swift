/// The one place where PulseReports' own text meets markup (the dashboard page's header in SVG, and the index in
/// HTML); text inside the charts is escaped by PulseCharts. Names come from agents and configs and may hold
/// anything: `a<b&c` and `p"q>` must stay text.
enum Markup {
    /// `text` for an XML or HTML text node or a quoted attribute value: `& < > " '` as entities, and characters XML
    /// 1.0 forbids (controls other than tab, newline and carriage return) as U+FFFD.
    static func escape(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out += "&amp;".utf8
            case UInt8(ascii: "<"): out += "&lt;".utf8
            case UInt8(ascii: ">"): out += "&gt;".utf8
            case UInt8(ascii: "\""): out += "&quot;".utf8
            case UInt8(ascii: "'"): out += "&#39;".utf8
            case 0x09, 0x0A, 0x0D: out.append(byte)
            case 0x00..<0x20, 0x7F: out += "\u{FFFD}".utf8
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An element with attributes and already-escaped content: `<name a="v">content</name>`.
    static func element(_ name: String, _ attributes: [(String, String)] = [], _ content: String? = nil) -> String {
        var out = "<" + name
        for (key, value) in attributes { out += " \(key)=\"\(escape(value))\"" }
        guard let content else { return out + "/>" }
        return out + ">" + content + "</\(name)>"
    }

    /// An element holding `text`, escaped.
    static func text(_ name: String, _ attributes: [(String, String)], _ text: String) -> String {
        element(name, attributes, escape(text))
    }

    /// An element without attributes holding `text`, escaped.
    static func text(_ name: String, _ text: String) -> String { element(name, [], escape(text)) }
}
