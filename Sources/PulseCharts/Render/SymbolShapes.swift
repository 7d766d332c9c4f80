#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Point symbols sized by area, so a square and a circle of the same size look equally heavy.
enum SymbolShapes {
    static func element(
        _ symbol: ChartSymbol, x: Double, y: Double, area: Double, paint: [(String, String)],
        strokePaint: [(String, String)]
    ) -> SVGElement {
        let area = max(area, 1)
        switch symbol {
        case .circle:
            return SVGElement(
                "circle",
                [
                    ("cx", Coordinates.text(x)), ("cy", Coordinates.text(y)),
                    ("r", Coordinates.text((area / Double.pi).squareRoot())),
                ] + paint)
        case .square:
            let side = area.squareRoot()
            return SVGElement(
                "rect",
                [
                    ("x", Coordinates.text(x - side / 2)), ("y", Coordinates.text(y - side / 2)),
                    ("width", Coordinates.text(side)), ("height", Coordinates.text(side)),
                ] + paint)
        case .plus, .cross, .asterisk:
            let r = (area / 2).squareRoot()
            var path = PathBuilder()
            if symbol != .cross {
                path.move(x - r, y)
                path.horizontal(x + r)
                path.move(x, y - r)
                path.vertical(y + r)
            }
            if symbol != .plus {
                let d = symbol == .cross ? r : r * 0.71
                path.move(x - d, y - d)
                path.line(x + d, y + d)
                path.move(x - d, y + d)
                path.line(x + d, y - d)
            }
            return SVGElement("path", [("d", path.string), ("fill", "none"), ("stroke-width", "1.6")] + strokePaint)
        case .triangle, .diamond, .pentagon:
            let corners: Int
            let radius: Double
            switch symbol {
            case .triangle:
                corners = 3
                radius = (4 * area / (3 * 3.0.squareRoot())).squareRoot()
            case .diamond:
                corners = 4
                radius = (area / 2).squareRoot()
            default:
                corners = 5
                radius = (2 * area / (5 * sin(2 * Double.pi / 5))).squareRoot()
            }
            var path = PathBuilder()
            for k in 0..<corners {
                let angle = -Double.pi / 2 + 2 * Double.pi * Double(k) / Double(corners)
                let px = x + radius * cos(angle)
                let py = y + radius * sin(angle) + (symbol == .triangle ? radius * 0.25 : 0)
                if k == 0 { path.move(px, py) } else { path.line(px, py) }
            }
            path.close()
            return SVGElement("path", [("d", path.string)] + paint)
        }
    }
}
