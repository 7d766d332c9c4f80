import PulseCharts
import TestSupport
import Testing

/// Odd but possible inputs still give a valid, non-blank SVG, and the description says what was left out.
@Suite struct DegenerateInputTests {
    static let cases: [(String, Chart)] = [
        (
            "tiny-frame",
            Chart(Fixtures.weekdaySales) { BarMark(x: .value("Day", $0.day), y: .value("N", $0.count)) }
                .chartTitle("A title far wider than the chart itself").frame(width: 40, height: 30)
        ),
        ("single-point", Chart { PointMark(x: .value("t", SampleData.start), y: .value("v", 5.0)) }),
        (
            "constant-values",
            Chart(0..<10) { LineMark(x: .value("i", $0), y: .value("v", 7.0)) }
                .chartYScale(domain: .automatic(includesZero: false))
        ),
        ("huge-values", Chart(0..<5) { LineMark(x: .value("i", $0), y: .value("v", Double($0) * 1e300)) }),
        ("tiny-values", Chart(0..<5) { LineMark(x: .value("i", $0), y: .value("v", Double($0) * 1e-12)) }),
        (
            "log-with-zero",
            Chart(0..<5) { PointMark(x: .value("i", $0), y: .value("v", Double($0) * 10)) }
                .chartYScale(type: .log)
        ),
        ("many-categories", Chart(0..<400) { BarMark(x: .value("Host", "host-\($0)"), y: .value("v", $0 % 17)) }),
        (
            "mixed-types",
            Chart {
                BarMark(x: .value("x", "a"), y: .value("v", 1.0))
                BarMark(x: .value("x", 2.0), y: .value("v", 3.0))
            }
        ),
        (
            "infinite",
            Chart {
                LineMark(x: .value("i", 1), y: .value("v", Double.infinity))
                LineMark(x: .value("i", 2), y: .value("v", 4.0))
            }
        ),
        (
            "decades",
            Chart(0..<3) {
                LineMark(
                    x: .value("t", ChartDate(year: 1990 + $0 * 20, month: 1, day: 1)),
                    y: .value("v", $0))
            }
        ),
        ("one-sector", Chart { SectorMark(angle: .value("v", 1.0), innerRadius: .ratio(0.5)) }),
        ("zero-sectors", Chart { SectorMark(angle: .value("v", 0.0)) }),
    ]

    @Test(arguments: 0..<cases.count)
    func rendersValidSVG(index: Int) {
        let (name, chart) = DegenerateInputTests.cases[index]
        SVGCheck.validate(chart.renderSVG(), name: "degenerate-\(name)")
    }

    @Test func descriptionSaysWhatWasLeftOut() {
        let log = DegenerateInputTests.cases.first { $0.0 == "log-with-zero" }?.1.renderSVG() ?? ""
        #expect(log.contains("Values of zero or below cannot be drawn on a log scale and were left out."))
        let mixed = DegenerateInputTests.cases.first { $0.0 == "mixed-types" }?.1.renderSVG() ?? ""
        #expect(mixed.contains("Some x values were not categories and were left out."))
    }
}
