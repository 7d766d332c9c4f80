/// Tiny helpers for looking into rendered SVG text in assertions.
enum SVGText {
    /// Each `<name …>…</name>` or `<name …/>` element as text, in document order (not nested ones of the same
    /// name).
    static func elements(_ svg: String, _ name: String) -> [String] {
        var result: [String] = []
        var rest = svg[...]
        while let start = rest.range(of: "<\(name) ") ?? rest.range(of: "<\(name)>") {
            let tail = rest[start.lowerBound...]
            let selfClosing = tail.range(of: "/>")
            let open = tail.range(of: ">")
            var end: String.Index
            if let selfClosing, let open, selfClosing.upperBound == open.upperBound {
                end = selfClosing.upperBound
            } else if let close = tail.range(of: "</\(name)>") {
                end = close.upperBound
            } else {
                break
            }
            result.append(String(svg[start.lowerBound..<end]))
            rest = svg[end...]
            _ = end
        }
        return result
    }

    /// The value of an attribute in an element's text.
    static func attribute(_ name: String, in element: String) -> String? {
        guard let start = element.range(of: " \(name)=\"") else { return nil }
        let tail = element[start.upperBound...]
        guard let end = tail.firstIndex(of: "\"") else { return nil }
        return String(tail[..<end])
    }

    /// How many times a path command letter occurs in an element's `d`.
    static func count(_ command: Character, inPathOf element: String) -> Int {
        attribute("d", in: element)?.filter { $0 == command }.count ?? 0
    }

    /// Texts of the `<text>` elements, unescaped just enough for comparisons.
    static func texts(_ svg: String) -> [String] {
        elements(svg, "text").compactMap { element in
            guard let open = element.firstIndex(of: ">"), let close = element.range(of: "</text>") else { return nil }
            return String(element[element.index(after: open)..<close.lowerBound])
        }
    }
}
