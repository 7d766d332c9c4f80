import PulseCharts
import Testing

/// Golden tests for the options not covered by the mark tests.
@Suite struct OptionTests {
    private func areas(_ stacking: MarkStackingMethod) -> Chart {
        Chart(SampleData.traffic(interfaces: ["eth0", "eth1", "eth2"], step: 3600, seed: 3)) { s in
            AreaMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond), stacking: stacking)
                .foregroundStyle(by: .value("Interface", s.interface))
                .opacity(stacking == .unstacked ? 0.45 : 1)
                .interpolationMethod(.monotone)
        }
        .frame(width: 420, height: 220)
    }

    @Test func streamGraphAndOverlappingAreas() {
        let center = areas(.center).renderSVG()
        Golden.check(center, "area-stacking-center")
        // Centred stacks straddle zero: the axis shows negative values.
        #expect(SVGText.texts(center).contains { $0.hasPrefix("-") })
        Golden.check(areas(.unstacked).renderSVG(), "area-stacking-unstacked")
    }

    @Test func reversedAndCategoryDomains() {
        let chart = Chart(Fixtures.weekdaySales) { sale in
            PointMark(x: .value("Sales", sale.count), y: .value("Day", sale.day))
                .symbol(.diamond)
                .symbolSize(60)
                .foregroundStyle(by: .value("City", sale.city))
        }
        .chartXScale(domain: .automatic(reversed: true))
        .chartYScale(domain: ["Fri", "Thu", "Wed", "Tue", "Mon"])
        .chartForegroundStyleScale(range: [Color(hex: 0x444444), Color(hex: 0xBB5566)])
        .frame(width: 360, height: 220)
        let svg = chart.renderSVG()
        Golden.check(svg, "options-reversed-categories")
        let dayLabels = SVGText.texts(svg).filter { ["Mon", "Tue", "Wed", "Thu", "Fri"].contains($0) }
        #expect(dayLabels == ["Fri", "Thu", "Wed", "Tue", "Mon"])
        #expect(svg.contains("#bb5566"))
    }

    @Test func fixedColourRampAndCalendarOffset() {
        let cells = (0..<24).map { hour in (hour, Double(hour * hour)) }
        let chart = Chart(cells, id: \.0) { cell in
            RectangleMark(x: .value("Hour", Fixtures.hour(Double(cell.0)), unit: .hour), y: .value("Row", "load"))
                .foregroundStyle(by: .value("Load", cell.1))
        }
        .chartForegroundStyleScale(domain: 0...1000, range: [.white, .red])
        .chartCalendar(ChartCalendar(utcOffsetSeconds: -5 * 3600))
        .chartXAxis { AxisMarks(values: .stride(by: .hour, count: 6)) }
        .chartTooltips(.hidden)
        .frame(width: 480, height: 140)
        let svg = chart.renderSVG()
        Golden.check(svg, "options-ramp-offset")
        // Local midnight at UTC-5 is 05:00 UTC, five hours after the data starts at the plot's left edge.
        let midnight = OptionTests.x(ofLabel: "00:00", in: svg) ?? 0
        let hourWidth = ((OptionTests.x(ofLabel: "06:00", in: svg) ?? 0) - midnight) / 6
        let clip = SVGText.elements(svg, "clipPath").first.flatMap { SVGText.attribute("x", in: $0) }.flatMap(
            Double.init)
        #expect(hourWidth > 10)
        #expect(abs(midnight - 5 * hourWidth - ((clip ?? 0) + 1)) < 0.05)
        #expect(SVGText.texts(svg).contains("1000"))
        #expect(!svg.contains("<title>Load"))
    }

    static func x(ofLabel label: String, in svg: String) -> Double? {
        SVGText.elements(svg, "text").first { $0.hasSuffix(">\(label)</text>") }
            .flatMap { SVGText.attribute("x", in: $0) }.flatMap(Double.init)
    }

    @Test func explicitAxisValuesAndVectorizedPoints() {
        let xs = (0..<200).map { Double($0) }
        let ys = xs.map { 50 + SampleData.sinApprox($0 / 15) * 40 }
        let chart = Chart {
            PointPlot(x: .value("Sample", xs), y: .value("Value", ys))
                .foregroundStyle(by: .value("Probe", "icmp"))
                .symbol(by: .value("Probe", "icmp"))
        }
        .chartXAxis { AxisMarks(values: .values([0, 50, 100, 150, 199])) }
        .chartYAxis { AxisMarks(format: .percent, values: .values([0.1, 50, 90])) }
        .frame(width: 420, height: 200)
        let svg = chart.renderSVG()
        Golden.check(svg, "options-explicit-values-points")
        #expect(SVGText.texts(svg).contains("199"))
        #expect(SVGText.elements(svg, "circle").count == 201)
    }
}
