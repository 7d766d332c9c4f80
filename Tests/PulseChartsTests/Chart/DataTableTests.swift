import PulseCharts
import Testing

/// What a page's script and a panel's export read from a chart: the values it draws, and where its plot is.
@Suite struct DataTableTests {
    static let times = (0..<4).map { ChartDate(secondsSinceEpoch: 1_800_000_000 + Double($0) * 60) }

    /// A mirrored throughput chart as the dashboards draw it: areas, and points marking their lone values.
    static func throughput() -> Chart {
        let received: [Double?] = [10, nil, 30, 40]
        let sent: [Double?] = [-5, nil, -7, nil]
        return Chart {
            AreaPlot(x: .value("Time", times), y: .value("Received", received))
                .foregroundStyle(by: .value("Direction", "Download"))
            AreaPlot(x: .value("Time", times), y: .value("Sent", sent))
                .foregroundStyle(by: .value("Direction", "Upload"))
            PointPlot(x: .value("Time", times), y: .value("Sent", [nil, nil, -7, nil]))
                .foregroundStyle(by: .value("Direction", "Upload"))
        }
        .chartXScale(domain: times[0]...times[3])
        .frame(width: 400, height: 200)
    }

    @Test func theTableHoldsEachValueDrawnOnceWithItsSeriesAndMeasure() {
        let table = Self.throughput().dataTable()
        #expect(table.columns == ["Direction", "Time", "Value", "Measure"])
        #expect(table.stacked)
        // Eight values (two series of four instants), gaps kept as missing; the point marking a lone upload value
        // is that value, not a ninth row.
        #expect(table.rows.count == 8)
        #expect(table.rows[0] == [.text("Download"), .date(Self.times[0]), .number(10), .text("Received")])
        #expect(table.rows[1][2] == .missing)
        #expect(table.rows[6] == [.text("Upload"), .date(Self.times[2]), .number(-7), .text("Sent")])
    }

    @Test func barsOfCategoriesNameTheirCategory() {
        let chart = Chart {
            BarMark(x: .value("Host", "a<b&c"), y: .value("Bytes", 12))
            BarMark(x: .value("Host", "=1+1"), y: .value("Bytes", 3))
        }
        let table = chart.dataTable()
        #expect(table.columns == ["Series", "Host", "Bytes"])
        #expect(table.rows.map { $0[1] } == [.text("a<b&c"), .text("=1+1")])
        #expect(table.rows.map { $0[2] } == [.number(12), .number(3)])
    }

    /// The plot rectangle and domains on the root element map data to the pixels the marks were drawn at: the
    /// first value's point (a lone value of a line) sits where the attributes say.
    @Test func plotAttributesMapDataToThePixelsDrawn() throws {
        let plain = Self.throughput().renderSVG()
        #expect(!plain.contains("data-plot"))
        let adaptive = Self.throughput().chartTheme(.adaptive).chartPlotAttributes(.visible)
        #expect(adaptive.renderSVG().contains("<style"))
        let svg = adaptive.renderSVG(idPrefix: "t", styleSheet: false)
        let root = String(svg.prefix { $0 != ">" })
        func attribute(_ name: String) throws -> [Double] {
            let range = try #require(root.firstRange(of: " \(name)=\""))
            return root[range.upperBound...].prefix { $0 != "\"" }.split(separator: " ").compactMap { Double($0) }
        }
        let plot = try attribute("data-plot")
        let x = try attribute("data-x-domain")
        let y = try attribute("data-y-domain")
        #expect(plot.count == 4 && x == [1_800_000_000, 1_800_000_180] && y.count == 2)
        #expect(root.contains("data-x-scale=\"time\"") && root.contains("data-y-scale=\"linear\""))
        // The lone upload value (-7 at the third instant) is drawn as a circle at these coordinates.
        let cx = plot[0] + (Self.times[2].secondsSinceEpoch - x[0]) / (x[1] - x[0]) * plot[2]
        let cy = plot[1] + plot[3] - (-7 - y[0]) / (y[1] - y[0]) * plot[3]
        let circle = try #require(svg.firstRange(of: "<circle ")).upperBound
        let tag = svg[circle...].prefix { $0 != ">" }
        func drawn(_ name: String) -> Double? {
            guard let range = tag.firstRange(of: "\(name)=\"") else { return nil }
            return Double(tag[range.upperBound...].prefix { $0 != "\"" })
        }
        #expect(abs((drawn("cx") ?? .nan) - cx) < 0.01 && abs((drawn("cy") ?? .nan) - cy) < 0.01)
        // Drawn for a page that brings the dark colours in its own style sheet: no <style> inside.
        #expect(!svg.contains("<style"))
    }
}
