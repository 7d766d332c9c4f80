import PulseAnalytics
import PulseCharts
import PulseCore
import PulseFormats
import PulseQuery

/// A report's files, from the ``Report`` alone: one self-contained HTML page (charts inline as SVG, no script, no
/// external resource; prints on A4), `report.json`, and CSV tables of the same figures. Nothing in them depends on
/// when they were made, so the same data gives the same bytes.
public enum ReportFormats {
    /// How many busiest hours are listed.
    static let busiest = 10

    /// File name → content.
    public static func files(_ report: Report) -> [(String, String)] {
        [
            ("report.html", html(report)), ("report.json", json(report)), ("figures.csv", figuresCSV(report)),
            ("hours.csv", hoursCSV(report)), ("heatmap.csv", heatmapCSV(report)), ("alerts.csv", alertsCSV(report)),
            ("adjustments.csv", adjustmentsCSV(report)),
        ]
    }

    // MARK: JSON

    public static func json(_ report: Report) -> String {
        let calendar = report.calendar
        func scopes(_ list: [ScopeFigures]) -> String {
            JSONText.array(
                list.map {
                    JSONText.object([
                        ("series", FigureFormat.seriesJSON($0.series)),
                        ("figures", FigureFormat.figuresJSON($0.figures)),
                    ])
                })
        }
        let window = Window(from: report.period.from, to: report.period.to, name: report.period.kind.rawValue)
        return JSONText.object([
            (
                "report",
                JSONText.object([
                    ("name", JSONText.string(report.name)), ("kind", JSONText.string(report.period.kind.rawValue)),
                    ("label", JSONText.string(report.period.label)),
                    ("title", JSONText.string(report.period.title(calendar))),
                    ("scope", JSONText.string(report.scopeLabel)),
                    (
                        "period",
                        FigureFormat.windowJSON(
                            window, calendar: calendar, resolution: report.scope?.figures.resolution)
                    ),
                    ("time_zone", JSONText.string(calendar.name)), ("store_revision", "\(report.revision)"),
                    ("generator", JSONText.string("Netpulse \(NetpulseVersion.string)")),
                ])
            ),
            (
                "completeness",
                JSONText.object([
                    ("coverage_percent", JSONText.decimal(report.scope?.figures.coverage, places: 4)),
                    (
                        "incomplete_hosts",
                        JSONText.array(
                            incomplete(report).map {
                                JSONText.object([
                                    ("host", JSONText.string($0.series.name)),
                                    ("coverage_percent", JSONText.decimal($0.figures.coverage, places: 4)),
                                ])
                            })
                    ),
                ])
            ),
            ("scope", report.scope.map { scopes([$0]) } ?? "[]"),
            ("groups", scopes(report.groups)), ("hosts", scopes(report.hosts)),
            ("top_interfaces", scopes(report.topInterfaces)),
            (
                "hours",
                JSONText.array(
                    report.hours.map { row in
                        JSONText.object([
                            ("from", JSONText.string(RFC3339.text(row.window.from))),
                            ("rx_bytes", "\(row.values.traffic[.rxBytes])"),
                            ("tx_bytes", "\(row.values.traffic[.txBytes])"),
                            ("coverage_percent", JSONText.decimal(row.coverage, places: 4)),
                        ])
                    })
            ),
            (
                "busiest_hours",
                JSONText.array(report.busiestHours(busiest).map { JSONText.string(RFC3339.text($0.window.from)) })
            ),
            (
                "heatmap",
                JSONText.object([
                    ("unit", JSONText.string("bits_per_second")),
                    (
                        "cells",
                        JSONText.array(
                            report.heatmap.cells.map { cell in
                                JSONText.object([
                                    ("weekday", JSONText.string(cell.weekdayName)), ("hour", "\(cell.hour)"),
                                    ("hours", "\(cell.count)"), ("mean", number(cell.value)),
                                ])
                            })
                    ),
                ])
            ),
            ("alerts", JSONText.array(report.alerts.map(alertJSON))),
            ("adjustments", JSONText.array(report.adjustments.map(ReportLedger.adjustmentJSON))),
        ]) + "\n"
    }

    static func alertJSON(_ event: AlertEvent) -> String {
        JSONText.object([
            ("at", JSONText.string(RFC3339.text(event.at))), ("rule", JSONText.string(event.rule)),
            ("status", JSONText.string(event.status.rawValue)), ("fingerprint", JSONText.string(event.fingerprint)),
            ("value", event.value.map(number) ?? "null"),
            (
                "labels",
                JSONText.object(event.labels.sorted { $0.key < $1.key }.map { ($0.key, JSONText.string($0.value)) })
            ),
            ("chart", event.chart.map(JSONText.string) ?? "null"),
        ])
    }

    /// A finite number with at most three decimals (JSON has no NaN).
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return FixedPoint.text(Int64((value * 1_000).rounded()), places: 3)
    }

    // MARK: CSV

    static func figuresCSV(_ report: Report) -> String {
        var out = CSVText.row(["section"] + FigureFormat.figuresCSVHeader)
        for (section, list) in [
            ("scope", report.scope.map { [$0] } ?? []), ("group", report.groups), ("host", report.hosts),
            ("top_interface", report.topInterfaces),
        ] {
            for entry in list { out += CSVText.row([section] + FigureFormat.figuresCSV(entry.series, entry.figures)) }
        }
        return out
    }

    static func hoursCSV(_ report: Report) -> String {
        let ranks = Dictionary(
            report.busiestHours(busiest).enumerated().map { ($0.element.window.from, $0.offset + 1) }
        ) { first, _ in first }
        var out = CSVText.row([
            "from_utc", "from_local", "rx_bytes", "tx_bytes", "rx_average_bytes_per_second",
            "tx_average_bytes_per_second", "coverage_percent", "busiest_rank",
        ])
        for row in report.hours {
            out += CSVText.row([
                RFC3339.text(row.window.from), report.calendar.localMinute(row.window.from),
                "\(row.values.traffic[.rxBytes])", "\(row.values.traffic[.txBytes])",
                row.average.rx.map { FixedPoint.text($0, places: 3) } ?? "",
                row.average.tx.map { FixedPoint.text($0, places: 3) } ?? "", FixedPoint.text(row.coverage, places: 4),
                ranks[row.window.from].map { "\($0)" } ?? "",
            ])
        }
        return out
    }

    static func heatmapCSV(_ report: Report) -> String {
        var out = CSVText.row(["weekday", "hour", "hours", "mean_bits_per_second"])
        for cell in report.heatmap.cells {
            out += CSVText.row([cell.weekdayName, "\(cell.hour)", "\(cell.count)", number(cell.value)])
        }
        return out
    }

    static func alertsCSV(_ report: Report) -> String {
        var out = CSVText.row([
            "at_utc", "rule", "status", "severity", "host", "interface", "group", "value", "fingerprint", "chart",
        ])
        for event in report.alerts {
            out += CSVText.row([
                RFC3339.text(event.at), event.rule, event.status.rawValue, event.labels["severity"] ?? "",
                event.labels["host"] ?? "", event.labels["interface"] ?? "", event.labels["group"] ?? "",
                event.value.map(number) ?? "", event.fingerprint, event.chart ?? "",
            ])
        }
        return out
    }

    static func adjustmentsCSV(_ report: Report) -> String {
        var out = CSVText.row(["found_by", "report", "series", "field", "was", "now", "revision"])
        for item in report.adjustments {
            out += CSVText.row([
                item.foundBy, item.report, item.series, item.field, item.was.map { "\($0)" } ?? "",
                item.now.map { "\($0)" } ?? "", "\(item.revision)",
            ])
        }
        return out
    }

    // MARK: HTML

    static func incomplete(_ report: Report) -> [ScopeFigures] {
        report.hosts.filter { $0.figures.coverage < 1_000_000 }
    }

    static func html(_ report: Report) -> String {
        let calendar = report.calendar
        let title = "Netpulse report: \(report.period.title(calendar)), \(report.scopeLabel)"
        var body = Markup.text("h1", title)
        let coverage = report.scope.map { TerminalText.percent(ppm: $0.figures.coverage) } ?? "no data"
        body += Markup.text(
            "p", [("class", "meta")],
            "\(calendar.localMinute(report.period.from)) – \(calendar.localMinute(report.period.to)) (\(calendar.name)). "
                + "Data coverage \(coverage); store revision \(report.revision). Made by Netpulse \(NetpulseVersion.string); "
                + "the same data gives the same report, byte for byte (SHA256SUMS).")
        body += section("Summary", table(report.scope.map { [$0] } ?? [], first: "Scope"))
        body += figure(report.charts.first)
        body += section(
            "Groups",
            report.groups.isEmpty
                ? Markup.text("p", "No groups: label agents in the daemon's config ([labels.AGENT]) to see sites.")
                : table(report.groups, first: "Group"))
        body += section("Hosts", table(report.hosts, first: "Host"))
        for chart in report.charts.dropFirst().dropLast() { body += figure(chart) }
        body += section("Top interfaces by bytes", table(report.topInterfaces, first: "Interface"))
        body += section("Busiest hours", hoursTable(report))
        body += figure(report.charts.last)
        body += section("Alerts", alertsTable(report))
        body += section("Data completeness", completeness(report))
        body += section("Adjustments", adjustmentsTable(report))
        body += Markup.text(
            "p", [("class", "meta")],
            "Rates are bits per second; bytes are exact; 95th percentiles are of the period's bucket rates. The same figures are in report.json and the CSV files beside this page; SHA256SUMS lists their checksums (sha256sum -c SHA256SUMS)."
        )
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            + Markup.text("title", title) + "\n<style>\(style)</style>\n</head>\n<body>\n" + body
            + "\n</body>\n</html>\n"
    }

    static let style = """
        body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;color:#1f2328;background:#fff;max-width:960px;\
        margin:24px auto;padding:0 16px;font-size:14px}
        h1{font-size:22px}h2{font-size:17px;margin-top:28px;break-after:avoid}
        .meta{color:#57606a}
        table{border-collapse:collapse;width:100%;font-size:12px;break-inside:auto}
        th,td{padding:3px 6px;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top}
        th{background:#f6f8fa}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
        tr{break-inside:avoid}figure{margin:16px 0;break-inside:avoid}figure svg{max-width:100%;height:auto}
        @page{size:A4;margin:14mm}
        @media print{body{margin:0;max-width:none;padding:0}}
        """

    static func section(_ title: String, _ content: String) -> String {
        "\n" + Markup.text("h2", title) + "\n" + content
    }

    static func figure(_ svg: String?) -> String {
        guard let svg else { return "" }
        return "\n<figure>" + inline(svg) + "</figure>"
    }

    /// A standalone SVG document as an element of the page: without its XML declaration.
    static func inline(_ svg: String) -> String {
        guard svg.hasPrefix("<?xml"), let end = svg.range(of: "?>") else { return svg }
        return String(svg[end.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func row(_ cells: [(String, Bool)], header: Bool = false) -> String {
        "<tr>"
            + cells.map { text, numeric in
                Markup.text(header ? "th" : "td", numeric ? [("class", "n")] : [], text)
            }.joined() + "</tr>\n"
    }

    static func table(_ list: [ScopeFigures], first: String) -> String {
        guard !list.isEmpty else { return Markup.text("p", "No data.") }
        var out = "<table>\n"
        out += row(
            [
                (first, false), ("Received", true), ("Sent", true), ("Avg in", true), ("Avg out", true),
                ("95th in", true), ("95th out", true), ("Peak in", true), ("Peak out", true), ("Coverage", true),
            ], header: true)
        for entry in list {
            let figures = entry.figures
            out += row([
                (entry.series.name, false), (TerminalText.bytes(figures.bytes.rx), true),
                (TerminalText.bytes(figures.bytes.tx), true), (TerminalText.rate(figures.average.rx), true),
                (TerminalText.rate(figures.average.tx), true), (TerminalText.rate(figures.p95.rx), true),
                (TerminalText.rate(figures.p95.tx), true), (TerminalText.rate(figures.peak.rx), true),
                (TerminalText.rate(figures.peak.tx), true), (TerminalText.percent(ppm: figures.coverage), true),
            ])
        }
        return out + "</table>"
    }

    static func hoursTable(_ report: Report) -> String {
        let hours = report.busiestHours(busiest)
        guard !hours.isEmpty else { return Markup.text("p", "No traffic in this period.") }
        var out = "<table>\n"
        out += row(
            [("#", true), ("Hour", false), ("Received", true), ("Sent", true), ("Avg in", true), ("Avg out", true)],
            header: true)
        for (index, hour) in hours.enumerated() {
            out += row([
                ("\(index + 1)", true), (report.calendar.localMinute(hour.window.from), false),
                (TerminalText.bytes(hour.values.traffic[.rxBytes]), true),
                (TerminalText.bytes(hour.values.traffic[.txBytes]), true), (TerminalText.rate(hour.average.rx), true),
                (TerminalText.rate(hour.average.tx), true),
            ])
        }
        return out + "</table>"
    }

    static func alertsTable(_ report: Report) -> String {
        guard !report.alerts.isEmpty else { return Markup.text("p", "No alert fired or resolved in this period.") }
        var out = "<table>\n"
        out += row(
            [("Time", false), ("Alert", false), ("Status", false), ("Severity", false), ("On", false)],
            header: true)
        for event in report.alerts {
            let target = ["host", "interface", "group"].compactMap { event.labels[$0] }.joined(separator: " ")
            out += row([
                (report.calendar.localText(event.at), false), (event.rule, false), (event.status.rawValue, false),
                (event.labels["severity"] ?? "", false), (target.isEmpty ? "the fleet" : target, false),
            ])
        }
        return out + "</table>"
    }

    static func completeness(_ report: Report) -> String {
        let missing = incomplete(report)
        guard let scope = report.scope else { return Markup.text("p", "The store has no data for this scope.") }
        var out = Markup.text(
            "p",
            "\(report.scopeLabel.capitalisedFirst) has data for \(TerminalText.percent(ppm: scope.figures.coverage)) of the period over \(scope.figures.members) counted interface\(scope.figures.members == 1 ? "" : "s"); "
                + (missing.isEmpty
                    ? "every host reported all of it."
                    : "\(missing.count) of \(report.hosts.count) hosts did not report all of it (gaps are missing data, never zero):")
        )
        guard !missing.isEmpty else { return out }
        out += "\n<table>\n" + row([("Host", false), ("Coverage", true)], header: true)
        for host in missing {
            out += row([(host.series.name, false), (TerminalText.percent(ppm: host.figures.coverage), true)])
        }
        return out + "</table>"
    }

    static func adjustmentsTable(_ report: Report) -> String {
        guard !report.adjustments.isEmpty else {
            return Markup.text("p", "No figure of an earlier report has changed since it was made.")
        }
        var out = Markup.text(
            "p",
            "Data that arrived late changed these figures of reports already made (rates in milli-bytes per second):")
        out += "\n<table>\n"
        out += row(
            [("Report", false), ("Series", false), ("Figure", false), ("Was", true), ("Now", true)], header: true)
        for item in report.adjustments {
            out += row([
                (item.report, false), (item.series, false), (item.field, false),
                (item.was.map { "\($0)" } ?? "none", true), (item.now.map { "\($0)" } ?? "none", true),
            ])
        }
        return out + "</table>"
    }
}

extension String {
    var capitalisedFirst: String { prefix(1).uppercased() + dropFirst() }
}
