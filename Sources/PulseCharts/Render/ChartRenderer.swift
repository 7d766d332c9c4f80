/// Turns a chart into an SVG tree: resolve scales from all marks, lay out the regions, then draw the plot
/// background, grid, marks, axes, annotations and legend in that order.
struct ChartRenderer {
    let configuration: ChartConfiguration
    let idPrefix: String
    let colors: ChartTheme.Colors
    let fontSize: Double
    /// Whether elements carry the class names an adaptive theme's dark style sheet targets.
    let adaptive: Bool
    var resolution: ChartResolution
    var layout: ChartLayout
    var xAxes: [AxisPlan] = []
    var yAxes: [AxisPlan] = []
    var legend = LegendPlan()
    let hasData: Bool
    let sectorsOnly: Bool

    /// Elements drawn inside the clipped plot, above the grid.
    var markElements: [SVGElement] = []
    /// Annotations are drawn last so marks never hide them.
    var annotationElements: [SVGElement] = []
    var tooltipsForDiscreteMarks = true
    /// A dashboard writes one style sheet for all its panels.
    var embedsStyleSheet = true

    static let padding = 8.0
    /// How close text may come to the frame's edge: the estimated widths are close, and glyphs overhang a little.
    static let textInset = 4.0

    init(chart: Chart, idPrefix: String) {
        let configuration = chart.configuration
        self.configuration = configuration
        self.idPrefix = idPrefix
        self.colors = configuration.theme.colors
        self.fontSize = configuration.theme.fontSize
        self.adaptive = configuration.theme.darkColors != nil
        self.resolution = ChartResolution(chart: chart)
        let frame = Rect(minX: 0, minY: 0, maxX: configuration.width, maxY: configuration.height)
        self.layout = ChartLayout(frame: frame, plot: frame)
        let templates = resolution.table.templates
        self.sectorsOnly = !templates.isEmpty && templates.allSatisfy { $0.kind == .sector }
        // A pie of nothing but zeros has no slice to draw: it is as empty as a chart without marks.
        self.hasData = resolution.stats.hasData && !(sectorsOnly && !(resolution.stats.sectorTotal > 0))
        switch configuration.tooltips {
        case .hidden: tooltipsForDiscreteMarks = false
        case .visible: tooltipsForDiscreteMarks = true
        case .automatic:
            // Thousands of <title>s make a file large for little use; lines always keep one per series.
            tooltipsForDiscreteMarks = resolution.stats.discreteCount <= 2000
        }
        computeLayout()
    }

    // MARK: Layout

    private var titleFontSize: Double { fontSize * 1.3 }

    private mutating func computeLayout() {
        let frame = layout.frame
        let pad = ChartRenderer.padding
        var top = pad
        var bottom = frame.maxY - pad
        var left = pad
        var right = frame.maxX - pad
        if configuration.title != nil {
            let height = TextMetrics.lineHeight(fontSize: titleFontSize)
            layout.title = Rect(minX: left, minY: top, maxX: right, maxY: top + height)
            top += height + 6
        }
        if hasData && configuration.legendVisibility != .hidden {
            legend = LegendPlan(resolution: resolution, fontSize: fontSize)
        }
        if !legend.items.isEmpty || legend.continuous != nil {
            switch configuration.legendPosition {
            case .trailing:
                let width = min(legend.columnWidth, frame.width * 0.35)
                legend.layoutColumn(width: width)
                layout.legend = Rect(minX: right - width, minY: top, maxX: right, maxY: bottom)
                right -= width + 10
            case .top:
                let height = legend.layoutRows(width: right - left)
                layout.legend = Rect(minX: left, minY: top, maxX: right, maxY: top + height)
                top += height + 6
            case .automatic, .bottom:
                let height = legend.layoutRows(width: right - left)
                layout.legend = Rect(minX: left, minY: bottom - height, maxX: right, maxY: bottom)
                bottom -= height + 6
            }
        }
        guard hasData else {
            layout.plot = Rect(minX: left, minY: top, maxX: right, maxY: bottom)
            return
        }
        let lineHeight = TextMetrics.lineHeight(fontSize: fontSize)
        if configuration.x.label != nil { bottom -= lineHeight + 2 }
        if configuration.y.label != nil { left += lineHeight + 2 }
        if sectorsOnly {
            let size = min(right - left, bottom - top)
            let cx = (left + right) / 2
            let cy = (top + bottom) / 2
            layout.plot = Rect(minX: cx - size / 2, minY: cy - size / 2, maxX: cx + size / 2, maxY: cy + size / 2)
            return
        }
        let showX = configuration.x.visibility != .hidden && resolution.x.hasDomain
        let showY = configuration.y.visibility != .hidden && resolution.y.hasDomain
        let xMarks = showX ? (configuration.x.marks.isEmpty ? [AxisMarks()] : configuration.x.marks) : []
        let yMarks = showY ? (configuration.y.marks.isEmpty ? [AxisMarks()] : configuration.y.marks) : []
        let xSides = xMarks.map { $0.position == .top ? AxisMarkPosition.top : .bottom }
        let ySides = yMarks.map { $0.position == .trailing ? AxisMarkPosition.trailing : .leading }
        // Labels of x axes take one line under (or over) their ticks.
        func xGutter(_ side: AxisMarkPosition) -> Double {
            var height = 0.0
            for (marks, s) in zip(xMarks, xSides) where s == side {
                let sample = marks.parts(for: AxisValue(index: 0, count: 1, value: .missing))
                let tick = sample.tick?.length ?? 0
                let label = sample.label != nil ? lineHeight + 2 : 0
                height = max(height, tick + label)
            }
            return height
        }
        let bottomGutter = xGutter(.bottom)
        let topGutter = xGutter(.top)
        // Half a line of room so the top and bottom y labels, centred on their ticks, stay inside the frame.
        let plotTop = top + max(topGutter, ySides.isEmpty ? 0 : fontSize * 0.6)
        let plotBottom = bottom - max(bottomGutter, ySides.isEmpty ? 0 : fontSize * 0.6)
        if resolution.y.kind == .band {
            resolution.y.rangeStart = plotTop
            resolution.y.rangeEnd = plotBottom
        } else {
            resolution.y.rangeStart = plotBottom
            resolution.y.rangeEnd = plotTop
        }
        let yPlanner = AxisPlanner(
            scale: resolution.y, isX: false, calendar: configuration.calendar, fontSize: fontSize,
            frameMin: frame.minY + ChartRenderer.textInset, frameMax: frame.maxY - ChartRenderer.textInset)
        // Long category names may take at most a third of the width; beyond that they are shortened.
        let widestLabel = frame.width / 3
        yAxes = zip(yMarks, ySides).map { marks, side in
            var plan = yPlanner.plan(marks, side: side)
            for i in plan.marks.indices {
                if let label = plan.marks[i].label {
                    plan.marks[i].label = TextMetrics.truncate(label, toWidth: widestLabel, fontSize: fontSize)
                }
            }
            return plan
        }
        func yGutter(_ side: AxisMarkPosition) -> Double {
            yAxes.filter { $0.side == side }.map { plan in
                plan.tickLength + (plan.hasLabels ? plan.maxLabelWidth + 4 : 0)
            }.max() ?? 0
        }
        let plotLeft = left + yGutter(.leading)
        var plotRight = right - yGutter(.trailing)
        plotRight = max(plotRight, plotLeft + 10)
        resolution.x.rangeStart = plotLeft
        resolution.x.rangeEnd = plotRight
        let xPlanner = AxisPlanner(
            scale: resolution.x, isX: true, calendar: configuration.calendar, fontSize: fontSize,
            frameMin: frame.minX + ChartRenderer.textInset, frameMax: frame.maxX - ChartRenderer.textInset)
        xAxes = zip(xMarks, xSides).map { marks, side in
            var plan = xPlanner.plan(marks, side: side)
            for i in plan.marks.indices {
                if let label = plan.marks[i].label {
                    plan.marks[i].label = TextMetrics.truncate(
                        label, toWidth: frame.width - 2 * ChartRenderer.textInset, fontSize: fontSize)
                }
            }
            return plan
        }
        layout.plot = Rect(minX: plotLeft, minY: plotTop, maxX: plotRight, maxY: max(plotBottom, plotTop + 10))
    }

    // MARK: Document

    func id(_ name: String) -> String {
        "\(idPrefix)-\(name)"
    }

    mutating func document() -> SVGElement {
        let frame = layout.frame
        var root = SVGElement(
            "svg",
            [
                ("xmlns", "http://www.w3.org/2000/svg"),
                ("width", Coordinates.text(frame.width)),
                ("height", Coordinates.text(frame.height)),
                ("viewBox", "0 0 \(Coordinates.text(frame.width)) \(Coordinates.text(frame.height))"),
                ("role", "img"),
                ("aria-labelledby", "\(id("title")) \(id("desc"))"),
                ("font-family", configuration.theme.fontFamily),
                ("font-size", Coordinates.text(fontSize)),
            ])
        if configuration.plotAttributes { root.attributes += plotAttributes() }
        root.append(SVGElement("title", [("id", id("title"))], text: accessibleTitle))
        root.append(SVGElement("desc", [("id", id("desc"))], text: accessibleDescription))
        if embedsStyleSheet, let css = ThemeStyleSheet.css(for: configuration.theme) {
            root.append(SVGElement("style", text: css))
        }
        root.append(SVGElement("rect", [("width", "100%"), ("height", "100%")] + fill(colors.background, role: "bg")))
        if let fullTitle = configuration.title, let rect = layout.title {
            // A title wider than the chart is shortened rather than cut off by the frame.
            let title = TextMetrics.truncate(fullTitle, toWidth: rect.width, fontSize: titleFontSize, bold: true)
            root.append(
                SVGElement(
                    "text",
                    [
                        ("x", Coordinates.text(rect.minX)),
                        ("y", Coordinates.text(rect.minY + TextMetrics.ascent(fontSize: titleFontSize))),
                        ("font-size", Coordinates.text(titleFontSize)),
                        ("font-weight", "bold"),
                    ] + fill(colors.text, role: "tx"), text: title))
        }
        guard hasData else {
            for element in noDataElements() { root.append(element) }
            if let legendGroup = legendElement() { root.append(legendGroup) }
            return root
        }
        let plot = layout.plot
        var defs = SVGElement("defs")
        defs.append(
            SVGElement(
                "clipPath", [("id", id("clip"))],
                children: [
                    .element(
                        SVGElement(
                            "rect",
                            [
                                ("x", Coordinates.text(plot.minX - 1)), ("y", Coordinates.text(plot.minY - 1)),
                                ("width", Coordinates.text(plot.width + 2)),
                                ("height", Coordinates.text(plot.height + 2)),
                            ]))
                ]))
        let margin = 8.0
        if resolution.table.templates.contains(where: { $0.kind == .point }) {
            defs.append(
                SVGElement(
                    "clipPath", [("id", id("clip-points"))],
                    children: [
                        .element(
                            SVGElement(
                                "rect",
                                [
                                    ("x", Coordinates.text(plot.minX - margin)),
                                    ("y", Coordinates.text(plot.minY - margin)),
                                    ("width", Coordinates.text(plot.width + 2 * margin)),
                                    ("height", Coordinates.text(plot.height + 2 * margin)),
                                ]))
                    ]))
        }
        if let gradient = legendGradient() { defs.append(gradient) }
        root.append(defs)
        if let background = configuration.plotArea.background {
            root.append(SVGElement("rect", rectAttributes(plot) + fill(background, role: nil)))
        }
        for element in gridElements() { root.append(element) }
        drawMarks()
        if let marks = SVGElement.group([("class", "marks")], markElements) {
            root.append(marks)
        }
        if let border = configuration.plotArea.border {
            root.append(
                SVGElement(
                    "rect",
                    rectAttributes(plot) + [("fill", "none")] + stroke(border, role: nil)
                        + [("stroke-width", Coordinates.text(configuration.plotArea.borderWidth))]))
        }
        for element in axisElements() { root.append(element) }
        if let annotations = SVGElement.group([("class", "annotations")], annotationElements) {
            root.append(annotations)
        }
        if let legendGroup = legendElement() { root.append(legendGroup) }
        return root
    }

    /// Where the plot is and what its scales span, for a script that maps the pointer to data as a chart proxy
    /// does: `data-plot` is the plot rectangle (`x y width height` in the SVG's own units); `data-x-scale` and
    /// `data-y-scale` are `linear`, `log`, `time` (seconds since the Unix epoch) or `band`; `data-x-domain` and
    /// `data-y-domain` are the continuous scales' `lower upper`, drawn from left to right and bottom to top.
    func plotAttributes() -> [(String, String)] {
        // A chart without data keeps an explicit domain (a time axis over the range): it can still be brushed.
        guard !sectorsOnly, resolution.x.hasDomain || resolution.y.hasDomain else { return [] }
        let plot = layout.plot
        var attributes = [
            (
                "data-plot",
                [plot.minX, plot.minY, plot.width, plot.height].map { Coordinates.text($0) }.joined(separator: " ")
            )
        ]
        for (axis, scale) in [("x", resolution.x), ("y", resolution.y)] where scale.hasDomain {
            let kind =
                switch scale.kind {
                case .linear: "linear"
                case .log: "log"
                case .time: "time"
                case .band: "band"
                }
            attributes.append(("data-\(axis)-scale", kind))
            if scale.isContinuous {
                attributes.append(
                    (
                        "data-\(axis)-domain",
                        "\(DecimalFormatter.shortest(scale.lower, maxDecimals: 6)) \(DecimalFormatter.shortest(scale.upper, maxDecimals: 6))"
                    ))
            }
        }
        return attributes
    }

    private func noDataElements() -> [SVGElement] {
        let plot = layout.plot
        let message = "No data"
        return [
            SVGElement(
                "rect",
                rectAttributes(plot) + [("fill", "none")] + stroke(colors.grid, role: "gr")
                    + [("stroke-dasharray", "4 4")]),
            SVGElement(
                "text",
                [
                    ("x", Coordinates.text(plot.midX)),
                    ("y", Coordinates.text(plot.midY + fontSize * 0.35)),
                    ("text-anchor", "middle"),
                    ("font-size", Coordinates.text(fontSize * 1.2)),
                ] + fill(colors.secondaryText, role: "t2"), text: message),
        ]
    }

    // MARK: Paint helpers

    func rectAttributes(_ rect: Rect) -> [(String, String)] {
        [
            ("x", Coordinates.text(rect.minX)), ("y", Coordinates.text(rect.minY)),
            ("width", Coordinates.text(rect.width)), ("height", Coordinates.text(rect.height)),
        ]
    }

    /// `fill` (and `fill-opacity`) for a colour; with an adaptive theme, also the class its dark colour uses.
    func fill(_ color: Color, role: String?) -> [(String, String)] {
        paintAttributes(color, role: role, name: "fill", opacityName: "fill-opacity")
    }

    /// `stroke` (and `stroke-opacity`) for a colour; with an adaptive theme, also the class its dark colour uses.
    func stroke(_ color: Color, role: String?) -> [(String, String)] {
        paintAttributes(color, role: role, name: "stroke", opacityName: "stroke-opacity")
    }

    /// SVG paints fills and strokes alike, but each has its own opacity attribute.
    private func paintAttributes(
        _ color: Color, role: String?, name: String, opacityName: String
    ) -> [(String, String)] {
        var attributes = [(name, color.hexString)]
        if color.alpha < 1 {
            attributes.append((opacityName, DecimalFormatter.shortest(color.alpha, maxDecimals: 3)))
        }
        if adaptive, let role { attributes.append(("class", role)) }
        return attributes
    }

    /// The colour of a mark: set directly, from its series value, or the first palette colour.
    func markColor(_ record: MarkRecord, template: MarkTemplate) -> (Color, slot: Int?) {
        markColor(colorKey: record.color, template: template)
    }

    func markColor(colorKey: Int32, template: MarkTemplate) -> (Color, slot: Int?) {
        var result: (Color, Int?)
        if let color = template.style.color {
            result = (color, nil)
        } else if let mapped = resolution.color.color(forKey: colorKey) {
            result = mapped
        } else {
            result = (colors.palette.first ?? .blue, colors.palette.isEmpty ? nil : 0)
        }
        if let opacity = template.style.opacity { result.0 = result.0.opacity(opacity) }
        return result
    }

    func fillPaint(_ paint: (Color, slot: Int?)) -> [(String, String)] {
        fill(paint.0, role: paint.slot.map { "f\($0)" })
    }

    func strokePaint(_ paint: (Color, slot: Int?)) -> [(String, String)] {
        stroke(paint.0, role: paint.slot.map { "s\($0)" })
    }
}
