import PulseCharts
import Testing

@Suite struct ThemeAndDashboardTests {
    private func traffic() -> Chart {
        Chart(Fixtures.hourly()) { s in
            AreaMark(x: .value("Time", s.time), y: .value("Rate", s.bitsPerSecond))
                .foregroundStyle(by: .value("Interface", s.interface))
        }
        .chartYAxis { AxisMarks(format: .bitsPerSecond) }
        .chartTitle("Traffic")
        .frame(width: 420, height: 220)
    }

    @Test func darkTheme() {
        let svg = traffic().chartTheme(.dark).renderSVG()
        Golden.check(svg, "theme-dark")
        #expect(svg.contains("fill=\"#17171a\""))
        #expect(!svg.contains("<style>"))
    }

    @Test func adaptiveThemeFollowsColorScheme() {
        let svg = traffic().chartTheme(.adaptive).renderSVG()
        Golden.check(svg, "theme-adaptive")
        #expect(svg.contains("@media (prefers-color-scheme:dark)"))
        #expect(svg.contains("class=\"bg\"") && svg.contains(".bg{fill:#17171a}"))
        #expect(svg.contains("class=\"f0\"") && svg.contains(".f0{fill:#3a9ad9}"))
    }

    @Test func customThemeAndPalette() {
        var theme = ChartTheme.light
        theme.fontSize = 13
        theme.colors.palette = [Color(hex: 0x332288), Color(hex: 0x88CCEE)]
        let svg = traffic().chartTheme(theme).renderSVG()
        Golden.check(svg, "theme-custom")
        #expect(svg.contains("#332288") && svg.contains("#88ccee") && svg.contains("font-size=\"13\""))
    }

    @Test func dashboardOfFourPanels() {
        let dashboard = Dashboard(title: "Edge routers", columns: 2, cellWidth: 320, cellHeight: 200) {
            traffic().chartTitle("edge1")
            Chart(Fixtures.weekdaySales) { sale in
                BarMark(x: .value("Day", sale.day), y: .value("Sales", sale.count))
                    .foregroundStyle(by: .value("City", sale.city))
            }
            .chartTitle("Flows per day")
            Chart {
                SectorMark(angle: .value("Bytes", 3.0)).foregroundStyle(by: .value("Proto", "TCP"))
                SectorMark(angle: .value("Bytes", 1.0)).foregroundStyle(by: .value("Proto", "UDP"))
            }
            .chartTitle("Protocols")
            Chart { EmptyChartContent() }.chartTitle("Spare")
        }
        let svg = dashboard.renderSVG()
        Golden.check(svg, "dashboard")
        // One document with a nested <svg> per panel.
        #expect(svg.components(separatedBy: "<svg ").count == 6)
        // Each panel has its own ids, so clip paths never clash.
        #expect(svg.contains("id=\"pd0-clip\"") && svg.contains("id=\"pd1-clip\""))
        #expect(svg.contains("4 charts in 2 columns: edge1; Flows per day; Protocols; Spare."))
    }
}
