import PulseCharts
import Testing

@Suite struct BarMarkTests {
    @Test func stackedByDefault() {
        let chart = Chart(Fixtures.weekdaySales) { sale in
            BarMark(x: .value("Day", sale.day), y: .value("Sales", sale.count))
                .foregroundStyle(by: .value("City", sale.city))
        }
        .frame(width: 400, height: 260)
        let svg = chart.renderSVG()
        Golden.check(svg, "bar-stacked")
        // Mon: Lyon 12 at the bottom, Graz 5 on top, so the Graz bar's bottom is the Lyon bar's top.
        let rects = SVGText.elements(svg, "rect").filter { $0.contains("<title>City: ") }
        #expect(rects.count == 10)
        let lyonMon = rects.first { $0.contains("City: Lyon, Day: Mon") }
        let grazMon = rects.first { $0.contains("City: Graz, Day: Mon") }
        if let lyonMon, let grazMon,
            let lyonY = SVGText.attribute("y", in: lyonMon).flatMap(Double.init),
            let grazY = SVGText.attribute("y", in: grazMon).flatMap(Double.init),
            let grazHeight = SVGText.attribute("height", in: grazMon).flatMap(Double.init)
        {
            #expect(abs(grazY + grazHeight - lyonY) < 0.02)
        } else {
            Issue.record("stacked bars not found")
        }
    }

    @Test func groupedWithPositionAndAnnotations() {
        let chart = Chart(Fixtures.weekdaySales) { sale in
            BarMark(x: .value("Day", sale.day), y: .value("Sales", sale.count))
                .foregroundStyle(by: .value("City", sale.city))
                .position(by: .value("City", sale.city))
                .annotation(position: .top) { Text("\(sale.count)").font(size: 9) }
        }
        .chartForegroundStyleScale(["Lyon": Color(hex: 0x7F3C8D), "Graz": Color(hex: 0x11A579)])
        .frame(width: 420, height: 260)
        let svg = chart.renderSVG()
        Golden.check(svg, "bar-grouped-annotated")
        #expect(svg.contains("#7f3c8d") && svg.contains("#11a579"))
        // One annotation per bar, drawn after the marks.
        let annotations = SVGText.elements(svg, "g").first { $0.hasPrefix("<g class=\"annotations\"") } ?? ""
        #expect(SVGText.texts(annotations) == ["12", "7", "15", "4", "9", "5", "11", "6", "13", "8"])
    }

    @Test func horizontal() {
        let chart = Chart(Fixtures.weekdaySales.filter { $0.city == "Lyon" }) { sale in
            BarMark(x: .value("Sales", sale.count), y: .value("Day", sale.day))
                .annotation(position: .trailing) { Text("\(sale.count)") }
                .cornerRadius(3)
        }
        .frame(width: 360, height: 220)
        let svg = chart.renderSVG()
        Golden.check(svg, "bar-horizontal")
        #expect(svg.contains("rx=\"3\""))
    }

    @Test func negativeValuesMirrorAroundZero() {
        let chart = Chart {
            ForEach(0..<8, id: \.self) { hour in
                BarMark(x: .value("Hour", "\(hour)h"), y: .value("Rate", Double(10 + hour * 3) * 1e6))
                    .foregroundStyle(by: .value("Direction", "Download"))
                BarMark(x: .value("Hour", "\(hour)h"), y: .value("Rate", -Double(4 + hour) * 1e6))
                    .foregroundStyle(by: .value("Direction", "Upload"))
            }
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 420, height: 260)
        let svg = chart.renderSVG()
        Golden.check(svg, "bar-negative")
        #expect(SVGText.texts(svg).contains("-20 Mbit/s"))
    }

    @Test func rangesOnATimeline() {
        struct Outage { var host: String; var start: Double; var end: Double }
        let outages = [
            Outage(host: "db1", start: 1, end: 3.5), Outage(host: "web1", start: 2, end: 2.5),
            Outage(host: "web2", start: 5, end: 9), Outage(host: "db1", start: 12, end: 13),
        ]
        let chart = Chart(outages, id: \.host) { outage in
            BarMark(
                xStart: .value("Start", Fixtures.hour(outage.start)),
                xEnd: .value("End", Fixtures.hour(outage.end)), y: .value("Host", outage.host))
        }
        .frame(width: 480, height: 180)
        Golden.check(chart.renderSVG(), "bar-ranges-timeline")
    }

    @Test func dailyBarsWithCalendarUnit() {
        let days = (0..<7).map { ChartDate(year: 2025, month: 3, day: 3 + $0, hour: 13) }
        let chart = Chart(Array(days.enumerated()), id: \.offset) { item in
            BarMark(x: .value("Day", item.element, unit: .day), y: .value("Volume", Double(item.offset + 2) * 1.5e9))
        }
        .chartYAxis { AxisMarks(format: .bytes) }
        .frame(width: 420, height: 220)
        let svg = chart.renderSVG()
        Golden.check(svg, "bar-daily-unit")
        #expect(svg.contains("Day: 2025-03-05"))
    }

    @Test func normalizedStacking() {
        let chart = Chart(Fixtures.weekdaySales) { sale in
            BarMark(x: .value("Day", sale.day), y: .value("Share", sale.count), stacking: .normalized)
                .foregroundStyle(by: .value("City", sale.city))
        }
        .chartYAxis { AxisMarks(format: .percent) }
        .frame(width: 400, height: 240)
        let svg = chart.renderSVG()
        Golden.check(svg, "bar-normalized")
        #expect(SVGText.texts(svg).contains("100%"))
    }
}
