import Testing

@testable import PulseCharts

/// `LinePlot` keeps its columns as given and, for a sorted series on linear or time scales, reduces it straight from
/// them; one `LineMark` per point goes through the general path. Both must draw the same line.
@Suite struct LinePlotTests {
    struct Case: CustomStringConvertible {
        var description: String
        var times: [ChartDate]
        var rates: [[Double]]
        var reduction: ChartDataReduction = .automatic
    }

    static let cases: [Case] = {
        var generator = SeededGenerator(seed: 5)
        let start = SampleData.start
        func times(_ n: Int, step: Double = 1) -> [ChartDate] { (0..<n).map { start.advanced(by: Double($0) * step) } }
        // A random walk with rare spikes: LTTB has real choices to make.
        func wave(_ n: Int, scale: Double) -> [Double] {
            var level = 1.0
            return (0..<n).map { _ in
                level = max(level + (generator.unit() - 0.5) * 0.1, 0.1)
                let spike: Double = generator.unit() < 0.001 ? 3 : 1
                return scale * level * spike
            }
        }
        var gaps = wave(20_000, scale: 4e7)
        for i in 5_000..<5_200 { gaps[i] = .nan }
        gaps[9_000] = .infinity
        gaps[15_000] = -.infinity
        var unsorted = times(3_000)
        unsorted.swapAt(10, 2_000)
        var badTimes = times(3_000)
        badTimes[100] = ChartDate(secondsSinceEpoch: .infinity)
        badTimes[200] = ChartDate(secondsSinceEpoch: .nan)
        return [
            Case(
                description: "long, four series", times: times(20_000),
                rates: (1...4).map { wave(20_000, scale: 1e7 * Double($0)) }),
            Case(
                description: "short", times: times(50, step: 60), rates: [wave(50, scale: 1e6), wave(50, scale: 2e6)]),
            Case(description: "gaps and infinities", times: times(20_000), rates: [gaps]),
            Case(
                description: "not reduced", times: times(2_000), rates: [wave(2_000, scale: 1e6)],
                reduction: .disabled),
            Case(description: "unsorted times", times: unsorted, rates: [wave(3_000, scale: 1e6)]),
            Case(description: "missing times", times: badTimes, rates: [wave(3_000, scale: 1e6)]),
        ]
    }()

    @Test(arguments: cases) func plotDrawsTheSameLineAsOneMarkPerPoint(_ c: Case) {
        let names = c.rates.indices.map { "eth\($0)" }
        let plotted = Chart {
            for (name, rates) in zip(names, c.rates) {
                LinePlot(x: .value("Time", c.times), y: .value("Rate", rates))
                    .foregroundStyle(by: .value("Interface", name))
            }
        }
        let samples = zip(names, c.rates).flatMap { name, rates in
            zip(c.times, rates).map { (time: $0, interface: name, rate: $1) }
        }
        let marked = Chart(samples) { sample in
            LineMark(x: .value("Time", sample.time), y: .value("Rate", sample.rate))
                .foregroundStyle(by: .value("Interface", sample.interface))
        }
        func paths(_ chart: Chart) -> [String] {
            let svg = chart.chartYAxis { AxisMarks(format: .bitsPerSecond) }.chartDataReduction(c.reduction)
                .frame(width: 600, height: 240).renderSVG()
            return SVGText.elements(svg, "path").filter { $0.contains("stroke-linejoin") }
                .map { SVGText.attribute("d", in: $0) ?? "" }
        }
        let expected = paths(marked)
        #expect(expected.count == c.rates.count)
        #expect(paths(plotted) == expected)
    }
}
