extension ChartRenderer {
    func legendGradient() -> SVGElement? {
        guard let ramp = legend.continuous, ramp.colors.count > 1 else { return nil }
        let stops = ramp.colors.enumerated().map { index, color -> SVGNode in
            let offset = Double(index) / Double(ramp.colors.count - 1)
            return .element(
                SVGElement(
                    "stop",
                    [
                        ("offset", DecimalFormatter.shortest(offset, maxDecimals: 4)), ("stop-color", color.hexString),
                    ]))
        }
        return SVGElement(
            "linearGradient", [("id", id("ramp")), ("x1", "0"), ("x2", "1"), ("y1", "0"), ("y2", "0")],
            children: stops)
    }

    func legendElement() -> SVGElement? {
        guard let area = layout.legend else { return nil }
        var children: [SVGElement] = []
        let size = LegendPlan.swatchSize
        let textColor = fill(colors.secondaryText, role: "t2")
        if let ramp = legend.continuous {
            let baseline = area.minY + ramp.y + TextMetrics.ascent(fontSize: fontSize)
            var x = area.minX + ramp.x
            children.append(
                SVGElement(
                    "text",
                    [("x", Coordinates.text(x)), ("y", Coordinates.text(baseline))]
                        + fill(colors.text, role: "tx"), text: ramp.label))
            x += TextMetrics.width(ramp.label, fontSize: fontSize) + 8
            children.append(
                SVGElement(
                    "text", [("x", Coordinates.text(x)), ("y", Coordinates.text(baseline))] + textColor,
                    text: ramp.lower))
            x += TextMetrics.width(ramp.lower, fontSize: fontSize) + 4
            children.append(
                SVGElement(
                    "rect",
                    [
                        ("x", Coordinates.text(x)), ("y", Coordinates.text(baseline - size + 1)),
                        ("width", Coordinates.text(LegendPlan.rampLength)), ("height", Coordinates.text(size)),
                        ("fill", "url(#\(id("ramp")))"),
                    ]))
            x += LegendPlan.rampLength + 4
            children.append(
                SVGElement(
                    "text", [("x", Coordinates.text(x)), ("y", Coordinates.text(baseline))] + textColor,
                    text: ramp.upper))
        }
        for item in legend.items {
            let left = area.minX + item.x
            let top = area.minY + item.y
            let centerY = top + TextMetrics.lineHeight(fontSize: fontSize) / 2
            let paint = (item.color ?? colors.text, slot: item.color == nil ? nil : item.slot)
            let paintRole = item.color == nil ? "tx" : nil
            var swatch: [SVGElement] = []
            var textX = left + size + 5
            switch item.swatch {
            case .line:
                var path = PathBuilder()
                path.move(left, centerY)
                path.horizontal(left + size * 1.8)
                var attributes = [("d", path.string), ("stroke-width", "2")] + strokePaint(paint)
                if paintRole != nil {
                    attributes = [("d", path.string), ("stroke-width", "2")] + stroke(paint.0, role: paintRole)
                }
                swatch.append(SVGElement("path", attributes))
                if let symbol = item.symbol {
                    swatch.append(
                        SymbolShapes.element(
                            symbol, x: left + size * 0.9, y: centerY, area: 30,
                            paint: fillPaint(paint), strokePaint: strokePaint(paint)))
                }
                textX = left + size * 1.8 + 5
            case .square:
                swatch.append(
                    SVGElement(
                        "rect",
                        [
                            ("x", Coordinates.text(left)), ("y", Coordinates.text(centerY - size / 2)),
                            ("width", Coordinates.text(size)), ("height", Coordinates.text(size)), ("rx", "2"),
                        ] + fillPaint(paint)))
            case .symbol:
                let fillAttributes = paintRole != nil ? fill(paint.0, role: paintRole) : fillPaint(paint)
                let strokeAttributes = paintRole != nil ? stroke(paint.0, role: paintRole) : strokePaint(paint)
                swatch.append(
                    SymbolShapes.element(
                        item.symbol ?? .circle, x: left + size / 2, y: centerY, area: 40,
                        paint: fillAttributes, strokePaint: strokeAttributes))
            }
            children += swatch
            children.append(
                SVGElement(
                    "text",
                    [
                        ("x", Coordinates.text(textX)), ("y", Coordinates.text(centerY + fontSize * 0.35)),
                    ] + fill(colors.text, role: "tx"), text: item.name))
        }
        return SVGElement.group([("class", "legend")], children)
    }
}
