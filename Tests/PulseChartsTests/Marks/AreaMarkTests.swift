import PulseCharts
import Testing

@Suite struct AreaMarkTests {
    @Test func stackedSeries() {
        let chart = Chart(SampleData.traffic(interfaces: ["eth0", "eth1", "wg0"], step: 1800)) { s in
            AreaMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", s.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 480, height: 240)
        Golden.check(chart.renderSVG(), "area-stacked")
    }

    @Test func bandBehindLine() {
        let hours = Array(0..<24)
        let chart = Chart {
            ForEach(hours, id: \.self) { h in
                let mid = 50 + SampleData.sinApprox(Double(h) / 4) * 20
                AreaMark(
                    x: .value("Hour", h), yStart: .value("Min", mid - 8 - Double(h % 3)),
                    yEnd: .value("Max", mid + 10 + Double(h % 4))
                )
                .foregroundStyle(.blue)
                .opacity(0.25)
                LineMark(x: .value("Hour", h), y: .value("Mean", mid))
                    .foregroundStyle(.blue)
            }
        }
        .chartYScale(domain: .automatic(includesZero: false))
        .frame(width: 420, height: 220)
        let svg = chart.renderSVG()
        Golden.check(svg, "area-band")
        #expect(svg.contains("fill-opacity=\"0.25\""))
    }

    @Test func downloadUpAndUploadDown() {
        let samples = SampleData.traffic(interfaces: ["eth0"], step: 900)
        let times = samples.map(\.time)
        let received = samples.map { $0.bitsPerSecond ?? 0 }
        let sent = received.map { -$0 * 0.35 }
        let chart = Chart {
            AreaPlot(x: .value("Time", times), y: .value("Rate", received))
                .foregroundStyle(by: .value("Direction", "Download"))
            AreaPlot(x: .value("Time", times), y: .value("Rate", sent))
                .foregroundStyle(by: .value("Direction", "Upload"))
            RuleMark(y: .value("Zero", 0.0)).foregroundStyle(.gray).lineStyle(StrokeStyle(lineWidth: 1))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 480, height: 240)
        let svg = chart.renderSVG()
        Golden.check(svg, "area-mirrored")
        #expect(SVGText.texts(svg).contains { $0.hasPrefix("-") && $0.hasSuffix("Mbit/s") })
    }
}
