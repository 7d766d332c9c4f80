import PulseCharts
import Testing

@Suite struct AxisAndLegendTests {
    private var lines: Chart {
        Chart(Fixtures.hourly()) { s in
            LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", s.interface))
        }
    }

    @Test func customAxisMarksTrailingAndTop() {
        let chart =
            lines
            .chartXAxis {
                AxisMarks(position: .top, values: .stride(by: .hour, count: 4)) { value in
                    AxisGridLine(stroke: StrokeStyle(lineWidth: 1, dash: [2, 2]))
                    AxisTick(length: 6)
                    if let index = Optional(value.index), index % 2 == 0 {
                        AxisValueLabel(format: DateFormat("HH'h'"))
                    }
                }
            }
            .chartYAxis {
                AxisMarks(format: .iecBytesPerSecond, position: .trailing, values: .automatic(desiredCount: 3))
            }
            .chartLegend(position: .top)
            .frame(width: 480, height: 240)
        let svg = chart.renderSVG()
        Golden.check(svg, "axis-custom")
        #expect(SVGText.texts(svg).contains("08h"))
        #expect(!SVGText.texts(svg).contains("04h"))
        #expect(SVGText.texts(svg).contains { $0.hasSuffix("MiB/s") })
    }

    @Test func hiddenAxesAndLegend() {
        let svg = lines.chartXAxis(.hidden).chartYAxis(.hidden).chartLegend(.hidden)
            .chartPlotStyle { $0.background(Color.gray.opacity(0.1)).border(.gray) }
            .frame(width: 300, height: 120).renderSVG()
        Golden.check(svg, "axis-hidden")
        #expect(!svg.contains("x-axis") && !svg.contains("y-axis") && !svg.contains("class=\"legend\""))
    }

    @Test func explicitDomainsAndAxisTitles() {
        let chart =
            lines
            .chartXScale(domain: Fixtures.hour(6)...Fixtures.hour(18))
            .chartYScale(domain: 0...100e6)
            .chartYAxis { AxisMarks(format: .bitsPerSecond, values: .stride(by: 25e6)) }
            .chartXAxisLabel("Time (UTC)")
            .chartYAxisLabel("Receive rate")
            .frame(width: 480, height: 260)
        let svg = chart.renderSVG()
        Golden.check(svg, "axis-explicit-domain")
        #expect(SVGText.texts(svg).contains("100 Mbit/s"))
        #expect(SVGText.texts(svg).contains("Receive rate"))
    }

    @Test func symbolLegendMergedWithColours() {
        let chart = Chart(Fixtures.weekdaySales) { sale in
            PointMark(x: .value("Day", sale.day), y: .value("Sales", sale.count))
                .foregroundStyle(by: .value("City", sale.city))
                .symbol(by: .value("City", sale.city))
        }
        .chartSymbolScale(["Graz": .diamond, "Lyon": .triangle])
        .frame(width: 320, height: 200)
        let svg = chart.renderSVG()
        Golden.check(svg, "legend-symbols")
        let legend = SVGText.elements(svg, "g").first { $0.hasPrefix("<g class=\"legend\"") } ?? ""
        #expect(SVGText.texts(legend) == ["Lyon", "Graz"])
    }

    @Test func manySeriesWrapLegendRows() {
        let names = (1...12).map { "interface-\($0)" }
        let chart = Chart(SampleData.traffic(interfaces: names, step: 7200)) { s in
            LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", s.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 420, height: 300)
        let svg = chart.renderSVG()
        Golden.check(svg, "legend-wrapped")
        #expect(svg.contains("12 Interface values"))
    }
}
