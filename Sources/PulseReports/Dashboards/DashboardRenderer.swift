import Foundation
import PulseAnalytics
import PulseCharts
import PulseCore
import PulseFormats
import PulseQuery

/// Draws dashboards as ``DashboardQuery`` read them: one SVG per dashboard and range.
///
/// Drawing is pure: the same ``DashboardData`` gives byte-identical SVG.
public struct DashboardRenderer: Sendable {
    /// The charts' colours: `.adaptive` (the default) follows the viewer's light or dark setting in browsers.
    public var theme: ChartTheme
    /// Each panel's width in pixels.
    public var cellWidth: Double
    /// Each panel's height in pixels.
    public var cellHeight: Double

    public init(theme: ChartTheme = .adaptive, cellWidth: Double = 560, cellHeight: Double = 280) {
        self.theme = theme
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
    }

    /// Draws a dashboard as read.
    public func render(_ data: DashboardData) -> RenderedDashboard {
        let spec = data.spec
        let read = data.panels
        let page = DashboardPage(
            title: "\(spec.title) — \(data.range.title.lowercasedFirst)",
            lines: [
                spec.description ?? "Traffic of \(read.members.label): \(spec.panels.count) panels.",
                Self.rangeLine(data), Self.coverageLine(read),
                "Rendered \(read.calendar.localText(data.now)) by Netpulse \(NetpulseVersion.string).",
            ],
            theme: theme,
            dashboard: Dashboard(
                title: nil, columns: spec.columns, cellWidth: cellWidth, cellHeight: cellHeight, theme: theme,
                charts: charts(read)))
        return RenderedDashboard(
            name: spec.name, fileStem: spec.fileStem, title: spec.title, range: data.range, window: read.window,
            resolution: read.level, coverage: read.figures?.coverage, renderedAt: data.now, svg: page.svg())
    }

    /// The page's line naming the range: its title, its ends in the store's time zone, and the bucket width.
    static func rangeLine(_ data: DashboardData) -> String {
        let window = data.panels.window
        let civil = data.panels.calendar
        return "\(data.range.title): \(civil.localMinute(window.from)) – \(civil.localMinute(window.to)) "
            + "(\(civil.name)), \(Units.formatDuration(data.panels.level.width)) buckets"
    }

    /// The page's line saying how much of the range has data (or that there is none yet).
    static func coverageLine(_ read: PanelsData) -> String {
        guard let figures = read.figures else { return "No data for \(read.members.label) in the store yet." }
        return
            "Data coverage \(percent(ppm: figures.coverage)) of \(read.members.label) (\(figures.members) counted interface\(figures.members == 1 ? "" : "s"), \(figures.bucketsWithData) of \(read.timeline.count) buckets with data); gaps are missing data, not zero."
    }

    /// Each panel's chart, in order, with its plot rectangle and scale domains as data attributes.
    func charts(_ read: PanelsData) -> [Chart] {
        let drawing = PanelDrawing(
            data: read, frame: ChartFrame(domain: read.timeline.domain, calendar: Self.chartCalendar(read.calendar)))
        // Each panel says where its plot is and what its scales span, for scripts (the live pages' is one).
        return read.panels.map { drawing.chart(for: $0.spec, $0.data).chartPlotAttributes(.visible) }
    }

    /// The calendar chart axes are read on: the store's time zone, daylight saving included; weeks start on
    /// Monday as in `docs/windows.md`.
    static func chartCalendar(_ calendar: CivilCalendar) -> ChartCalendar {
        let zone = calendar.timeZone
        if zone.identifier == "UTC" || zone.identifier == "GMT" { return .utc }
        return ChartCalendar(firstWeekday: .monday) { date in
            zone.secondsFromGMT(for: Date(timeIntervalSince1970: date.secondsSinceEpoch))
        }
    }

    /// Parts per million as a percentage with one decimal: `98.7%`.
    static func percent(ppm: Int64) -> String {
        FixedPoint.text(ppm / 1_000, places: 1) + "%"
    }
}

/// One rendered dashboard: the SVG and what it shows.
public struct RenderedDashboard: Sendable, Hashable {
    /// The dashboard's declared name.
    public var name: String
    /// The name made safe for files (``DashboardSpec/fileStem``).
    public var fileStem: String
    /// The dashboard's heading (without the range).
    public var title: String
    /// The range it was drawn for.
    public var range: DashboardRange
    /// The window drawn: whole buckets of `resolution`, ending at the last boundary before `renderedAt`.
    public var window: Window
    /// The level it was read at.
    public var resolution: RollupLevel
    /// The scope's data coverage over the window, parts per million; nil when the store has no such scope yet.
    public var coverage: Int64?
    /// The `now` it was rendered for (ms).
    public var renderedAt: Int64
    /// The standalone SVG document.
    public var svg: String

    /// `fleet-hour-20251123T140530Z.svg`: stem, range and the UTC stamp of `renderedAt`.
    public var fileName: String {
        "\(DashboardFiles.prefix(stem: fileStem, range: range))\(FileName.stamp(renderedAt)).svg"
    }

    /// `fleet-hour-latest.svg`: the symlink naming the newest file of this dashboard and range.
    public var latestName: String { DashboardFiles.latest(stem: fileStem, range: range) }
}

extension String {
    /// The string with its first character lowercased: `Last hour` → `last hour`.
    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
