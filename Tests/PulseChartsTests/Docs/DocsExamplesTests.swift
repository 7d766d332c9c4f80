import Foundation
import PulseCharts
import TestSupport
import Testing

/// The examples in docs/charts.md. Each test renders an example into docs/charts/NAME.svg (compared like a
/// golden file, rewritten with PULSECHARTS_REGENERATE=1) and checks that the code between its `docs:` markers
/// appears in docs/charts.md word for word, so the page and its pictures cannot drift from the code.
@Suite struct DocsExamplesTests {
    @Test func quickStart() throws {
        let samples = DocsData.rates()
        // docs: quick-start
        let chart = Chart(samples) { sample in
            LineMark(
                x: .value("Time", sample.time),
                y: .value("Rate", sample.bitsPerSecond)
            )
            .foregroundStyle(by: .value("Interface", sample.interface))
            .symbol(by: .value("Interface", sample.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle("Receive rate")
        .frame(width: 640, height: 280)

        let svg = chart.renderSVG()
        // end docs
        try DocsExamples.check(svg, "quick-start", snippet: "quick-start")
    }

    @Test func downloadAndUpload() throws {
        let samples = DocsData.directions()
        // docs: mirrored
        let chart = Chart(samples) { sample in
            AreaMark(x: .value("Time", sample.time), y: .value("Rate", sample.received))
                .foregroundStyle(by: .value("Direction", "Download"))
            AreaMark(x: .value("Time", sample.time), y: .value("Rate", -sample.sent))
                .foregroundStyle(by: .value("Direction", "Upload"))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle("eth0, download up, upload down")
        .frame(width: 640, height: 260)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "mirrored", snippet: "mirrored")
    }

    @Test func groupedBarsWithAnnotations() throws {
        let counts = DocsData.alertCounts()
        // docs: grouped-bars
        let chart = Chart(counts) { count in
            BarMark(x: .value("Day", count.day), y: .value("Alerts", count.alerts))
                .foregroundStyle(by: .value("Severity", count.severity))
                .position(by: .value("Severity", count.severity))
                .annotation(position: .top) { Text("\(count.alerts)").font(size: 9) }
        }
        .chartForegroundStyleScale(["Warning": .orange, "Critical": .red])
        .chartTitle("Alerts per weekday")
        .frame(width: 560, height: 260)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "grouped-bars", snippet: "grouped-bars")
    }

    @Test func topTalkers() throws {
        let talkers = DocsData.talkers()
        // docs: top-talkers
        let chart = Chart(talkers) { talker in
            BarMark(x: .value("Sent", talker.bytes), y: .value("Host", talker.host))
                .annotation(position: .trailing) { Text(ValueFormat.bytes.format(talker.bytes)) }
        }
        .chartXAxis { AxisMarks(format: .bytes) }
        .chartTitle("Top talkers today")
        .frame(width: 560, height: 240)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "top-talkers", snippet: "top-talkers")
    }

    @Test func thresholdsAndOutages() throws {
        let samples = DocsData.rates().filter { $0.interface == "eth0" }
        let outageStart = DocsData.day.advanced(by: 9 * 3600)
        let outageEnd = DocsData.day.advanced(by: 11 * 3600)
        let average = samples.compactMap(\.bitsPerSecond).reduce(0, +) / Double(samples.count)
        // docs: thresholds
        let chart = Chart {
            RectangleMark(xStart: .value("Start", outageStart), xEnd: .value("End", outageEnd))
                .foregroundStyle(.red)
                .accessibilityLabel("Outage")
            ForEach(samples, id: \.time) { sample in
                LineMark(x: .value("Time", sample.time), y: .value("Rate", sample.bitsPerSecond))
            }
            RuleMark(y: .value("Limit", 80e6))
                .foregroundStyle(.red)
                .lineStyle(StrokeStyle(lineWidth: 1, dash: [4, 3]))
                .annotation(position: .top, alignment: .leading) { Text("Link limit 80 Mbit/s") }
            RuleMark(y: .value("Average", average))
                .foregroundStyle(.gray)
                .annotation(position: .bottom, alignment: .trailing) { Text("average") }
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .frame(width: 640, height: 260)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "thresholds", snippet: "thresholds")
    }

    @Test func weekdayHourHeatmap() throws {
        let samples = DocsData.hourlyVolumes()
        // docs: heatmap
        // The daemon can pass the locale's first weekday: Weekday(foundationWeekday: Calendar.current.firstWeekday)
        let calendar = ChartCalendar(utcOffsetSeconds: 3600, firstWeekday: .sunday)
        let bins = WeekdayHourBins(samples, calendar: calendar, aggregation: .sum) { sample in
            (sample.time, sample.bytes)
        }
        let chart = Chart(bins.cells, id: \.self) { cell in
            RectangleMark(x: .value("Hour", cell.hourLabel), y: .value("Day", cell.weekdayName))
                .foregroundStyle(by: .value("Bytes", cell.value))
        }
        .chartTitle("When is the uplink busy?")
        .frame(width: 640, height: 260)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "heatmap", snippet: "heatmap")
    }

    @Test func donut() throws {
        let shares = DocsData.protocols()
        // docs: donut
        let chart = Chart(shares, id: \.name) { share in
            SectorMark(angle: .value("Bytes", share.bytes), innerRadius: .ratio(0.6), angularInset: 1.5)
                .foregroundStyle(by: .value("Protocol", share.name))
        }
        .chartLegend(position: .trailing)
        .chartTitle("Traffic by protocol")
        .frame(width: 420, height: 240)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "donut", snippet: "donut")
    }

    @Test func largeSeries() throws {
        let (times, rates) = DocsData.oneDayPerSecond()
        // docs: large
        let chart = Chart {
            LinePlot(x: .value("Time", times), y: .value("Rate", rates))
                .foregroundStyle(by: .value("Interface", "uplink"))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartLegend(.hidden)
        .chartTitle("uplink, one day at 1 s (86,400 points)")
        .frame(width: 640, height: 240)
        // end docs
        let svg = chart.renderSVG()
        #expect(svg.utf8.count < 25_000)
        try DocsExamples.check(svg, "large", snippet: "large")
    }

    @Test func dashboard() throws {
        let samples = DocsData.rates()
        // docs: dashboard
        let panels = ["eth0", "eth1", "wg0", "bond0"].map { name in
            Chart(samples.filter { $0.interface == name || name == "bond0" }) { sample in
                AreaMark(x: .value("Time", sample.time), y: .value("Rate", sample.bitsPerSecond))
                    .foregroundStyle(by: .value("Interface", sample.interface))
            }
            .chartYAxis { AxisMarks(format: .bitsPerSecond, values: .automatic(desiredCount: 3)) }
            .chartTitle(name)
        }
        let dashboard = Dashboard(title: "edge1", columns: 2, cellWidth: 320, cellHeight: 180, charts: panels)
        let svg = dashboard.renderSVG()
        // end docs
        try DocsExamples.check(svg, "dashboard", snippet: "dashboard")
    }

    @Test func adaptiveTheme() throws {
        let samples = DocsData.rates()
        // docs: adaptive
        let chart = Chart(samples) { sample in
            LineMark(x: .value("Time", sample.time), y: .value("Rate", sample.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", sample.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTheme(.adaptive)
        .frame(width: 640, height: 240)
        // end docs
        try DocsExamples.check(chart.renderSVG(), "adaptive", snippet: "adaptive")
        try DocsExamples.check(chart.chartTheme(.dark).renderSVG(), "dark", snippet: nil)
    }
}

/// Data for the documentation examples, made deterministically.
enum DocsData {
    static let day = ChartDate(year: 2025, month: 3, day: 4)

    static func rates() -> [RateSample] {
        SampleData.traffic(interfaces: ["eth0", "eth1", "wg0"], step: 1800, seed: 21).map { sample in
            var copy = sample
            if sample.interface == "wg0",
                (18...21).contains(Int((sample.time.secondsSinceEpoch - day.secondsSinceEpoch) / 1800))
            {
                copy.bitsPerSecond = nil
            }
            return copy
        }
    }

    struct DirectionSample {
        var time: ChartDate
        var received: Double
        var sent: Double
    }

    static func directions() -> [DirectionSample] {
        SampleData.traffic(interfaces: ["eth0"], step: 600, seed: 4).enumerated().map { index, sample in
            let received = sample.bitsPerSecond ?? 0
            return DirectionSample(
                time: sample.time, received: received,
                sent: received * (0.25 + 0.1 * SampleData.sinApprox(Double(index) / 9)))
        }
    }

    struct AlertCount {
        var day: String
        var severity: String
        var alerts: Int
    }

    static func alertCounts() -> [AlertCount] {
        let days = Weekday.ordered(startingAt: .monday).map(\.shortName)
        return ["Warning", "Critical"].flatMap { severity in
            days.enumerated().map { index, day in
                AlertCount(
                    day: day, severity: severity,
                    alerts: severity == "Warning" ? 4 + (index * 5) % 9 : (index * 3) % 4)
            }
        }
    }

    struct Talker {
        var host: String
        var bytes: Double
    }

    static func talkers() -> [Talker] {
        [
            Talker(host: "backup1", bytes: 412e9), Talker(host: "db2", bytes: 96.4e9),
            Talker(host: "web3", bytes: 31.2e9), Talker(host: "ci-runner", bytes: 18.9e9),
            Talker(host: "mail", bytes: 2.1e9),
        ]
    }

    struct Volume {
        var time: ChartDate
        var bytes: Double
    }

    static func hourlyVolumes() -> [Volume] {
        var generator = SeededGenerator(seed: 8)
        // Two weeks of hourly volumes; Saturday the 8th has no samples at all (the agent was down).
        return (0..<(14 * 24)).compactMap { hour in
            let time = day.advanced(by: Double(hour) * 3600)
            if (96..<120).contains(hour) { return nil }
            let hourOfDay = hour % 24
            let busy = (9...18).contains(hourOfDay) ? 8.0 : 1.0
            return Volume(time: time, bytes: busy * (1 + generator.unit()) * 1e9)
        }
    }

    struct ProtocolShare {
        var name: String
        var bytes: Double
    }

    static func protocols() -> [ProtocolShare] {
        [
            ProtocolShare(name: "HTTPS", bytes: 61e9), ProtocolShare(name: "QUIC", bytes: 22e9),
            ProtocolShare(name: "SSH", bytes: 6e9), ProtocolShare(name: "DNS", bytes: 1.5e9),
            ProtocolShare(name: "Other", bytes: 9.5e9),
        ]
    }

    static func oneDayPerSecond() -> ([ChartDate], [Double]) {
        var generator = SeededGenerator(seed: 86_400)
        var level = 40e6
        var times: [ChartDate] = []
        var rates: [Double] = []
        times.reserveCapacity(86_400)
        rates.reserveCapacity(86_400)
        for second in 0..<86_400 {
            level +=
                (generator.unit() - 0.5) * 2e6
                + (60e6 * (1.1 + SampleData.sinApprox(Double(second) / 13_750 - 2)) - level) * 0.001
            var rate = max(level, 0)
            if second % 21_600 == 7_000 { rate = 480e6 }
            times.append(day.advanced(by: Double(second)))
            rates.append(rate)
        }
        return (times, rates)
    }
}

enum DocsExamples {
    static let docs = Golden.testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs")

    static func check(
        _ svg: String, _ name: String, snippet: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        SVGCheck.validate(svg, name: "docs-" + name, sourceLocation: sourceLocation)
        Golden.compare(
            svg, with: docs.appendingPathComponent("charts").appendingPathComponent(name + ".svg"),
            sourceLocation: sourceLocation)
        guard let snippet else { return }
        let code = try self.snippet(snippet)
        let page = try String(contentsOf: docs.appendingPathComponent("charts.md"), encoding: .utf8)
        #expect(
            page.contains(code), "docs/charts.md does not contain the code of example \(snippet):\n\(code)",
            sourceLocation: sourceLocation)
        #expect(
            page.contains("charts/\(name).svg"), "docs/charts.md does not show charts/\(name).svg",
            sourceLocation: sourceLocation)
    }

    /// The lines between `// docs: NAME` and `// end docs` in this file, without their common indentation.
    static func snippet(_ name: String) throws -> String {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// docs: \(name)" }),
            let end = lines[start...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// end docs" })
        else { throw CocoaError(.fileReadCorruptFile) }
        let body = lines[(start + 1)..<end]
        let indent =
            body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return body.map { $0.count >= indent ? String($0.dropFirst(indent)) : "" }.joined(separator: "\n")
    }
}
