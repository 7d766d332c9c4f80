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

    static func lineSeries(_ values: [String: [Double]]) -> [Series] {
        let times = (0..<BenchData.lineCount).map { ChartDate(secondsSinceEpoch: Double(BenchData.lineStart + $0 + 1)) }
        return BenchData.interfaces.compactMap { name in
            values[name].map { Series(name: name, times: times, rates: $0) }
        }
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

    /// (b) Twelve panels, each with download drawn up and upload drawn down.
    static func dashboard(_ panels: [(name: String, received: [Double], sent: [Double])]) -> Dashboard {
        let times = (0..<BenchData.panelCount).map {
            ChartDate(secondsSinceEpoch: Double(BenchData.panelStart + ($0 + 1) * 60))
        }
        let charts = panels.map { panel -> Chart in
            Chart {
                AreaPlot(x: .value("Time", times), y: .value("Rate", panel.received))
                    .foregroundStyle(by: .value("Direction", "Download"))
                AreaPlot(x: .value("Time", times), y: .value("Rate", panel.sent.map { -$0 }))
                    .foregroundStyle(by: .value("Direction", "Upload"))
            }
            .chartYAxis { AxisMarks(format: .bitsPerSecond) }
            .chartTitle(panel.name)
        }
        return Dashboard(title: "Fleet traffic", columns: 3, cellWidth: 400, cellHeight: 220, charts: charts)
    }
}
