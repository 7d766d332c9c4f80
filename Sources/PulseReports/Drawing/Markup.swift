import PulseCharts

/// The one place where PulseReports' own text meets markup (the dashboard page's header in SVG, and the index in
/// HTML); text inside the charts is escaped by PulseCharts. Names come from agents and configs and may hold
/// anything: `a<b&c` and `p"q>` must stay text.
enum Markup {
    /// `text` for an XML or HTML text node or a quoted attribute value: PulseCharts' escaper (`& < > " '` as
    /// entities, characters XML 1.0 forbids as U+FFFD).
    static func escape(_ text: String) -> String { XMLEscaping.escape(text) }

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
