import PulseCharts

/// The charts the benchmark renders, built as the daemon would: from columns of samples read from the store.
enum BenchCharts {
    struct Sample {
        var time: ChartDate
        var interface: String
        var bitsPerSecond: Double
    }

    struct Series {
        var name: String
        var times: [ChartDate]
        var rates: [Double]
    }

    /// One series per interface, all over the table's instants.
    static func lineSeries(_ table: BenchTable) -> [Series] {
        table.series.map { Series(name: $0.name, times: table.times, rates: $0.values) }
    }

    static func lineSamples(_ series: [Series]) -> [Sample] {
        series.flatMap { s in
            zip(s.times, s.rates).map { Sample(time: $0, interface: s.name, bitsPerSecond: $1) }
        }
    }

    /// (a) One line chart of 86,400 points in each of four series, with the vectorized `LinePlot`.
    static func line(_ series: [Series]) -> Chart {
        Chart {
            for s in series {
                LinePlot(x: .value("Time", s.times), y: .value("Rate", s.rates))
                    .foregroundStyle(by: .value("Interface", s.name))
            }
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle("Traffic by interface, 1 s resolution")
        .frame(width: 880, height: 360)
    }

    /// The same chart with one `LineMark` per point, as `Chart(data) { ... }` is usually written.
    static func linePerPoint(_ samples: [Sample]) -> Chart {
        Chart(samples) { sample in
            LineMark(x: .value("Time", sample.time), y: .value("Rate", sample.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", sample.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle("Traffic by interface, 1 s resolution")
        .frame(width: 880, height: 360)
    }

    /// (b) Twelve panels, each with download (`rx`) drawn up and upload (`tx`) drawn down.
    static func dashboard(_ panels: [(title: String, table: BenchTable)]) -> Dashboard {
        Dashboard(
            title: "Fleet traffic", columns: 3, cellWidth: panelWidth, cellHeight: panelHeight,
            charts: panels.map { panel($0.title, $0.table) })
    }

    static let panelWidth = 400.0
    static let panelHeight = 220.0

    /// One panel of the dashboard; the dashboard sets its size.
    static func panel(_ title: String, _ table: BenchTable) -> Chart {
        let times = table.times
        let received = table.series.first { $0.name == "rx" }?.values ?? []
        let sent = table.series.first { $0.name == "tx" }?.values ?? []
        return Chart {
            AreaPlot(x: .value("Time", times), y: .value("Rate", received))
                .foregroundStyle(by: .value("Direction", "Download"))
            AreaPlot(x: .value("Time", times), y: .value("Rate", sent.map { -$0 }))
                .foregroundStyle(by: .value("Direction", "Upload"))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle(title)
    }
}
