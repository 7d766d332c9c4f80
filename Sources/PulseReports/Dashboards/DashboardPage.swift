import PulseCharts
import PulseQuery

/// A dashboard as one standalone SVG document: a header that says what the page is (title, what it shows, time
/// range, data coverage, when it was rendered) above PulseCharts' grid of panels, so a file forwarded out of
/// context still explains itself.
///
/// The header's text is escaped by ``Markup``; everything in the grid by PulseCharts.
struct DashboardPage: Sendable {
    var title: String
    /// Lines under the title, each wrapped to the page's width.
    var lines: [String]
    var theme: ChartTheme
    var dashboard: Dashboard

    static let spacing = 12
    static let titleSize = 20
    static let textSize = 12

    func svg() -> String {
        let grid = dashboard.renderSVG(idPrefix: "pd")
        let (width, gridHeight) = Self.size(of: grid)
        let columns = width - 2 * Self.spacing
        let titleLines = Self.wrap(title, width: columns, characterWidth: Double(Self.titleSize) * 0.68)
        let textLines = lines.flatMap { Self.wrap($0, width: columns, characterWidth: Double(Self.textSize) * 0.62) }
        let titleStep = Self.titleSize * 5 / 4
        let textStep = Self.textSize * 3 / 2
        let header = Self.spacing + titleLines.count * titleStep + 4 + textLines.count * textStep
        let height = header + gridHeight
        let colors = theme.colors
        let dark = theme.darkColors
        func adaptive(_ name: String) -> [(String, String)] { dark == nil ? [] : [("class", name)] }

        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\""
        for (key, value) in [
            ("width", "\(width)"), ("height", "\(height)"), ("viewBox", "0 0 \(width) \(height)"), ("role", "img"),
            ("aria-labelledby", "np-title np-desc"), ("font-family", theme.fontFamily),
            ("font-size", "\(Self.textSize)"),
        ] {
            out += " \(key)=\"\(Markup.escape(value))\""
        }
        out += ">\n"
        out += Markup.text("title", [("id", "np-title")], title) + "\n"
        out += Markup.text("desc", [("id", "np-desc")], lines.joined(separator: " ")) + "\n"
        if let dark {
            // Colours are written for the light appearance; a viewer who prefers dark gets these instead.
            out +=
                Markup.text(
                    "style", [],
                    "@media (prefers-color-scheme:dark){.np-bg{fill:\(dark.background.hexString)}"
                        + ".np-tx{fill:\(dark.text.hexString)}.np-t2{fill:\(dark.secondaryText.hexString)}}") + "\n"
        }
        out +=
            Markup.element(
                "rect",
                [("width", "100%"), ("height", "100%"), ("fill", colors.background.hexString)] + adaptive("np-bg"))
            + "\n"
        var y = Self.spacing
        for line in titleLines {
            y += titleStep
            out +=
                Markup.text(
                    "text",
                    [
                        ("x", "\(Self.spacing)"), ("y", "\(y - titleStep / 5)"), ("font-size", "\(Self.titleSize)"),
                        ("font-weight", "bold"), ("fill", colors.text.hexString),
                    ] + adaptive("np-tx"), line) + "\n"
        }
        y += 4
        for line in textLines {
            y += textStep
            out +=
                Markup.text(
                    "text",
                    [("x", "\(Self.spacing)"), ("y", "\(y - textStep / 4)"), ("fill", colors.secondaryText.hexString)]
                        + adaptive("np-t2"), line) + "\n"
        }
        // The grid is PulseCharts' own document, nested: an <svg> inside an <svg> is positioned by x and y.
        if grid.hasPrefix("<svg ") {
            out += "<svg x=\"0\" y=\"\(header)\" " + grid.dropFirst("<svg ".count).trimmingSuffixNewlines + "\n"
        } else {
            out += "<g transform=\"translate(0 \(header))\">" + grid.trimmingSuffixNewlines + "</g>\n"
        }
        out += "</svg>\n"
        return out
    }

    /// The width and height on the root element of an SVG document that PulseCharts wrote (whole pixels).
    static func size(of svg: String) -> (width: Int, height: Int) {
        let tag = svg.prefix { $0 != ">" }
        func attribute(_ name: String) -> Int {
            guard let range = tag.firstRange(of: " \(name)=\"") else { return 0 }
            let digits = tag[range.upperBound...].prefix { $0 != "\"" }
            return Int((Double(digits) ?? 0).rounded(.up))
        }
        return (attribute("width"), attribute("height"))
    }

    /// `text` broken at spaces into lines of at most `width` pixels, a character taken as `characterWidth`
    /// pixels (wide enough for DejaVu Sans, the widest of the fonts named); a word longer than a line is cut.
    static func wrap(_ text: String, width: Int, characterWidth: Double) -> [String] {
        let limit = max(8, Int(Double(width) / characterWidth))
        var lines = [String]()
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = Substring(word)
            while word.count > limit {
                if !line.isEmpty {
                    lines.append(line)
                    line = ""
                }
                lines.append(String(word.prefix(limit)))
                word = word.dropFirst(limit)
            }
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= limit {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}

extension StringProtocol {
    /// The text without trailing newlines.
    var trimmingSuffixNewlines: SubSequence {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == "\n" { end = index(before: end) }
        return self[startIndex..<end]
    }
}
