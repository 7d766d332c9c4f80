import PulseAnalytics
import PulseCharts
import PulseCore
import PulseFormats
import PulseQuery

/// The range a live page shows, as its URL says: one of the dashboards' ranges by name (`range=hour`), which
/// follows new buckets, or a range someone picked or brushed (`from=…&to=…`), which stays put.
public enum LiveRange: Sendable, Hashable {
    case named(DashboardRange)
    case custom(from: Int64, to: Int64)

    /// The query string that asks for this range again, for the page's links, exports and redraws.
    public var query: String {
        switch self {
        case .named(let range): "range=\(range.name)"
        case .custom(let from, let to):
            "from=\(PercentEncoding.encode(RFC3339.text(from)))&to=\(PercentEncoding.encode(RFC3339.text(to)))"
        }
    }

    /// Whether new buckets move the range (a named range ends at the last complete bucket).
    public var follows: Bool {
        if case .named = self { return true }
        return false
    }
}

/// The daemon's live dashboards (`docs/dashboards.md`, "Live dashboards"): the pages the daemon draws to disk, as
/// HTML served at `/`, with each panel an inline SVG drawn on demand for the range the URL names, a range picker, and
/// links to each panel's SVG, CSV and JSON.
///
/// Everything works without JavaScript: the picker is a form and links, the panels are drawn by the server. The page's
/// one script (`/assets/netpulse.js`, with no inline script or style anywhere, so the Content-Security-Policy allows
/// only the daemon's own files) adds brushing, the value under the pointer and redraws when buckets arrive. It finds
/// what it needs in the markup: each chart's plot rectangle and scale domains (``Chart/chartPlotAttributes(_:)``),
/// and each panel's data at its JSON link, which is the data drawn.
public struct LivePages: Sendable {
    /// The theme and panel size, as the dashboards on disk are drawn.
    public var renderer: DashboardRenderer

    public init(renderer: DashboardRenderer = DashboardRenderer()) {
        self.renderer = renderer
    }

    var theme: ChartTheme { renderer.theme }

    /// Each panel's chart as read, at the panel size, in the page's theme, with its plot rectangle and scales
    /// marked for the script.
    public func charts(_ data: DashboardData) -> [Chart] {
        renderer.charts(data.panels).map {
            $0.chartTheme(theme).frame(width: renderer.cellWidth, height: renderer.cellHeight)
        }
    }

    /// The page's own style sheet: layout, light and dark colours, and the charts' dark colours (which a standalone
    /// SVG embeds, and an inline one may not under the page's policy).
    public func styleSheet() -> String {
        LiveAssets.styleSheet + (theme.darkStyleSheet(scope: "svg.chart") ?? "") + "\n"
    }

    // MARK: Pages

    /// `/`: every dashboard, with a link to each of its ranges.
    public func index(_ dashboards: [DashboardSpec], ranges: [DashboardRange], zone: String, now: Int64) -> String {
        var body = Markup.text("h1", [], "Netpulse dashboards") + "\n"
        body +=
            Markup.text(
                "p", [("class", "note")],
                "Live pages drawn on demand; times in \(zone). As of \(RFC3339.text(now)).") + "\n"
        var items = [String]()
        for spec in dashboards {
            let path = "/dashboards/\(PercentEncoding.encode(spec.fileStem))"
            let links = ranges.map { range in
                Markup.text("a", [("href", "\(path)?range=\(range.name)")], range.title)
            }
            items.append(
                Markup.element(
                    "li", [],
                    Markup.text("a", [("href", "\(path)?range=\(ranges.first?.name ?? "hour")")], spec.title)
                        + Markup.element("span", [("class", "ranges")], links.joined(separator: " · "))))
        }
        body += Markup.element("ul", [("class", "dashboards")], items.joined(separator: "\n")) + "\n"
        return Self.document(title: "Netpulse dashboards", bodyAttributes: [], body: body)
    }

    /// A dashboard's page for one range, with each of its panels as drawn inline (``inlinePanelSVG(_:index:)`` of
    /// ``charts(_:)`` of `data`, in order) and its entity tag: the page's script starts from them, and its event
    /// stream is told them (`shown`), so that the first redraw carries only the panels that changed.
    public func page(
        _ data: DashboardData, panels: [(svg: String, tag: String)], range view: LiveRange, ranges: [DashboardRange],
        calendar: CivilCalendar
    ) -> String {
        let spec = data.spec
        let path = "/dashboards/\(PercentEncoding.encode(spec.fileStem))"
        let query = view.query
        var body = Markup.element("p", [("class", "up")], Markup.text("a", [("href", "/")], "All dashboards")) + "\n"
        body += Markup.text("h1", [], "\(spec.title) — \(data.range.title.lowercasedFirst)") + "\n"
        for line in [
            spec.description ?? "Traffic of \(data.panels.members.label).", DashboardRenderer.rangeLine(data),
            DashboardRenderer.coverageLine(data.panels),
        ] {
            body += Markup.text("p", [("class", "note")], line) + "\n"
        }
        body += picker(view, ranges: ranges, window: data.panels.window, calendar: calendar) + "\n"
        body +=
            Markup.text(
                "p", [("class", "note"), ("id", "np-status"), ("role", "status")],
                view.follows
                    ? "Drawn \(calendar.localText(data.now)); this view follows new buckets."
                    : "Drawn \(calendar.localText(data.now)); a picked range stays as it is.") + "\n"
        var figures = [String]()
        for (index, (svg, tag)) in panels.enumerated() {
            let base = "\(path)/panels/\(index)"
            let exports = ["svg", "csv", "json"].map { format in
                Markup.text(
                    "a",
                    [
                        ("href", "\(base).\(format)?\(query)"), ("download", "\(spec.fileStem)-\(index).\(format)"),
                        ("class", "export"), ("data-format", format),
                    ], format.uppercased())
            }
            figures.append(
                Markup.element(
                    "figure",
                    [
                        ("class", "panel"), ("id", "panel-\(index)"), ("data-panel", "\(index)"),
                        ("data-svg", "\(base).svg?\(query)&inline=1"), ("data-json", "\(base).json?\(query)"),
                        ("data-tag", tag),
                    ],
                    Markup.element("div", [("class", "plot"), ("tabindex", "0")], svg)
                        + Markup.element(
                            "figcaption", [],
                            Markup.element(
                                "output", [("class", "readout"), ("id", "readout-\(index)"), ("aria-live", "polite")],
                                "")
                                + Markup.element(
                                    "span", [("class", "exports")], "Export " + exports.joined(separator: " ")))))
        }
        body += Markup.element("main", [("class", "panels")], "\n" + figures.joined(separator: "\n") + "\n") + "\n"
        var attributes = [
            ("data-zone", calendar.timeZone.identifier), ("data-zone-name", calendar.name), ("data-path", path),
        ]
        if view.follows {
            // The window's end as drawn: the stream announces the next boundary even if it passed before it opened.
            // And the panels' tags (hex, without the quotes): the stream sends a panel's picture when it differs.
            let shown = panels.map { $0.tag.filter(\.isHexDigit) }.joined(separator: ",")
            attributes.append(
                ("data-events", "\(path)/events?\(query)&drawn=\(data.panels.window.to)&shown=\(shown)"))
        }
        return Self.document(
            title: "\(spec.title) — \(data.range.title.lowercasedFirst) · Netpulse", bodyAttributes: attributes,
            body: body)
    }

    /// The range picker: a link per named range and a from–to form in the store's zone; both are plain HTML.
    func picker(_ view: LiveRange, ranges: [DashboardRange], window: Window, calendar: CivilCalendar) -> String {
        var links = [String]()
        for range in ranges {
            var attributes = [("href", "?range=\(range.name)")]
            if case .named(let shown) = view, shown.name == range.name { attributes.append(("aria-current", "page")) }
            links.append(Markup.text("a", attributes, range.title))
        }
        func input(_ name: String, _ label: String, _ time: Int64) -> String {
            Markup.element(
                "label", [],
                Markup.escape(label) + " "
                    + Markup.element(
                        "input",
                        [
                            ("type", "datetime-local"), ("name", name), ("id", "np-\(name)"),
                            ("value", calendar.localMinute(time).replacingFirst(" ", with: "T")),
                        ]))
        }
        return Markup.element(
            "form", [("class", "picker"), ("method", "get"), ("action", "")],
            Markup.element("nav", [("aria-label", "Ranges")], links.joined(separator: " "))
                + Markup.element(
                    "span", [("class", "custom")],
                    input("from", "From", window.from) + " " + input("to", "to", window.to) + " "
                        + Markup.text("span", [("class", "zone")], "(\(calendar.name))") + " "
                        + Markup.text("button", [("type", "submit")], "Show")))
    }

    /// A page that could not be drawn as asked: what was wrong, and the way back to the dashboard's default range.
    public static func errorPage(title: String, message: String, back: String) -> String {
        let body =
            Markup.text("h1", [], title) + "\n" + Markup.text("p", [("role", "alert")], message) + "\n"
            + Markup.element("p", [], Markup.text("a", [("href", back)], "Back to the last hour")) + "\n"
        return document(title: "\(title) · Netpulse", bodyAttributes: [], body: body)
    }

    static func document(title: String, bodyAttributes: [(String, String)], body: String) -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">

            """
        out += Markup.text("title", [], title) + "\n"
        // No icon to fetch (a browser asks for /favicon.ico otherwise, and logs the 404).
        out += "<link rel=\"icon\" href=\"data:,\">\n"
        out += "<link rel=\"stylesheet\" href=\"/assets/netpulse.css\">\n"
        out += "<script src=\"/assets/netpulse.js\" defer></script>\n"
        out += "</head>\n"
        out += Markup.element("body", bodyAttributes, "\n" + body) + "\n</html>\n"
        return out
    }

    // MARK: A panel on its own

    /// A panel as a standalone SVG document, its dark colours embedded (a download opened on its own).
    public func panelSVG(_ chart: Chart) -> String {
        chart.renderSVG(idPrefix: "pc", styleSheet: true)
    }

    /// A panel as the page holds it inline, and as its redraws fetch it: without a style sheet.
    public func inlinePanelSVG(_ chart: Chart, index: Int) -> String {
        chart.renderSVG(idPrefix: "p\(index)", styleSheet: false).replacingFirst("<svg ", with: "<svg class=\"chart\" ")
    }

    /// A panel's drawn values as CSV: a header of the table's columns, then one row per value; times in RFC 3339
    /// (UTC), numbers as drawn, a missing value empty.
    public static func csv(_ table: ChartDataTable) -> String {
        var out = CSVText.row(table.columns)
        for row in table.rows { out += CSVText.row(row.map(text)) }
        return out
    }

    /// A panel's drawn values as JSON: its title, columns, whether it stacks, and rows of numbers, times (RFC 3339,
    /// UTC), names and nulls.
    public static func json(_ table: ChartDataTable, panel: Int, window: Window, level: RollupLevel) -> String {
        let rows = table.rows.map { row in
            JSONText.array(
                row.map { value in
                    switch value {
                    case .number(let number): JSONText.number(number)
                    case .date, .text: JSONText.string(text(value))
                    case .missing: "null"
                    }
                })
        }
        return JSONText.object([
            ("panel", "\(panel)"), ("title", table.title.map(JSONText.string) ?? "null"),
            ("from", JSONText.string(RFC3339.text(window.from))), ("to", JSONText.string(RFC3339.text(window.to))),
            ("bucket_seconds", "\(level.width / 1_000)"), ("stacked", JSONText.bool(table.stacked)),
            ("columns", JSONText.array(strings: table.columns)),
            ("rows", "[\n" + rows.joined(separator: ",\n") + "\n]"),
        ]) + "\n"
    }

    static func text(_ value: ChartDataTable.Value) -> String {
        switch value {
        case .number(let number): JSONText.number(number)
        case .date(let date): RFC3339.text(Int64((date.secondsSinceEpoch * 1_000).rounded()))
        case .text(let text): text
        case .missing: ""
        }
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced, in Swift's own strings (Foundation's
    /// `replacingCharacters` copied a fleet overview's 65 KB panels to UTF-16 and back).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var replaced = self
        replaced.replaceSubrange(range, with: replacement)
        return replaced
    }
}
