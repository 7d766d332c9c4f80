/// Writes an SVG tree as text. Names are the renderer's constants; every value passes through `XMLEscaping`.
struct SVGWriter {
    private var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(64 * 1024)
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func write(_ element: SVGElement) {
        writeElement(element, depth: 0)
        bytes.append(UInt8(ascii: "\n"))
    }

    private mutating func writeElement(_ element: SVGElement, depth: Int) {
        bytes.append(UInt8(ascii: "<"))
        bytes.append(contentsOf: element.name.utf8)
        for (name, value) in element.attributes {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
            XMLEscaping.append(value, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        if element.children.isEmpty {
            bytes.append(contentsOf: [UInt8(ascii: "/"), UInt8(ascii: ">")])
            return
        }
        bytes.append(UInt8(ascii: ">"))
        // Elements that hold only text stay on one line: a newline inside <text> or <title> would be shown.
        let hasElements = element.children.contains { if case .element = $0 { true } else { false } }
        for child in element.children {
            switch child {
            case .text(let text):
                XMLEscaping.append(text, to: &bytes)
            case .element(let child):
                if hasElements && depth < 2 { bytes.append(UInt8(ascii: "\n")) }
                writeElement(child, depth: depth + 1)
            }
        }
        if hasElements && depth < 2 { bytes.append(UInt8(ascii: "\n")) }
        bytes.append(contentsOf: [UInt8(ascii: "<"), UInt8(ascii: "/")])
        bytes.append(contentsOf: element.name.utf8)
        bytes.append(UInt8(ascii: ">"))
    }
}
