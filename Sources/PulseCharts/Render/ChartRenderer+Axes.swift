extension ChartRenderer {
    /// Grid lines, drawn under the marks: one path per style so thousands of lines stay one element.
    func gridElements() -> [SVGElement] {
        let plot = layout.plot
        var elements: [SVGElement] = []
        for plan in xAxes + yAxes {
            var groups: [(AxisGridLine, PathBuilder)] = []
            for mark in plan.marks {
                guard let grid = mark.parts.gridLine, mark.pixel.isFinite else { continue }
                let index: Int
                if let found = groups.firstIndex(where: { $0.0 == grid }) {
                    index = found
                } else {
                    groups.append((grid, PathBuilder()))
                    index = groups.count - 1
                }
                if plan.isX {
                    guard mark.pixel >= plot.minX - 0.5 && mark.pixel <= plot.maxX + 0.5 else { continue }
                    groups[index].1.move(mark.pixel, plot.minY)
                    groups[index].1.vertical(plot.maxY)
                } else {
                    guard mark.pixel >= plot.minY - 0.5 && mark.pixel <= plot.maxY + 0.5 else { continue }
                    groups[index].1.move(plot.minX, mark.pixel)
                    groups[index].1.horizontal(plot.maxX)
                }
            }
            for (grid, path) in groups where !path.isEmpty {
                var attributes: [(String, String)] = [("d", path.string), ("fill", "none")]
                attributes += stroke(grid.color ?? colors.grid, role: grid.color == nil ? "gr" : nil)
                let stroke = grid.stroke ?? StrokeStyle(lineWidth: 1)
                attributes.append(("stroke-width", Coordinates.text(stroke.lineWidth)))
                if !stroke.dash.isEmpty {
                    attributes.append(("stroke-dasharray", stroke.dash.map(Coordinates.text).joined(separator: " ")))
                }
                elements.append(SVGElement("path", attributes))
            }
        }
        return elements
    }

    /// Axis lines, ticks and labels, drawn over the marks.
    func axisElements() -> [SVGElement] {
        let plot = layout.plot
        let frame = layout.frame
        var elements: [SVGElement] = []
        for plan in xAxes + yAxes {
            var children: [SVGElement] = []
            var ticks = PathBuilder()
            var labels: [SVGElement] = []
            let lineAt: Double
            switch plan.side {
            case .top: lineAt = plot.minY
            case .bottom: lineAt = plot.maxY
            case .trailing: lineAt = plot.maxX
            default: lineAt = plot.minX
            }
            for mark in plan.marks where mark.pixel.isFinite {
                let tickLength = mark.parts.tick?.length ?? 0
                if tickLength > 0 {
                    switch plan.side {
                    case .top: ticks.move(mark.pixel, lineAt); ticks.vertical(lineAt - tickLength)
                    case .bottom: ticks.move(mark.pixel, lineAt); ticks.vertical(lineAt + tickLength)
                    case .trailing: ticks.move(lineAt, mark.pixel); ticks.horizontal(lineAt + tickLength)
                    default: ticks.move(lineAt, mark.pixel); ticks.horizontal(lineAt - tickLength)
                    }
                }
                guard let label = mark.label else { continue }
                let gap = tickLength + 3
                var attributes: [(String, String)]
                switch plan.side {
                case .top, .bottom:
                    let width = TextMetrics.width(label, fontSize: fontSize)
                    let extent = AxisPlan.extent(
                        of: label, at: mark.pixel, isX: true, fontSize: fontSize,
                        frameMin: frame.minX + ChartRenderer.textInset,
                        frameMax: frame.maxX - ChartRenderer.textInset)
                    let baseline =
                        plan.side == .bottom
                        ? lineAt + gap + TextMetrics.ascent(fontSize: fontSize)
                        : lineAt - gap - fontSize * 0.24
                    attributes = [("x", Coordinates.text(extent.lower + width / 2)), ("y", Coordinates.text(baseline))]
                case .trailing:
                    attributes = [
                        ("x", Coordinates.text(lineAt + gap)),
                        ("y", Coordinates.text(mark.pixel + fontSize * 0.35)), ("text-anchor", "start"),
                    ]
                default:
                    attributes = [
                        ("x", Coordinates.text(lineAt - gap)),
                        ("y", Coordinates.text(mark.pixel + fontSize * 0.35)), ("text-anchor", "end"),
                    ]
                }
                labels.append(SVGElement("text", attributes, text: label))
            }
            if plan.isX && !plan.marks.isEmpty {
                var line = PathBuilder()
                line.move(plot.minX, lineAt)
                line.horizontal(plot.maxX)
                children.append(SVGElement("path", [("d", line.string)] + stroke(colors.axis, role: "ax")))
            }
            if !ticks.isEmpty {
                children.append(SVGElement("path", [("d", ticks.string)] + stroke(colors.axis, role: "ax")))
            }
            let anchor = plan.isX ? [("text-anchor", "middle")] : []
            if let group = SVGElement.group(anchor + fill(colors.secondaryText, role: "t2"), labels) {
                children.append(group)
            }
            if let group = SVGElement.group([("class", plan.isX ? "x-axis" : "y-axis")], children) {
                elements.append(group)
            }
        }
        elements += axisTitleElements()
        return elements
    }

    private func axisTitleElements() -> [SVGElement] {
        let plot = layout.plot
        var elements: [SVGElement] = []
        if let label = configuration.x.label {
            let legendTop = configuration.legendPosition == .automatic || configuration.legendPosition == .bottom
            let bottom =
                (legendTop ? layout.legend?.minY : nil).map { $0 - 6 } ?? layout.frame.maxY - ChartRenderer.padding
            elements.append(
                SVGElement(
                    "text",
                    [
                        ("x", Coordinates.text(plot.midX)),
                        ("y", Coordinates.text(bottom - fontSize * 0.3)),
                        ("text-anchor", "middle"),
                    ] + fill(colors.text, role: "tx"), text: label))
        }
        if let label = configuration.y.label {
            let x = ChartRenderer.padding + TextMetrics.ascent(fontSize: fontSize)
            let y = plot.midY
            elements.append(
                SVGElement(
                    "text",
                    [
                        ("x", Coordinates.text(x)), ("y", Coordinates.text(y)), ("text-anchor", "middle"),
                        ("transform", "rotate(-90 \(Coordinates.text(x)) \(Coordinates.text(y)))"),
                    ] + fill(colors.text, role: "tx"), text: label))
        }
        return elements
    }
}
