import PulseCharts
import Testing

@Suite struct PointRuleRectangleSectorTests {
    @Test func scatterWithSymbolsOnLogScale() {
        var generator = SeededGenerator(seed: 11)
        let points = (0..<60).map { i -> (String, Double, Double) in
            let group = ["nyc", "fra", "sgp"][i % 3]
            return (group, 1 + generator.unit() * 99, pow10(1 + generator.unit() * 3))
        }
        let chart = Chart(Array(points.enumerated()), id: \.offset) { item in
            PointMark(x: .value("Loss", item.element.1), y: .value("Latency", item.element.2))
                .foregroundStyle(by: .value("Site", item.element.0))
                .symbol(by: .value("Site", item.element.0))
        }
        .chartYScale(type: .log)
        .chartXAxisLabel("Packet loss (‰)")
        .chartYAxisLabel("Latency (µs)")
        .frame(width: 420, height: 280)
        let svg = chart.renderSVG()
        Golden.check(svg, "point-log-symbols")
        #expect(SVGText.texts(svg).contains("1k"))
    }

    @Test func thresholdAndEventRules() {
        let chart = Chart {
            ForEach(Fixtures.hourly().filter { $0.interface == "eth0" }, id: \.time) { s in
                LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
            }
            RuleMark(y: .value("Limit", 40e6))
                .foregroundStyle(.red)
                .lineStyle(StrokeStyle(lineWidth: 1, dash: [4, 3]))
                .annotation(position: .top, alignment: .leading) { Text("Limit 40 Mbit/s").foregroundStyle(.red) }
            RuleMark(x: .value("Deploy", Fixtures.hour(15)))
                .foregroundStyle(.gray)
                .annotation(position: .topTrailing) { Text("deploy") }
            RuleMark(
                xStart: .value("From", Fixtures.hour(2)), xEnd: .value("To", Fixtures.hour(8)),
                y: .value("Average", 12e6)
            )
            .foregroundStyle(.green)
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 480, height: 240)
        let svg = chart.renderSVG()
        Golden.check(svg, "rule-threshold")
        #expect(SVGText.texts(svg).contains("Limit 40 Mbit/s"))
        // The y domain reaches the threshold even though no data does.
        #expect(SVGText.texts(svg).contains("40 Mbit/s"))
    }

    @Test func highlightedTimeRange() {
        let chart = Chart {
            RectangleMark(xStart: .value("Outage", Fixtures.hour(9)), xEnd: .value("Restored", Fixtures.hour(11)))
                .foregroundStyle(.red)
                .accessibilityLabel("Outage")
                .accessibilityValue("09:00 to 11:00")
            ForEach(Fixtures.hourly().filter { $0.interface == "eth1" }, id: \.time) { s in
                LineMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
            }
        }
        .frame(width: 420, height: 200)
        let svg = chart.renderSVG()
        Golden.check(svg, "rectangle-highlight")
        #expect(svg.contains("<title>Outage: 09:00 to 11:00</title>"))
        #expect(svg.contains("fill-opacity=\"0.18\""))
    }

    @Test func weekdayHourHeatmap() {
        // Traffic only on weekdays' working hours; the weekend has no samples at all.
        var samples: [(ChartDate, Double)] = []
        for day in 0..<5 {
            for hour in 8..<18 {
                samples.append(
                    (
                        ChartDate(year: 2025, month: 3, day: 3 + day, hour: hour, minute: 30),
                        Double((day + 1) * (hour - 7))
                    ))
            }
        }
        let bins = WeekdayHourBins(samples, calendar: ChartCalendar(firstWeekday: .sunday)) { $0 }
        let chart = Chart(bins.cells, id: \.self) { cell in
            RectangleMark(x: .value("Hour", cell.hourLabel), y: .value("Day", cell.weekdayName))
                .foregroundStyle(by: .value("Traffic", cell.value))
        }
        .frame(width: 560, height: 240)
        let svg = chart.renderSVG()
        Golden.check(svg, "rectangle-heatmap")
        #expect(SVGText.elements(svg, "rect").filter { $0.contains("<title>") }.count == 168)
        // A colour ramp legend from the smallest to the largest value, zero for the empty cells.
        let legend = SVGText.elements(svg, "g").first { $0.hasPrefix("<g class=\"legend\"") } ?? ""
        #expect(SVGText.texts(legend) == ["Traffic", "0", "50"])
        // Sunday first, as the calendar asks, and the empty weekend is drawn.
        let firstDay = SVGText.texts(svg).first { ["Sun", "Mon"].contains($0) }
        #expect(firstDay == "Sun")
    }

    @Test func pieAndDonut() {
        let shares = [("HTTPS", 62.0), ("SSH", 4.0), ("DNS", 9.0), ("Other", 25.0)]
        let pie = Chart(shares, id: \.0) { share in
            SectorMark(angle: .value("Traffic", share.1))
                .foregroundStyle(by: .value("Protocol", share.0))
        }
        .frame(width: 300, height: 240)
        Golden.check(pie.renderSVG(), "sector-pie")
        let donut = Chart(shares, id: \.0) { share in
            SectorMark(angle: .value("Traffic", share.1), innerRadius: .ratio(0.6), angularInset: 2)
                .foregroundStyle(by: .value("Protocol", share.0))
                .annotation(position: .overlay) { Text("\(Int(share.1))%").font(size: 9).foregroundStyle(.white) }
        }
        .chartLegend(position: .trailing)
        .frame(width: 340, height: 220)
        let svg = donut.renderSVG()
        Golden.check(svg, "sector-donut")
        #expect(SVGText.elements(svg, "path").filter { $0.contains("evenodd") }.count == 4)
        #expect(svg.contains("Donut chart"))
    }
}

func pow10(_ x: Double) -> Double {
    var result = 1.0
    var e = x
    while e >= 1 { result *= 10; e -= 1 }
    // 10^e for the fractional rest, by a short series of 2^(e·log2 10).
    return result * exp2Approx(e * 3.321928094887362)
}

private func exp2Approx(_ x: Double) -> Double {
    // exp(x·ln 2) by its Taylor series: good to 1e-12 for 0 ≤ x < 4.
    let y = x * 0.6931471805599453
    var term = 1.0
    var sum = 1.0
    for k in 1..<30 {
        term *= y / Double(k)
        sum += term
    }
    return sum
}
