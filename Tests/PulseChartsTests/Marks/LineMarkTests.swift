import PulseCharts
import Testing

@Suite struct LineMarkTests {
    @Test func seriesByInterfaceWithGap() {
        let chart = Chart(Fixtures.hourly()) { s in
            LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", s.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle("Hourly traffic")
        let svg = chart.renderSVG()
        Golden.check(svg, "line-series-gap")
        // The missing hours of eth1 split its line into two subpaths.
        let eth1 = SVGText.elements(svg, "path").first { $0.contains("<title>eth1</title>") }
        #expect(eth1.map { SVGText.count("M", inPathOf: $0) } == 2)
    }

    @Test func symbolsByInterface() {
        let chart = Chart(Fixtures.hourly()) { s in
            LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", s.interface))
                .symbol(by: .value("Interface", s.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        let svg = chart.renderSVG()
        Golden.check(svg, "line-symbols")
        // eth0 gets circles and eth1 squares, on the lines and in the legend.
        #expect(SVGText.elements(svg, "circle").count == 24 + 1)
        #expect(svg.contains("<rect x="))
    }

    @Test(arguments: [
        (InterpolationMethod.monotone, "monotone"), (.catmullRom, "catmull-rom"), (.stepStart, "step-start"),
        (.stepCenter, "step-center"), (.stepEnd, "step-end"),
    ])
    func interpolation(method: InterpolationMethod, name: String) {
        let values: [Double] = [3, 8, 2, 9, 9, 4, 6]
        let chart = Chart(Array(values.enumerated()), id: \.offset) { item in
            LineMark(x: .value("Index", item.offset), y: .value("Value", item.element))
                .interpolationMethod(method)
        }
        .frame(width: 320, height: 200)
        Golden.check(chart.renderSVG(), "line-interpolation-\(name)")
    }

    @Test func explicitSeriesAndDashes() {
        let chart = Chart {
            for (n, limit) in [40.0, 60].enumerated() {
                ForEach(0..<10, id: \.self) { i in
                    LineMark(
                        x: .value("Minute", i), y: .value("Load", limit + Double((i * (n + 3)) % 7)),
                        series: .value("Host", "host\(n)"))
                }
                .lineStyle(StrokeStyle(lineWidth: 1.5, dash: n == 0 ? [] : [5, 3]))
                .foregroundStyle(.gray)
            }
        }
        .chartYScale(domain: .automatic(includesZero: false))
        .frame(width: 360, height: 200)
        let svg = chart.renderSVG()
        Golden.check(svg, "line-series-dashed")
        #expect(svg.contains("stroke-dasharray=\"5 3\""))
    }
}
