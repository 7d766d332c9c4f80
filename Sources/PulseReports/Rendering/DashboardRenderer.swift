import Foundation
import PulseAnalytics
import PulseCharts
import PulseCore
import PulseQuery
import PulseStore

/// Draws dashboards from the store through a ``WindowEngine``: one SVG per dashboard and range.
///
/// Rendering reads the store (through the engine) and then draws in memory; it never writes. The same store
/// contents and `now` give byte-identical SVG.
public struct DashboardRenderer: Sendable {
    /// What the dashboards are read through: the store, its catalogue, levels, time zone and billing terms.
    public let engine: WindowEngine
    /// The charts' colours: `.adaptive` (the default) follows the viewer's light or dark setting in browsers.
    public var theme: ChartTheme
    /// Each panel's width in pixels.
    public var cellWidth: Double
    /// Each panel's height in pixels.
    public var cellHeight: Double

    /// A renderer over `engine`; build a new engine (and catalogue) for each round of renders so new hosts and
    /// interfaces appear.
    public init(engine: WindowEngine, theme: ChartTheme = .adaptive, cellWidth: Double = 560, cellHeight: Double = 280)
    {
        self.engine = engine
        self.theme = theme
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
    }

    /// Renders `spec` for `range` as of `now` (ms since the Unix epoch).
    ///
    /// Reads through the engine's store (async, off the ingest path); drawing is pure CPU.
    /// - Throws: ``DashboardError`` when the store keeps no rollup level for the whole range; errors of the store.
    public func render(_ spec: DashboardSpec, range: DashboardRange, now: Int64) async throws -> RenderedDashboard {
        // The page's coverage line and its ranked panels sum the same interfaces over the same range: once.
        let engine = self.engine.sharingSums()
        guard
            let level = Self.level(
                preferred: range.resolution, length: range.length, now: now, levels: engine.levels,
                requireKept: true)
        else {
            throw DashboardError(
                "dashboard '\(spec.name)', range \(range.name): the store keeps no rollup level for all of the last \(Units.formatDuration(range.length)) (levels: \(engine.levels.map { "\($0.level) kept \($0.keep.map(Units.formatDuration) ?? "for ever")" }.joined(separator: ", "))); keep a level at least that long in [retention]"
            )
        }
        let to = level.bucketStart(now)
        let length = (range.length + level.width - 1) / level.width * level.width
        let timeline = Timeline(from: to - length, to: to, level: level)
        let window = Window(from: timeline.from, to: timeline.to, name: range.name)
        let members = ScopeMembers(spec.scope, catalogue: engine.catalogue, window: window)
        var scopeValues = [BucketValues?](repeating: nil, count: timeline.count)
        var figures: WindowFigures?
        if let record = members.record {
            let buckets = try await engine.store.buckets(
                level: level, series: [record.id], from: timeline.from, to: timeline.to)
            scopeValues = timeline.values(buckets[record.id] ?? [])
            figures = try await engine.figures([record], window: window, now: now, resolution: level).first?.figures
        }
        let calendar = chartCalendar
        let reader = PanelReader(
            engine: engine, members: members, timeline: timeline, level: level, now: now,
            frame: ChartFrame(domain: timeline.domain, calendar: calendar), scopeValues: scopeValues)
        var charts = [Chart]()
        for panel in spec.panels { charts.append(try await reader.chart(for: panel)) }

        let civil = engine.calendar
        let rangeText =
            "\(range.title): \(civil.localMinute(window.from)) – \(civil.localMinute(window.to)) (\(civil.name)), "
            + "\(Units.formatDuration(level.width)) buckets"
        let coverageText: String
        if let figures {
            coverageText =
                "Data coverage \(Self.percent(ppm: figures.coverage)) of \(members.label) (\(figures.members) counted interface\(figures.members == 1 ? "" : "s"), \(figures.bucketsWithData) of \(timeline.count) buckets with data); gaps are missing data, not zero."
        } else {
            coverageText = "No data for \(members.label) in the store yet."
        }
        let description =
            spec.description
            ?? "Traffic of \(members.label): \(spec.panels.count) panels."
        let page = DashboardPage(
            title: "\(spec.title) — \(range.title.lowercasedFirst)",
            lines: [
                description, rangeText, coverageText,
                "Rendered \(civil.localText(now)) by Netpulse \(NetpulseVersion.string).",
            ],
            theme: theme,
            dashboard: Dashboard(
                title: nil, columns: spec.columns, cellWidth: cellWidth, cellHeight: cellHeight, theme: theme,
                charts: charts))
        return RenderedDashboard(
            name: spec.name, fileStem: spec.fileStem, title: spec.title, range: range, window: window,
            resolution: level, coverage: figures?.coverage, renderedAt: now, svg: page.svg())
    }

    /// The calendar chart axes are read on: the engine's time zone, daylight saving included; weeks start on
    /// Monday as in `docs/windows.md`.
    var chartCalendar: ChartCalendar { Self.chartCalendar(engine.calendar) }

    static func chartCalendar(_ calendar: CivilCalendar) -> ChartCalendar {
        let zone = calendar.timeZone
        if zone.identifier == "UTC" || zone.identifier == "GMT" { return .utc }
        return ChartCalendar(firstWeekday: .monday) { date in
            zone.secondsFromGMT(for: Date(timeIntervalSince1970: date.secondsSinceEpoch))
        }
    }

    /// The level to read `length` ms ending at the last boundary before `now` at: the coarsest kept level no
    /// coarser than `preferred`, else the finest kept one coarser than it. Without a level kept that long, the
    /// coarsest level (or nil when `requireKept`).
    static func level(
        preferred: RollupLevel, length: Int64, now: Int64, levels: [RetainedLevel], requireKept: Bool = false
    ) -> RollupLevel? {
        let kept = levels.filter { retained in
            retained.keep.map { retained.level.bucketStart(now) - length >= now - $0 } ?? true
        }.map(\.level)
        if let level = kept.filter({ $0 <= preferred }).max() ?? kept.filter({ $0 > preferred }).min() {
            return level
        }
        return requireKept ? nil : levels.map(\.level).max()
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

    /// A rendered dashboard (``DashboardRenderer/render(_:range:now:)`` makes them; tests and other renderers
    /// may too).
    public init(
        name: String, fileStem: String, title: String, range: DashboardRange, window: Window, resolution: RollupLevel,
        coverage: Int64?, renderedAt: Int64, svg: String
    ) {
        self.name = name
        self.fileStem = fileStem
        self.title = title
        self.range = range
        self.window = window
        self.resolution = resolution
        self.coverage = coverage
        self.renderedAt = renderedAt
        self.svg = svg
    }

    /// `fleet-hour-20251123T140530Z.svg`: stem, range and the UTC stamp of `renderedAt`.
    public var fileName: String {
        "\(DashboardFiles.prefix(stem: fileStem, range: range))\(FileName.stamp(renderedAt)).svg"
    }

    /// `fleet-hour-latest.svg`: the symlink naming the newest file of this dashboard and range.
    public var latestName: String { DashboardFiles.latest(stem: fileStem, range: range) }
}

/// A dashboard that cannot be drawn as configured: what was wrong and what to do.
public struct DashboardError: Error, Sendable, CustomStringConvertible {
    /// One line: what was wrong and what to do.
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

extension String {
    /// The string with its first character lowercased: `Last hour` → `last hour`.
    var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
