import TestSupport
import Testing

@testable import PulseCharts

@Suite struct ReductionAndBinsTests {
    @Test func lttbKeepsEndsAndPeaks() {
        var g = SeededGenerator(seed: 99)
        let n = 20_000
        let xs = (0..<n).map(Double.init)
        var ys = (0..<n).map { _ in g.unit() }
        ys[12_345] = 50
        ys[777] = -40
        let kept = xs.withUnsafeBufferPointer { xp in
            ys.withUnsafeBufferPointer { yp in LargestTriangleThreeBuckets.select(xs: xp, ys: yp, threshold: 500) }
        }
        #expect(kept.count == 500)
        #expect(kept.first == 0 && kept.last == n - 1)
        #expect(kept.contains(12_345) && kept.contains(777))
        #expect(zip(kept, kept.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func longLinesAreReducedToAboutThePlotWidth() {
        let n = 30_000
        let times = (0..<n).map { SampleData.start.advanced(by: Double($0)) }
        var rates = (0..<n).map { 1e6 + Double($0 % 97) * 1e4 }
        rates[20_000] = 9e6
        let chart = Chart {
            LinePlot(x: .value("Time", times), y: .value("Rate", rates))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 500, height: 200)
        let svg = chart.renderSVG()
        SVGCheck.validate(svg, name: "lttb-long-line")
        let path = SVGText.elements(svg, "path").first { $0.contains("stroke-linejoin") } ?? ""
        let points = (SVGText.attribute("d", in: path) ?? "").split(separator: " ").count / 2
        #expect(points > 300 && points <= 500)
        #expect(svg.utf8.count < 20_000)
        // The spike survives the reduction: the reduced line reaches as high as the full one.
        let full = chart.chartDataReduction(.disabled).renderSVG()
        #expect(full.utf8.count > svg.utf8.count * 20)
        #expect(highest(svg) == highest(full))
        #expect(highest(svg) < 60)
    }

    /// The smallest y coordinate (the highest point) of the line's path.
    private func highest(_ svg: String) -> Double {
        let path = SVGText.elements(svg, "path").first { $0.contains("stroke-linejoin") } ?? ""
        let numbers = (SVGText.attribute("d", in: path) ?? "")
            .split(whereSeparator: { $0 == " " || $0 == "M" || $0 == "L" }).compactMap { Double($0) }
        return stride(from: 1, to: numbers.count, by: 2).map { numbers[$0] }.min() ?? .infinity
    }

    @Test func weekdayHourBinsStartOnTheFirstWeekdayAndKeepEmptyDays() {
        let samples: [(ChartDate, Double)] = [
            (ChartDate(year: 2025, month: 3, day: 3, hour: 9, minute: 15), 10),  // Monday
            (ChartDate(year: 2025, month: 3, day: 3, hour: 9, minute: 45), 30),  // Monday
            (ChartDate(year: 2025, month: 3, day: 9, hour: 23), 5),  // Sunday
        ]
        let monday = WeekdayHourBins(samples, aggregation: .mean) { $0 }
        #expect(monday.cells.count == 168)
        #expect(monday.weekdays.first == .monday)
        #expect(monday.cells[9].value == 20 && monday.cells[9].count == 2 && monday.cells[9].weekdayName == "Mon")
        #expect(monday.cells[6 * 24 + 23].value == 5)
        #expect(monday.cells[2 * 24 + 9].value == 0 && monday.cells[2 * 24 + 9].count == 0)

        let sunday = WeekdayHourBins(samples, calendar: ChartCalendar(firstWeekday: .sunday), aggregation: .sum) { $0 }
        #expect(sunday.weekdays.map(\.shortName) == ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"])
        #expect(sunday.cells[23].value == 5)
        #expect(sunday.cells[24 + 9].value == 40)
        let totals = sunday.weekdayTotals
        #expect(totals.map(\.value) == [5, 40, 0, 0, 0, 0, 0])

        // The same instants in UTC+10 fall on other days and hours.
        let sydney = WeekdayHourBins(samples, calendar: ChartCalendar(utcOffsetSeconds: 36_000), aggregation: .count) {
            $0
        }
        #expect(sydney.cells[19].value == 2)
        #expect(sydney.cells[9].value == 1)
    }
}
