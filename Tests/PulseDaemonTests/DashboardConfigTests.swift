import PulseAnalytics
import PulseCore
import PulseQuery
import PulseReports
import Testing

@testable import PulseDaemon
@testable import PulseSettings

@Suite struct DashboardConfigTests {
    @Test func declaredDashboardsAreReadWithTheirScopeAndPanels() throws {
        let text = """
            [dashboards]
            host_pages = false
            busy_share = 0.25
            [dashboard.edge]
            title = "Edge sites"
            scope = "group:site=fra1"
            panels = ["throughput", "top_hosts", "traffic_by_group:rack", "errors", "heatmap", "bills_groups"]
            columns = 3
            limit = 5
            [dashboard.db]
            scope = "host:db-01"
            panels = ["traffic_by_interface", "utilisation", "billing_p95", "top_interfaces"]
            """
        let settings = try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml")).dashboards
        #expect(settings.declared.map(\.name) == ["edge", "db"])
        #expect(settings.busyShare == 0.25)
        let edge = settings.declared[0]
        #expect(edge.title == "Edge sites" && edge.scope == .group(GroupKey(parsing: "site=fra1")!))
        #expect(edge.columns == 3 && edge.panels.allSatisfy { $0.limit == 5 })
        #expect(
            edge.panels.map(\.kind) == [
                .throughput, .topTalkers(.host), .trafficByGroup(key: "rack"), .errorsAndDrops, .weekdayHourHeatmap,
                .bills(.group),
            ])
        #expect(settings.declared[1].scope == .host("db-01") && settings.declared[1].title == "db")
        // Drawn: the fleet overview (host pages are off), then the declared ones.
        #expect(
            settings.dashboards(
                for: Catalogue(series: [], agents: [], memberships: [], rules: ScopeRules()), groupBy: []
            ).map(\.name) == ["fleet", "edge", "db"])
    }

    /// With `defaults = false` only the declared dashboards are drawn, and one may then be called `fleet`.
    @Test func withoutDefaultsOnlyTheDeclaredAreDrawn() throws {
        let text = """
            [dashboards]
            defaults = false
            [dashboard.fleet]
            panels = ["throughput"]
            """
        let settings = try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml")).dashboards
        #expect(settings.busyShare == 0.05, "drawing works a twentieth of the time while the CPUs are contended")
        let catalogue = Catalogue(series: [], agents: [], memberships: [], rules: ScopeRules())
        #expect(settings.dashboards(for: catalogue, groupBy: []).map(\.title) == ["fleet"])
    }

    @Test func badDashboardsNameTheLineAndKey() {
        let bad: [(String, ConfigError)] = [
            (
                "[dashboard.a]\npanels = [\"throughput\", \"pie\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "dashboard.a.panels",
                    "has \"pie\"; panels are \(DashboardSettings.panelNames)")
            ),
            (
                "[dashboard.a]\nscope = \"site=fra1\"\npanels = [\"errors\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "dashboard.a.scope",
                    "is \"site=fra1\"; use fleet, host:AGENT or group:KEY=VALUE")
            ),
            (
                "[dashboard.fleet]\npanels = [\"errors\"]\n",
                ConfigError(
                    file: "d.toml", line: 1, key: nil,
                    "[dashboard.fleet]: \"fleet\" is a built-in dashboard's name (fleet, host-AGENT); choose another, or set [dashboards] defaults = false"
                )
            ),
            (
                "[dashboard.a]\ntitle = \"A\"\n",
                ConfigError(
                    file: "d.toml", line: 1, key: "dashboard.a.panels",
                    "is missing: list what to draw, such as panels = [\"throughput\", \"top_hosts\"]")
            ),
            (
                "[dashboard.a]\ncolumns = 9\npanels = [\"errors\"]\n",
                ConfigError(file: "d.toml", line: 2, key: "dashboard.a.columns", "is 9; it must be between 1 and 6")
            ),
            (
                "[dashboards]\nkeep = 4\nbusy_share = 0\n",
                ConfigError(
                    file: "d.toml", line: 3, key: "dashboards.busy_share", "is 0.0; it must be between 0.01 and 1.0")
            ),
        ]
        for (text, error) in bad {
            #expect(throws: error) { try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml")) }
        }
    }
}
