import PulseAnalytics
import PulseQuery

/// `index.html` of a dashboard directory: the newest file of each dashboard and range shown inline, older ones
/// linked. Plain HTML and CSS with relative links only, so it works opened from disk (`file://`) and from any
/// static web server, without JavaScript; it follows the viewer's light or dark setting and reloads itself, so a
/// tab left open is a wall display that follows new renders.
struct IndexPage: Sendable {
    struct Entry: Sendable {
        var title: String
        var stem: String
        /// Each range with its files on disk, oldest first.
        var ranges: [(range: DashboardRange, files: [DashboardFile])]
    }

    var dashboards: [Entry]
    var refreshSeconds: Int
    var generatedAt: Int64

    func html() -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <meta http-equiv="refresh" content="\(refreshSeconds)">
            <title>Netpulse dashboards</title>
            <style>
            body{margin:0;padding:16px 20px;font-family:"DejaVu Sans",Verdana,Arial,sans-serif;font-size:14px;background:#ffffff;color:#1c1c1e}
            a{color:#0060a0}
            h1{font-size:22px;margin:0 0 4px}
            h2{font-size:18px;margin:28px 0 8px;padding-top:8px;border-top:1px solid #e3e3e8}
            h3{font-size:15px;margin:18px 0 6px}
            .note{color:#5a5a60;margin:0 0 8px}
            nav ul{list-style:none;padding:0;margin:8px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
            figure{margin:0 0 8px}
            figure img{display:block;max-width:100%;height:auto;border:1px solid #e3e3e8}
            details{margin:4px 0 12px}
            details ul{columns:3 18em;margin:6px 0}
            @media (prefers-color-scheme:dark){body{background:#17171a;color:#f2f2f7}a{color:#8fd0f5}.note{color:#b0b0b8}h2{border-top-color:#323238}figure img{border-color:#323238}}
            </style>
            </head>
            <body>

            """
        out += Markup.text("h1", [], "Netpulse dashboards") + "\n"
        out +=
            Markup.text(
                "p", [("class", "note")],
                "Index written \(RFC3339.text(generatedAt)). This page reloads every \(refreshSeconds) s and shows the newest render of each dashboard; click a chart to open it on its own."
            ) + "\n"
        if dashboards.count > 1 {
            let items = dashboards.map { entry in
                Markup.element("li", [], Markup.text("a", [("href", "#" + anchor(entry))], entry.title))
            }
            out += Markup.element("nav", [], "<ul>" + items.joined() + "</ul>") + "\n"
        }
        for (position, entry) in dashboards.enumerated() {
            out += Markup.text("h2", [("id", anchor(entry))], entry.title) + "\n"
            for (range, files) in entry.ranges {
                out += Markup.text("h3", [], range.title) + "\n"
                guard let newest = files.last else {
                    out += Markup.text("p", [("class", "note")], "Not rendered yet.") + "\n"
                    continue
                }
                var image: [(String, String)] = [
                    ("src", newest.name), ("alt", "\(entry.title), \(range.title.lowercasedFirst)"),
                ]
                // Only the first dashboard loads at once; the others as they are scrolled to.
                if position > 0 { image.append(("loading", "lazy")) }
                out +=
                    Markup.element(
                        "figure", [],
                        Markup.element("a", [("href", newest.name)], Markup.element("img", image))
                            + Markup.element(
                                "figcaption", [("class", "note")],
                                Markup.escape("Rendered \(RFC3339.text(newest.renderedAt)) · ")
                                    + Markup.text("a", [("href", newest.name)], newest.name) + Markup.escape(" · ")
                                    + Markup.text(
                                        "a", [("href", DashboardFiles.latest(stem: entry.stem, range: range))],
                                        "always the latest"))) + "\n"
                let older = files.dropLast().reversed()
                if !older.isEmpty {
                    let items = older.map { file in
                        Markup.element(
                            "li", [], Markup.text("a", [("href", file.name)], RFC3339.text(file.renderedAt)))
                    }
                    out +=
                        Markup.element(
                            "details", [],
                            Markup.text("summary", [], "Older renders (\(older.count))")
                                + "<ul>" + items.joined() + "</ul>") + "\n"
                }
            }
        }
        out += "</body>\n</html>\n"
        return out
    }

    private func anchor(_ entry: Entry) -> String { "d-" + entry.stem }
}
