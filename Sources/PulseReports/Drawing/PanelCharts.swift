import PulseCharts
import PulseQuery

/// A named series of rates per slot (bits per second), received and sent; nil is a gap.
struct DirectionSeries: Sendable {
    var name: String
    var received: [Double?]
    var sent: [Double?]
}

/// A named series of one value per slot; nil is a gap.
struct ValueSeries: Sendable {
    var name: String
    var values: [Double?]
}

/// A bar of a ranked list: a name and its values, and whether it is the "other" bar summing the rest.
struct RankedBar: Sendable {
    var name: String
    var received: Double
    var sent: Double
    var isOther = false

    var total: Double { received + sent }
}

/// The charts of the panels, from values already read: pure, so the same values always give the same SVG.
enum PanelCharts {
    /// Rates of two directions, received drawn up and sent mirrored down, on one scale.
    static let mirroredBits = ValueFormat.custom { ValueFormat.bitsPerSecond.format(abs($0)) }

    /// The values with a gap on both sides (or at an end): a line or area needs two points, so these are drawn
    /// as points, or the first minutes of a new host and every lone bucket between outages would not show.
    static func isolated(_ values: [Double?]) -> [Double?] {
        values.indices.map { index in
            let before = index > 0 ? values[index - 1] : nil
            let after = index + 1 < values.count ? values[index + 1] : nil
            return before == nil && after == nil ? values[index] : nil
        }
    }

    /// Download (received) up, upload (sent) down, as areas.
    static func throughput(
        title: String, times: [ChartDate], received: [Double?], sent: [Double?], frame: ChartFrame
    ) -> Chart {
        let down = sent.map { $0.map { -$0 } }
        return Chart {
            AreaPlot(x: .value("Time", times), y: .value("Received", received))
                .foregroundStyle(by: .value("Direction", "Download (received)"))
            AreaPlot(x: .value("Time", times), y: .value("Sent", down))
                .foregroundStyle(by: .value("Direction", "Upload (sent)"))
            PointPlot(x: .value("Time", times), y: .value("Received", isolated(received)))
                .foregroundStyle(by: .value("Direction", "Download (received)"))
            PointPlot(x: .value("Time", times), y: .value("Sent", isolated(down)))
                .foregroundStyle(by: .value("Direction", "Upload (sent)"))
        }
        .timeAxis(frame)
        .chartYAxis { AxisMarks(format: mirroredBits) }
        .chartTitle(title)
    }

    /// Each series' received rate stacked up and sent rate stacked down, one colour per series.
    static func stackedTraffic(
        title: String, seriesLabel: String, times: [ChartDate], series: [DirectionSeries], frame: ChartFrame
    ) -> Chart {
        Chart {
            ForEach(series, id: \.name) { item in
                AreaPlot(x: .value("Time", times), y: .value("Received", item.received))
                    .foregroundStyle(by: .value(seriesLabel, item.name))
            }
            ForEach(series, id: \.name) { item in
                AreaPlot(x: .value("Time", times), y: .value("Sent", item.sent.map { $0.map { -$0 } }))
                    .foregroundStyle(by: .value(seriesLabel, item.name))
            }
        }
        .timeAxis(frame)
        .chartYAxis { AxisMarks(format: mirroredBits) }
        .chartTitle(title)
    }

    /// Lines of one value per slot, one colour per series, with the y axis in `format`.
    static func lines(
        title: String, seriesLabel: String, valueLabel: String, times: [ChartDate], series: [ValueSeries],
        format: ValueFormat, yDomain: ClosedRange<Double>? = nil, frame: ChartFrame
    ) -> Chart {
        var chart = Chart {
            ForEach(series, id: \.name) { item in
                LinePlot(x: .value("Time", times), y: .value(valueLabel, item.values))
                    .foregroundStyle(by: .value(seriesLabel, item.name))
                PointPlot(x: .value("Time", times), y: .value(valueLabel, isolated(item.values)))
                    .foregroundStyle(by: .value(seriesLabel, item.name))
            }
        }
        .timeAxis(frame)
        .chartYAxis { AxisMarks(format: format) }
        .chartTitle(title)
        if let yDomain { chart = chart.chartYScale(domain: yDomain) }
        return chart
    }

    /// Horizontal bars of received and sent bytes, largest first, each labelled with its total.
    static func topTalkers(title: String, categoryLabel: String, bars: [RankedBar]) -> Chart {
        Chart {
            ForEach(bars, id: \.name) { bar in
                BarMark(x: .value("Bytes", bar.received), y: .value(categoryLabel, bar.name))
                    .foregroundStyle(by: .value("Direction", "Received"))
                BarMark(x: .value("Bytes", bar.sent), y: .value(categoryLabel, bar.name))
                    .foregroundStyle(by: .value("Direction", "Sent"))
                    .annotation(position: .trailing) { Text(ValueFormat.bytes.format(bar.total)).font(size: 10) }
            }
        }
        .chartXAxis { AxisMarks(format: .bytes) }
        .chartXScale(domain: headroom(bars))
        .chartYScale(domain: bars.map(\.name))
        .chartTitle(title)
    }

    /// Horizontal bars of bills (bits per second), largest first, each labelled with its value.
    static func bills(title: String, categoryLabel: String, bars: [RankedBar]) -> Chart {
        Chart {
            ForEach(bars, id: \.name) { bar in
                BarMark(x: .value("95th percentile", bar.total), y: .value(categoryLabel, bar.name))
                    .foregroundStyle(bar.isOther ? Color.gray : Color.blue)
                    .annotation(position: .trailing) {
                        Text(ValueFormat.bitsPerSecond.format(bar.total)).font(size: 10)
                    }
            }
        }
        .chartXAxis { AxisMarks(format: .bitsPerSecond) }
        .chartXScale(domain: headroom(bars))
        .chartYScale(domain: bars.map(\.name))
        .chartTitle(title)
    }

    /// Room after the longest bar for its label: a fifth of the scale.
    static func headroom(_ bars: [RankedBar]) -> ClosedRange<Double> {
        0...max(bars.map(\.total).max() ?? 0, 1) * 1.25
    }

    /// Mean rates by weekday and hour as a heatmap; cells without data are left empty.
    static func heatmap(title: String, bins: WeekdayHourBins, calendar: ChartCalendar) -> Chart {
        let cells = bins.cells.filter { $0.count > 0 }
        let hours = (0..<24).map { $0 < 10 ? "0\($0)" : "\($0)" }
        let days = bins.weekdays.map { calendar.weekdaySymbols[$0.rawValue - 1] }
        return Chart {
            ForEach(cells, id: \.self) { cell in
                RectangleMark(x: .value("Hour", cell.hourLabel), y: .value("Day", cell.weekdayName))
                    .foregroundStyle(by: .value("Mean bit/s", cell.value))
                    .accessibilityLabel("\(cell.weekdayName) \(cell.hourLabel):00")
                    .accessibilityValue(ValueFormat.bitsPerSecond.format(cell.value))
            }
        }
        .chartXScale(domain: hours)
        .chartYScale(domain: days)
        .chartTitle(title)
    }

    /// 5-minute rates of both directions with the bill's 95th percentile as a dashed rule.
    static func percentile(
        title: String, times: [ChartDate], received: [Double?], sent: [Double?], bill: Double?, billLabel: String,
        frame: ChartFrame
    ) -> Chart {
        Chart {
            LinePlot(x: .value("Time", times), y: .value("Rate", received))
                .foregroundStyle(by: .value("Direction", "Received"))
            LinePlot(x: .value("Time", times), y: .value("Rate", sent))
                .foregroundStyle(by: .value("Direction", "Sent"))
            PointPlot(x: .value("Time", times), y: .value("Rate", isolated(received)))
                .foregroundStyle(by: .value("Direction", "Received"))
            PointPlot(x: .value("Time", times), y: .value("Rate", isolated(sent)))
                .foregroundStyle(by: .value("Direction", "Sent"))
            if let bill {
                RuleMark(y: .value("95th percentile", bill))
                    .foregroundStyle(.red)
                    .lineStyle(StrokeStyle(lineWidth: 1.5, dash: [5, 3]))
                    .accessibilityLabel(billLabel)
                    .annotation(position: .top, alignment: .leading) { Text(billLabel).font(size: 10) }
            }
        }
        .timeAxis(frame)
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle(title)
    }
}

/// What every time chart of a dashboard shares: the window it spans and the calendar its axis is read on.
struct ChartFrame: Sendable {
    var domain: ClosedRange<ChartDate>
    var calendar: ChartCalendar
}

extension Chart {
    /// A time x axis over the whole window (so gaps at its ends show), read on the dashboard's calendar.
    func timeAxis(_ frame: ChartFrame) -> Chart {
        chartXScale(domain: frame.domain).chartCalendar(frame.calendar)
    }
}
