import PulseAnalytics
import PulseCharts
import PulseCore
import PulseQuery

/// What an alert chart shows: the rule's figure around the event, read by ``AlertQuery/history(_:series:from:to:now:)``.
public struct AlertChartInput: Sendable {
    public var rule: AlertRule
    public var event: AlertEvent
    /// The phase the event started or ended: its times shade the pending and firing spans.
    public var phase: AlertPhase
    /// The series the alert is about, as people name it (`web-01 eth0`).
    public var seriesName: String
    public var level: RollupLevel
    public var points: [(start: Int64, value: Double?)]
    public var from: Int64
    public var to: Int64
    public var calendar: CivilCalendar

    public init(
        rule: AlertRule, event: AlertEvent, phase: AlertPhase, seriesName: String, level: RollupLevel,
        points: [(start: Int64, value: Double?)], from: Int64, to: Int64, calendar: CivilCalendar
    ) {
        self.rule = rule
        self.event = event
        self.phase = phase
        self.seriesName = seriesName
        self.level = level
        self.points = points
        self.from = from
        self.to = to
        self.calendar = calendar
    }
}

/// The chart an alert carries, written when it fires and when it resolves: the figure around the event, the fire
/// and clear thresholds as rules, the pending and firing spans shaded, and the value and time of the event marked.
/// Pure: the same input gives the same SVG.
public enum AlertChart {
    /// The span a chart covers for an event at `at`: at least `minimum` (an hour by default) back, and back to a
    /// little before the alert went pending, aligned to `level`.
    public static func span(for phase: AlertPhase, at: Int64, level: RollupLevel, minimum: Int64 = 3_600_000)
        -> (from: Int64, to: Int64)
    {
        let to = level.bucketStart(at) + level.width
        let lead = max(minimum, at - phase.activeSince + minimum / 4)
        return (level.bucketStart(to - lead), to)
    }

    /// `span` without the stretch before the series' first data, less a margin of 10 buckets (and at least 15
    /// buckets wide): a host that started reporting minutes ago gets a chart of those minutes, not an hour of
    /// emptiness with the event squeezed against the edge.
    public static func trimmed(
        _ span: (from: Int64, to: Int64), points: [(start: Int64, value: Double?)], level: RollupLevel
    ) -> (from: Int64, to: Int64) {
        guard let first = points.first(where: { $0.value != nil })?.start else { return span }
        let from = min(max(span.from, first - 10 * level.width), span.to - 15 * level.width)
        return (max(span.from, from), span.to)
    }

    public static func svg(_ input: AlertChartInput) -> String {
        let rule = input.rule
        let event = input.event
        let metric = rule.condition.metric
        // What is charted for rules whose figure has no history: the host's traffic (its larger direction).
        let charted: AlertMetric =
            metric == .billingP95 || metric == .absent || metric == .certificateExpiry ? .rate : metric
        let format: ValueFormat =
            switch charted.unit {
            case .bitsPerSecond: .bitsPerSecond
            case .percent: .custom { Units.fixed($0, significant: 3) + " %" }
            case .seconds, .none: .number
            }
        let times = input.points.map { Timeline.date(min($0.start + input.level.width / 2, input.to)) }
        let values = input.points.map(\.value)
        let domain = Timeline.date(input.from)...Timeline.date(max(input.to, input.from + 1))
        let pendingEnd = input.phase.firedAt ?? (event.status == .resolved ? event.at : input.to)
        let firingEnd = event.status == .resolved ? event.at : input.to
        let thresholds =
            metric == .absent || metric == .certificateExpiry ? [] : [rule.condition.threshold, rule.condition.clear]
        let top = max((values.compactMap { $0 } + thresholds).max() ?? 1, 1) * 1.2
        let bottom = min((values.compactMap { $0 } + thresholds).min() ?? 0, 0)
        let status = event.status.rawValue.uppercased()
        let marker =
            "\(status) \(event.value.map(metric.format) ?? "no data") at \(input.calendar.localMinute(event.at))"
        let figure = charted == .rate ? "rate (larger direction)" : charted.rawValue.replacingAll("_", with: " ")

        var chart = Chart {
            if input.phase.activeSince < pendingEnd {
                RectangleMark(
                    xStart: .value("Pending from", Timeline.date(max(input.phase.activeSince, input.from))),
                    xEnd: .value("Pending to", Timeline.date(min(pendingEnd, input.to)))
                )
                .foregroundStyle(.yellow).opacity(0.25)
                .accessibilityLabel("Pending")
            }
            if let firedAt = input.phase.firedAt, firedAt < firingEnd {
                RectangleMark(
                    xStart: .value("Firing from", Timeline.date(max(firedAt, input.from))),
                    xEnd: .value("Firing to", Timeline.date(min(firingEnd, input.to)))
                )
                .foregroundStyle(.red).opacity(0.18)
                .accessibilityLabel("Firing")
            }
            LinePlot(x: .value("Time", times), y: .value(figure, values))
                .foregroundStyle(.blue)
            PointPlot(x: .value("Time", times), y: .value(figure, PanelCharts.isolated(values)))
                .foregroundStyle(.blue)
            if metric != .absent {
                RuleMark(y: .value("Fire threshold", rule.condition.threshold))
                    .foregroundStyle(.red)
                    .lineStyle(StrokeStyle(lineWidth: 1.5, dash: [6, 3]))
                    .accessibilityLabel("Fire threshold \(metric.format(rule.condition.threshold))")
                    .annotation(position: .top, alignment: .leading) {
                        Text("fire \(rule.condition.comparison.rawValue) \(metric.format(rule.condition.threshold))")
                            .font(size: 10)
                    }
                if rule.condition.clear != rule.condition.threshold {
                    RuleMark(y: .value("Clear threshold", rule.condition.clear))
                        .foregroundStyle(.green)
                        .lineStyle(StrokeStyle(lineWidth: 1.5, dash: [2, 3]))
                        .accessibilityLabel("Clear threshold \(metric.format(rule.condition.clear))")
                        .annotation(position: .bottom, alignment: .leading) {
                            Text("clear \(metric.format(rule.condition.clear))").font(size: 10)
                        }
                }
            }
            if let value = event.value, metric != .absent, metric != .billingP95, metric != .certificateExpiry {
                PointMark(x: .value("Event", Timeline.date(event.at)), y: .value(figure, value))
                    .foregroundStyle(event.status == .resolved ? .green : .red)
                    .symbolSize(60)
                    .accessibilityLabel(marker)
                    .annotation(position: .top, alignment: .trailing) { Text(marker).font(size: 11) }
            } else {
                RuleMark(x: .value("Event", Timeline.date(event.at)))
                    .foregroundStyle(event.status == .resolved ? .green : .red)
                    .accessibilityLabel(marker)
                    .annotation(position: .top, alignment: .trailing) { Text(marker).font(size: 11) }
            }
        }
        .chartXScale(domain: domain)
        .chartCalendar(DashboardRenderer.chartCalendar(input.calendar))
        .chartYAxis { AxisMarks(format: format) }
        .chartTitle("\(figure), \(Units.formatDuration(input.level.width)) buckets")
        chart = chart.chartYScale(domain: bottom...top)

        let theme = ChartTheme.adaptive
        let civil = input.calendar
        let annotations = event.annotations.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let page = DashboardPage(
            title: "\(status): \(rule.name) — \(input.seriesName)",
            lines: [
                "Alert \(rule.name) (\(rule.severity)) on \(input.seriesName): \(rule.condition) over \(Units.formatDuration(rule.window)), for \(Units.formatDuration(rule.timing.pendingFor))\(rule.condition.clear != rule.condition.threshold && metric != .absent ? ", clears below \(metric.format(rule.condition.clear))" : "")\(rule.timing.keepFiringFor > 0 ? ", keeps firing for \(Units.formatDuration(rule.timing.keepFiringFor))" : "").",
                "\(marker) (\(civil.name)); pending since \(civil.localMinute(input.phase.activeSince))\(input.phase.firedAt.map { ", firing since \(civil.localMinute($0))" } ?? "").",
                "Shown: \(civil.localMinute(input.from)) – \(civil.localMinute(input.to)); yellow is pending, red is firing; gaps are missing data.",
            ] + annotations + ["Drawn by Netpulse \(NetpulseVersion.string); fingerprint \(event.fingerprint)."],
            theme: theme,
            dashboard: Dashboard(columns: 1, cellWidth: 900, cellHeight: 360, theme: theme, charts: [chart]))
        return page.svg()
    }
}
