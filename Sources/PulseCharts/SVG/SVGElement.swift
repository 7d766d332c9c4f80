/// A node of the SVG tree the renderer builds before it is written out as text.
enum SVGNode: Sendable {
    case element(SVGElement)
    case text(String)
}

/// An SVG element with attributes in the order they are written, so output is deterministic.
struct SVGElement: Sendable {
    var name: String
    var attributes: [(String, String)]
    var children: [SVGNode]

    init(_ name: String, _ attributes: [(String, String)] = [], children: [SVGNode] = []) {
        self.name = name
        self.children = children
        // Paint helpers each add the class their colour needs; an element has one class attribute.
        if attributes.count(where: { $0.0 == "class" }) > 1 {
            let classes = attributes.filter { $0.0 == "class" }.map { $0.1 }.joined(separator: " ")
            var merged = attributes.filter { $0.0 != "class" }
            merged.append(("class", classes))
            self.attributes = merged
        } else {
            self.attributes = attributes
        }
    }

    init(_ name: String, _ attributes: [(String, String)] = [], text: String) {
        self.init(name, attributes, children: [.text(text)])
    }

    mutating func append(_ child: SVGElement) {
        children.append(.element(child))
    }

    /// A group of `children`, or nothing when there are none.
    static func group(_ attributes: [(String, String)], _ children: [SVGElement]) -> SVGElement? {
        guard !children.isEmpty else { return nil }
        return SVGElement("g", attributes, children: children.map { .element($0) })
    }
}
