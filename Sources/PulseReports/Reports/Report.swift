import PulseAnalytics
import PulseCharts
import PulseCore
import PulseQuery

/// Everything one report says (`docs/reports.md`): what ``ReportQuery`` read (the scope's figures, every group's
/// and host's, the top interfaces, each hour's traffic, the alert events of the period; its fields read through,
/// as `report.period`), the weekday × hour means, the charts, and what changed in earlier reports. Formats (HTML,
/// CSV, JSON) are drawn from this alone, so they always agree.
@dynamicMemberLookup
public struct Report: Sendable {
    /// What was read.
    public var data: ReportData
    /// The report's name in files: `day-2026-11-22`, `month-2026-11-site_fra1-…` (``FileName/safe(_:)``).
    public var name: String
    /// Mean rate (bit/s, in + out) by local weekday and hour over the period.
    public var heatmap: WeekdayHourBins
    /// Changes to the figures of earlier reports found by this run (and, for a report made again, the ones its
    /// first run found).
    public var adjustments: [ReportAdjustment]
    /// Charts, each a standalone SVG, drawn into the HTML.
    public var charts: [String]

    public subscript<Value>(dynamicMember field: KeyPath<ReportData, Value>) -> Value { data[keyPath: field] }

    /// The busiest hours, most bytes first (ties: the earlier hour).
    public func busiestHours(_ count: Int) -> [TrafficRow] {
        Array(
            data.hours.filter(\.values.hasData).sorted {
                let left = $0.values.traffic[.rxBytes] + $0.values.traffic[.txBytes]
                let right = $1.values.traffic[.rxBytes] + $1.values.traffic[.txBytes]
                return left != right ? left > right : $0.window.from < $1.window.from
            }.prefix(count))
    }

    /// The figures a later run compares to find adjustments: each scope's bytes and 95th percentiles.
    public var ledgerFigures: [String: [Int64?]] {
        var result = [String: [Int64?]]()
        for entry in [data.scope].compactMap({ $0 }) + data.groups + data.hosts {
            result[ReportQuery.ledgerKey(entry.series)] = ReportQuery.ledgerValues(entry.figures)
        }
        return result
    }
}

/// A figure of an earlier report that changed because data arrived after it was made.
public struct ReportAdjustment: Sendable, Hashable {
    /// The report that found it.
    public var foundBy: String
    /// The report whose figure changed.
    public var report: String
    /// `fleet`, `host:web-01`, `group:site=fra1`.
    public var series: String
    /// `rx_bytes`, `tx_bytes`, `rx_p95`, `tx_p95` (rates in milli-bytes per second).
    public var field: String
    public var was: Int64?
    public var now: Int64?
    /// The store revision the new value was read at.
    public var revision: Int64
}

/// Draws a report as ``ReportQuery`` read it: its charts, each a standalone SVG, and the weekday × hour means.
/// Pure: the same ``ReportData`` gives the same report.
public struct ReportBuilder: Sendable {
    public init() {}

    public func build(_ data: ReportData) -> Report {
        let chartCalendar = DashboardRenderer.chartCalendar(data.calendar)
        let heatmap = WeekdayHourBins(
            data.hours.compactMap { row -> (ChartDate, Double)? in
                guard row.values.hasData, let rx = row.average.rx, let tx = row.average.tx else { return nil }
                // Milli-bytes per second to bits per second.
                return (Timeline.date(row.window.from), Double(rx + tx) * 8 / 1_000)
            }, calendar: chartCalendar, aggregation: .mean
        ) { $0 }
        let renderer = DashboardRenderer(theme: .light, cellWidth: 900, cellHeight: 300)
        var charts = renderer.charts(data.panels).enumerated().map { index, chart in
            renderer.standalone(chart, idPrefix: "r\(index)")
        }
        let heatmapChart = PanelCharts.heatmap(
            title:
                "Busy hours of \(data.scopeLabel): mean rate in + out by weekday and hour, \(data.period.title(data.calendar).lowercasedFirst)",
            bins: heatmap, calendar: chartCalendar)
        charts.append(renderer.standalone(heatmapChart, idPrefix: "rh"))
        return Report(
            data: data, name: Self.name(data.period, group: data.group), heatmap: heatmap, adjustments: [],
            charts: charts)
    }

    /// `day-2026-11-22`, or `day-2026-11-22-site=fra1` for a group.
    public static func name(_ period: ReportPeriod, group: GroupKey?) -> String {
        let base = "\(period.kind.rawValue)-\(period.label)"
        return group.map { "\(base)-\(FileName.safe($0.description))" } ?? base
    }
}

extension DashboardRenderer {
    /// One chart as a standalone SVG document.
    func standalone(_ chart: Chart, idPrefix: String) -> String {
        Dashboard(columns: 1, cellWidth: cellWidth, cellHeight: cellHeight, theme: theme, charts: [chart])
            .renderSVG(idPrefix: idPrefix)
    }
}
