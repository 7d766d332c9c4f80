import Foundation
import PulseAnalytics
import PulseCharts
import PulseCore
import PulseStore
import StoreFixtures
import TestSupport
import Testing

@testable import PulseQuery
@testable import PulseReports

@Suite struct DashboardRenderingTests {
    @Test func defaultsAreAFleetOverviewAndOnePagePerHost() async throws {
        let fleet = try await Fleet.shared.value
        let specs = DashboardSpec.defaults(for: fleet.engine.catalogue)
        #expect(specs.map(\.name) == ["fleet", "host-a<b&c", "host-db-01", "host-web-01"])
        #expect(specs[0].scope == .fleet && specs[1].scope == .host(Fleet.hostile))
        // The store's only label key gives the fleet its traffic-per-group panel.
        #expect(specs[0].panels.contains { $0.kind == .trafficByGroup(key: "site") })
        #expect(specs[1].panels.map(\.kind).contains(.billingPercentile))
        // File stems are safe and distinct.
        for spec in specs {
            #expect(
                spec.fileStem.utf8.allSatisfy { byte in
                    (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
                        || byte == 45 || byte == 46 || byte == 95
                }, "\(spec.fileStem)")
        }
        #expect(Set(specs.map(\.fileStem)).count == specs.count)
    }

    @Test(arguments: DashboardRange.standard)
    func fleetOverviewRendersForEveryRange(range: DashboardRange) async throws {
        let fleet = try await Fleet.shared.value
        let spec = DashboardSpec.fleetOverview(groupKey: "site")
        let rendered = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(spec, range: range, now: Fleet.now))
        let svg = rendered.svg
        SVGCheck.validate(svg, name: "fleet-\(range.name)")
        #expect(svg.contains("<title id=\"np-title\">Fleet overview — \(range.title.lowercasedFirst)</title>"))
        #expect(svg.contains(">Traffic of the whole fleet: throughput"))
        #expect(svg.contains("Data coverage "))
        #expect(svg.contains("Rendered 2025-11-23 14:05:30 UTC"))
        // Eight panels, each a nested chart with its own title.
        for title in [
            "Throughput of the fleet", "Top hosts of the fleet by bytes", "Traffic per site of the fleet",
            "Errors and drops of the fleet", "Busiest interfaces of the fleet", "Busy hours of the fleet",
            "95th percentile of the fleet, billing period from 2025-11-01", "95th-percentile bills of the fleet",
        ] {
            #expect(svg.contains(title), "\(range.name): no panel '\(title)'")
        }
        // Every name an agent chose is escaped, never raw markup.
        #expect(svg.contains("a&lt;b&amp;c"))
        #expect(svg.contains("p&quot;q&gt;"))
        #expect(!svg.contains(Fleet.hostile) && !svg.contains(Fleet.hostileInterface))
        // The window ends at the last whole bucket before now and is as long as the range.
        #expect(rendered.window.to == rendered.resolution.bucketStart(Fleet.now))
        #expect(rendered.window.length == range.length)
        #expect(rendered.resolution == range.resolution)
    }

    @Test(arguments: DashboardRange.standard)
    func hostPageRendersForEveryRange(range: DashboardRange) async throws {
        let fleet = try await Fleet.shared.value
        let spec = DashboardSpec.hostPage(Fleet.hostile)
        let rendered = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(spec, range: range, now: Fleet.now))
        let svg = rendered.svg
        SVGCheck.validate(svg, name: "host-\(range.name)")
        #expect(svg.contains("<title id=\"np-title\">Host a&lt;b&amp;c — \(range.title.lowercasedFirst)</title>"))
        #expect(!svg.contains(Fleet.hostile))
        // The host has reported for two days: complete in the last hour and day, gaps over a week and a month.
        let coverage = try #require(rendered.coverage)
        switch range.name {
        case "hour", "day":
            #expect(coverage == 1_000_000)
            #expect(svg.contains("Data coverage 100.0% of host a&lt;b&amp;c (1 counted interface"))
        case "week":
            #expect(coverage > 250_000 && coverage < 350_000, "\(coverage)")
        default:
            #expect(coverage > 50_000 && coverage < 100_000, "\(coverage)")
        }
    }

    @Test func theRangeAndCoverageArePrintedOnThePage() async throws {
        let fleet = try await Fleet.shared.value
        let rendered = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(
                .hostPage("web-01"), range: .hour, now: Fleet.now))
        let texts = rendered.svg.split(separator: "\n").filter { $0.hasPrefix("<text") }.joined(separator: " ")
        #expect(texts.contains("Last hour: 2025-11-23 13:05 – 2025-11-23 14:05 (UTC), 1m buckets"))
        #expect(texts.contains("Data coverage 100.0% of host web-01 (2 counted interfaces, 60 of 60 buckets"))
        // The host page names its interfaces by their own names, escaped; `lo` is not counted.
        #expect(rendered.svg.contains(">p&quot;q&gt;<"))
        #expect(rendered.svg.contains("Traffic per interface of host web-01"))
    }

    @Test func renderingTwiceGivesTheSameBytes() async throws {
        let fleet = try await Fleet.shared.value
        let first = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(
                .fleetOverview(groupKey: "site"), range: .day, now: Fleet.now))
        // A fresh engine and catalogue, as the next render of the daemon makes.
        let again = DashboardRenderer().render(
            try await DashboardQuery(engine: try await Fleet.engine(fleet.store)).read(
                .fleetOverview(groupKey: "site"), range: .day, now: Fleet.now))
        #expect(first.svg == again.svg)
        // A minute later is another picture.
        let later = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(
                .fleetOverview(groupKey: "site"), range: .day, now: Fleet.now + 300_000))
        #expect(later.svg != first.svg)
    }

    @Test func theBillingLineIsTheBillsPercentile() async throws {
        let fleet = try await Fleet.shared.value
        let engine = fleet.engine
        let host = try #require(engine.catalogue.host("web-01"))
        let bill = try await engine.bill(host, containing: Fleet.now, now: Fleet.now)
        let value = try #require(bill.bill.value)
        let label =
            "95th percentile (larger of in and out): \(ValueFormat.bitsPerSecond.format(Double(value) * 8 / 1_000))"
        let rendered = DashboardRenderer().render(
            try await DashboardQuery(engine: engine).read(
                .hostPage("web-01"), range: .week, now: Fleet.now))
        #expect(rendered.svg.contains(label))
    }

    @Test func morePanelSeriesThanTheLimitDrawTheTopAndOneOther() async throws {
        let fleet = try await Fleet.shared.value
        let spec = DashboardSpec(
            name: "limits", title: "Limits", scope: .fleet,
            panels: [
                PanelSpec(.topTalkers(.interface), limit: 2), PanelSpec(.trafficByInterface, limit: 2),
                PanelSpec(.utilisation, limit: 1), PanelSpec(.bills(.host), limit: 1),
            ])
        let svg = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(spec, range: .day, now: Fleet.now)
        ).svg
        SVGCheck.validate(svg, name: "limits")
        // Four counted interfaces (lo is not), four with a known speed, three hosts.
        #expect(svg.components(separatedBy: "other (2 more)").count - 1 >= 2)
        #expect(svg.contains("other (3 more)"))
        #expect(svg.contains("other (2 more), summed"))
    }

    @Test func aHostThatHasNotReportedGetsEmptyPanels() async throws {
        let fleet = try await Fleet.shared.value
        let rendered = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(
                .hostPage("not-yet"), range: .hour, now: Fleet.now))
        SVGCheck.validate(rendered.svg, name: "empty-host")
        #expect(rendered.coverage == nil)
        #expect(rendered.svg.contains("No data for host not-yet in the store yet."))
        #expect(rendered.svg.contains("No data"))
    }

    @Test func headerTextFromTheConfigIsEscaped() async throws {
        let fleet = try await Fleet.shared.value
        let spec = DashboardSpec(
            name: "x", title: "Ops \"a<b&c\" & p\"q>", description: "it's <script>alert(1)</script>", scope: .fleet,
            panels: [PanelSpec(.throughput, title: "</text><script>")])
        let svg = DashboardRenderer().render(
            try await DashboardQuery(engine: fleet.engine).read(spec, range: .hour, now: Fleet.now)
        ).svg
        SVGCheck.validate(svg, name: "escaped")
        #expect(!svg.contains("<script>"))
        #expect(svg.contains("Ops &quot;a&lt;b&amp;c&quot; &amp; p&quot;q&gt;"))
        #expect(svg.contains("it&#39;s &lt;script&gt;"))
    }
}

@Suite struct ChartPieceTests {
    /// Missing slots are gaps: an area with a missing value in the middle is drawn as two pieces.
    @Test func missingBucketsAreGapsNotZeros() throws {
        let level = RollupLevel.oneMinute
        let timeline = Timeline(from: 0, to: 5 * 60_000, level: level)
        var traffic = TrafficDelta.zero
        traffic[.rxBytes] = 60_000
        let full = BucketValues(traffic: traffic, measuredMilliseconds: 60_000)
        let idle = BucketValues(measuredMilliseconds: 60_000)
        let buckets = [
            Bucket(level: level, start: 0, values: full), Bucket(level: level, start: 60_000, values: idle),
            Bucket(level: level, start: 180_000, values: full),
            // No data at all: as good as missing.
            Bucket(level: level, start: 240_000, values: .empty),
        ]
        let values = timeline.values(buckets)
        let rates = values.map { $0.flatMap { ChartRates.bits($0.traffic[.rxBytes], over: level.width) } }
        #expect(rates == [8_000, 0, nil, 8_000, nil])
        let chart = PanelCharts.throughput(
            title: "t", times: timeline.midpoints, received: rates, sent: rates,
            frame: ChartFrame(domain: timeline.domain, calendar: .utc))
        let svg = chart.renderSVG()
        for series in ["Download (received)", "Upload (sent)"] {
            // The series' area: a path whose tooltip names it; one subpath per run of buckets with data.
            let area = try #require(
                svg.components(separatedBy: "<path d=\"").dropFirst().first { $0.contains("<title>\(series)</title>") })
            let path = area.prefix { $0 != "\"" }
            #expect(path.filter { $0 == "M" }.count == 2, "\(series): \(path)")
        }
        // The bucket alone between two gaps would be an area of no width: it is drawn as a point of each
        // direction's colour, and it is the only one.
        #expect(PanelCharts.isolated(rates) == [nil, nil, nil, 8_000, nil])
        let withoutPoints = Chart {
            AreaPlot(x: .value("Time", timeline.midpoints), y: .value("Received", rates))
        }.renderSVG()
        let marks = { (text: String) in text.components(separatedBy: "<circle").count - 1 }
        #expect(marks(svg) == marks(withoutPoints) + 2, "\(svg)")
    }

    @Test func fileNamesAreSafeDistinctAndStable() {
        #expect(FileName.safe("web-01") == "web-01")
        #expect(FileName.safe("host.example.org") == "host.example.org")
        let hostile = FileName.safe("a<b&c")
        #expect(hostile.hasPrefix("a_b_c-") && hostile.count == "a_b_c-".count + 8)
        #expect(FileName.safe("a>b&c") != hostile)
        #expect(FileName.safe("a<b&c") == hostile)
        for name in ["..", ".hidden", "../../etc/passwd", "", "p\"q>", "x/y", "tab\there", "é"] {
            let safe = FileName.safe(name)
            #expect(!safe.isEmpty && !safe.hasPrefix(".") && !safe.contains("/"), "\(name) → \(safe)")
            #expect(safe.utf8.allSatisfy { $0 < 0x80 && $0 > 0x20 }, "\(name) → \(safe)")
        }
        #expect(FileName.safe(String(repeating: "x", count: 300)).count <= 89)
        #expect(FileName.stamp(Fleet.now) == "20251123T140530Z")
        #expect(FileName.time(ofStamp: "20251123T140530Z") == Fleet.now)
        #expect(FileName.time(ofStamp: "20251123T140530") == nil)
    }

    @Test func headerLinesWrapToThePage() {
        let lines = DashboardPage.wrap(
            "one two three four five six " + String(repeating: "x", count: 30), width: 100, characterWidth: 10)
        #expect(lines == ["one two", "three four", "five six", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxxxxxxx"])
    }
}
