/// Several charts in a grid, drawn into one SVG: a dashboard or a report page.
///
/// Each panel is a nested `<svg>` with its own title, description and ids, so panels never clash. The
/// dashboard's theme replaces the panels' themes so the page looks like one piece.
public struct Dashboard: Sendable {
    var title: String?
    var columns: Int
    var cellWidth: Double
    var cellHeight: Double
    var spacing: Double
    var theme: ChartTheme
    var charts: [Chart]

    /// A grid of charts, filled row by row.
    ///
    /// - Parameters:
    ///   - title: Drawn above the grid and used as the document's title.
    ///   - columns: Panels per row.
    ///   - cellWidth: Width of each panel in pixels; every chart is drawn at this size.
    ///   - cellHeight: Height of each panel in pixels.
    ///   - spacing: Pixels between panels and around the grid.
    public init(
        title: String? = nil, columns: Int = 3, cellWidth: Double = 400, cellHeight: Double = 240,
        spacing: Double = 12, theme: ChartTheme = .light, charts: [Chart]
    ) {
        self.title = title
        self.columns = max(columns, 1)
        self.cellWidth = max(cellWidth, 1)
        self.cellHeight = max(cellHeight, 1)
        self.spacing = max(spacing, 0)
        self.theme = theme
        self.charts = charts
    }

    /// A grid of the charts written in `charts`.
    public init(
        title: String? = nil, columns: Int = 3, cellWidth: Double = 400, cellHeight: Double = 240,
        spacing: Double = 12, theme: ChartTheme = .light, @DashboardBuilder charts: () -> [Chart]
    ) {
        self.init(
            title: title, columns: columns, cellWidth: cellWidth, cellHeight: cellHeight, spacing: spacing,
            theme: theme, charts: charts())
    }

    /// Draws the dashboard as one standalone SVG document.
    public func renderSVG(idPrefix: String = "pd") -> String {
        let rows = max((charts.count + columns - 1) / columns, 1)
        let titleFont = theme.fontSize * 1.5
        let titleHeight = title == nil ? 0 : TextMetrics.lineHeight(fontSize: titleFont) + spacing
        let width = Double(columns) * cellWidth + Double(columns + 1) * spacing
        let height = titleHeight + Double(rows) * cellHeight + Double(rows + 1) * spacing
        let colors = theme.colors
        let adaptive = theme.darkColors != nil
        var root = SVGElement(
            "svg",
            [
                ("xmlns", "http://www.w3.org/2000/svg"),
                ("width", Coordinates.text(width)), ("height", Coordinates.text(height)),
                ("viewBox", "0 0 \(Coordinates.text(width)) \(Coordinates.text(height))"),
                ("role", "img"), ("aria-labelledby", "\(idPrefix)-title \(idPrefix)-desc"),
                ("font-family", theme.fontFamily), ("font-size", Coordinates.text(theme.fontSize)),
            ])
        let panelTitles = charts.map { $0.configuration.title ?? "untitled chart" }
        root.append(
            SVGElement(
                "title", [("id", "\(idPrefix)-title")],
                text: title ?? (charts.count == 1 ? panelTitles[0] : "Dashboard of \(charts.count) charts")))
        root.append(
            SVGElement(
                "desc", [("id", "\(idPrefix)-desc")],
                text: charts.count == 1
                    ? "One chart: \(panelTitles[0])."
                    : "\(charts.count) charts in \(columns) columns: \(panelTitles.joined(separator: "; "))."))
        if let css = ThemeStyleSheet.css(for: theme) { root.append(SVGElement("style", text: css)) }
        var background: [(String, String)] = [
            ("width", "100%"), ("height", "100%"), ("fill", colors.background.hexString),
        ]
        if adaptive { background.append(("class", "bg")) }
        root.append(SVGElement("rect", background))
        if let title {
            var attributes: [(String, String)] = [
                ("x", Coordinates.text(spacing)),
                ("y", Coordinates.text(spacing + TextMetrics.ascent(fontSize: titleFont))),
                ("font-size", Coordinates.text(titleFont)), ("font-weight", "bold"), ("fill", colors.text.hexString),
            ]
            if adaptive { attributes.append(("class", "tx")) }
            root.append(SVGElement("text", attributes, text: title))
        }
        for (index, chart) in charts.enumerated() {
            let column = index % columns
            let row = index / columns
            let x = spacing + Double(column) * (cellWidth + spacing)
            let y = titleHeight + spacing + Double(row) * (cellHeight + spacing)
            let panel = chart.frame(width: cellWidth, height: cellHeight).chartTheme(theme)
            var renderer = ChartRenderer(chart: panel, idPrefix: "\(idPrefix)\(index)")
            renderer.embedsStyleSheet = false
            var element = renderer.document()
            element.attributes.removeAll { $0.0 == "xmlns" || $0.0 == "font-family" || $0.0 == "font-size" }
            element.attributes.insert(contentsOf: [("x", Coordinates.text(x)), ("y", Coordinates.text(y))], at: 0)
            root.append(element)
        }
        var writer = SVGWriter()
        writer.write(root)
        return writer.text
    }
}

/// Builds the list of charts of a dashboard, with `if` and `for`.
@resultBuilder
public enum DashboardBuilder {
    public static func buildExpression(_ chart: Chart) -> [Chart] { [chart] }
    public static func buildExpression(_ charts: [Chart]) -> [Chart] { charts }
    public static func buildBlock(_ parts: [Chart]...) -> [Chart] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Chart]?) -> [Chart] { part ?? [] }
    public static func buildEither(first: [Chart]) -> [Chart] { first }
    public static func buildEither(second: [Chart]) -> [Chart] { second }
    public static func buildArray(_ parts: [[Chart]]) -> [Chart] { parts.flatMap { $0 } }
}
