import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import StoreFixtures
import Testing

@testable import PulseReports

@Suite struct PublishingTests {
    let t0 = Fleet.now

    /// A rendered dashboard without a store: the SVG names the time, so every file's content is its own.
    func rendered(_ spec: DashboardSpec, _ range: DashboardRange = .hour, at time: Int64) -> RenderedDashboard {
        RenderedDashboard(
            name: spec.name, fileStem: spec.fileStem, title: spec.title, range: range,
            window: Window(from: time - range.length, to: time), resolution: range.resolution, coverage: 1_000_000,
            renderedAt: time,
            svg: "<svg xmlns=\"http://www.w3.org/2000/svg\"><title>\(spec.name) \(time)</title></svg>\n")
    }

    /// The directory's entries but the publisher's ledger (``PublishedFiles/Ledger``).
    func names(_ directory: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory)).subtracting([
            ".netpulse-dashboards.published"
        ])
    }

    func latest(_ directory: String, _ name: String) throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)")
    }

    @Test func publishesAtomicallyPointsLatestAtTheNewestAndKeepsTheNewestN() throws {
        let directory = temporaryDirectory() + "/dashboards"
        let publisher = DashboardPublisher(directory: directory, retention: DashboardRetention(keep: 2))
        let fleet = DashboardSpec.fleetOverview(groupKey: nil)
        let first = rendered(fleet, at: t0)
        #expect(try publisher.publish([first], dashboards: [fleet], now: t0) == ["fleet-hour-20251123T140530Z.svg"])
        #expect(try latest(directory, "fleet-hour-latest.svg") == "fleet-hour-20251123T140530Z.svg")
        #expect(try String(contentsOfFile: "\(directory)/fleet-hour-latest.svg", encoding: .utf8) == first.svg)

        // A reader that opened the latest file keeps reading it whole while newer ones are published: files are
        // replaced by rename, never rewritten in place.
        let reader = try #require(FileHandle(forReadingAtPath: "\(directory)/fleet-hour-latest.svg"))
        defer { try? reader.close() }
        for minute in 1...2 {
            let time = t0 + Int64(minute) * 60_000
            try publisher.publish([rendered(fleet, at: time)], dashboards: [fleet], now: time)
        }
        #expect(String(decoding: try reader.readToEnd() ?? Data(), as: UTF8.self) == first.svg)

        let newest = rendered(fleet, at: t0 + 120_000)
        #expect(try latest(directory, "fleet-hour-latest.svg") == newest.fileName)
        #expect(try String(contentsOfFile: "\(directory)/fleet-hour-latest.svg", encoding: .utf8) == newest.svg)
        // The oldest is gone; nothing half-written or temporary is left behind.
        #expect(
            try names(directory) == [
                "fleet-hour-20251123T140630Z.svg", "fleet-hour-20251123T140730Z.svg", "fleet-hour-latest.svg",
                "index.html",
            ])
    }

    @Test func retentionByAgeKeepsTheNewestAndWhatLatestNames() throws {
        let directory = temporaryDirectory()
        let publisher = DashboardPublisher(
            directory: directory, retention: DashboardRetention(keep: nil, maximumAge: 90_000))
        let spec = DashboardSpec.hostPage("web-01")
        for offset: Int64 in [0, 60_000, 180_000] {
            try publisher.publish([rendered(spec, .day, at: t0 + offset)], dashboards: [spec], now: t0 + offset)
        }
        #expect(
            try names(directory) == [
                "host-web-01-day-20251123T140830Z.svg", "host-web-01-day-latest.svg", "index.html",
            ])
        // A day later with nothing new: the newest file stays, however old.
        try publisher.publish([], dashboards: [spec], now: t0 + 86_400_000)
        #expect(try names(directory).contains("host-web-01-day-20251123T140830Z.svg"))

        // Without limits everything is kept.
        let all = temporaryDirectory()
        let keeper = DashboardPublisher(directory: all, retention: DashboardRetention(keep: nil, maximumAge: nil))
        for minute: Int64 in 0..<5 {
            let time = t0 + minute * 60_000
            try keeper.publish([rendered(spec, .day, at: time)], dashboards: [spec], now: time)
        }
        #expect(try names(all).filter { $0.hasSuffix("Z.svg") }.count == 5)
    }

    /// Files that look like renders but were not written by the publisher (someone else's, in a directory an
    /// operator shares) are neither listed in the index nor deleted by retention, however old.
    @Test func retentionDeletesOnlyTheFilesItWrote() throws {
        let directory = temporaryDirectory()
        let publisher = DashboardPublisher(directory: directory, retention: DashboardRetention(keep: 1))
        let fleet = DashboardSpec.fleetOverview(groupKey: nil)
        let foreign = ["fleet-hour-20200101T000000Z.svg", "fleet-hour-20251123T140600Z.svg"]
        for name in foreign { try "<svg/>".write(toFile: "\(directory)/\(name)", atomically: false, encoding: .utf8) }
        for minute: Int64 in 0..<3 {
            let time = t0 + minute * 60_000
            try publisher.publish([rendered(fleet, at: time)], dashboards: [fleet], now: time)
        }
        #expect(
            try names(directory)
                == Set(foreign + ["fleet-hour-20251123T140730Z.svg", "fleet-hour-latest.svg", "index.html"]))
        let index = try String(contentsOfFile: "\(directory)/index.html", encoding: .utf8)
        #expect(!foreign.contains { index.contains($0) })
        #expect(try publisher.ledger.names() == ["fleet-hour-20251123T140730Z.svg"])
    }

    @Test func dashboardsWhoseNamesExtendAnothersKeepTheirOwnFiles() throws {
        let directory = temporaryDirectory()
        let publisher = DashboardPublisher(directory: directory, retention: DashboardRetention(keep: 1))
        let web = DashboardSpec(name: "web", title: "Web", scope: .fleet, panels: [])
        let webHour = DashboardSpec(name: "web-hour", title: "Web hour", scope: .fleet, panels: [])
        for minute: Int64 in 0..<3 {
            let time = t0 + minute * 60_000
            try publisher.publish(
                [rendered(web, at: time), rendered(webHour, at: time)], dashboards: [web, webHour], now: time)
        }
        #expect(
            try names(directory) == [
                "web-hour-20251123T140730Z.svg", "web-hour-latest.svg", "web-hour-hour-20251123T140730Z.svg",
                "web-hour-hour-latest.svg", "index.html",
            ])
        #expect(
            try DashboardFiles.files(stem: "web", range: .hour, in: directory).map(\.name) == [
                "web-hour-20251123T140730Z.svg"
            ])
    }

    /// The index of real renders: valid HTML, the newest render of each dashboard and range inline, older ones
    /// linked, every link naming a file that exists, names escaped, no script, reloading itself.
    @Test func theIndexShowsTheLatestOfEachRangeAndNamesOnlyExistingFiles() async throws {
        let fleet = try await Fleet.shared.value
        let query = DashboardQuery(engine: fleet.engine)
        let specs = [DashboardSpec.fleetOverview(groupKey: "site"), .hostPage(Fleet.hostile)]
        let directory = temporaryDirectory() + "/out"
        let publisher = DashboardPublisher(
            directory: directory, retention: DashboardRetention(keep: 3), refreshSeconds: 30)
        var first = [RenderedDashboard]()
        for spec in specs {
            for range in DashboardRange.standard {
                first.append(DashboardRenderer().render(try await query.read(spec, range: range, now: Fleet.now)))
            }
        }
        try publisher.publish(first, dashboards: specs, now: Fleet.now)
        // The next minute only the hour is rendered again.
        let later = Fleet.now + 60_000
        let hour = DashboardRenderer().render(try await query.read(specs[0], range: .hour, now: later))
        try publisher.publish([hour], dashboards: specs, now: later)

        let index = "\(directory)/index.html"
        let output = try python(IndexCheck.script, [index])
        let result = try JSONDecoder().decode(IndexCheck.Result.self, from: Data(output.utf8))
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.meta["refresh"] == "30")
        #expect(result.meta["color-scheme"] == "light dark")
        #expect(result.scripts == 0)
        let onDisk = try names(directory)
        for link in result.imgs + result.links where !link.hasPrefix("#") {
            #expect(onDisk.contains(link), "index.html names \(link), which is not in the directory")
        }
        let newest = [hour] + first.filter { $0.range != .hour || $0.name != "fleet" }
        #expect(Set(result.imgs) == Set(newest.map(\.fileName)))
        #expect(result.imgs.count == 8)
        #expect(result.links.contains(first[0].fileName))
        #expect(result.text.contains("Older renders (1)"))
        #expect(result.text.contains("Host a<b&c"))
        let html = try String(contentsOfFile: index, encoding: .utf8)
        #expect(html.contains("Host a&lt;b&amp;c"))
        #expect(!html.contains(Fleet.hostile))
        #expect(html.contains("@media (prefers-color-scheme:dark)"))
        // Each latest symlink names the newest file.
        for dashboard in newest {
            #expect(try latest(directory, dashboard.latestName) == dashboard.fileName)
        }
    }
}

/// Parses an HTML file with Python's html.parser: start and end tags must balance (void elements aside); collects
/// image sources, link targets, meta tags, scripts and the text.
enum IndexCheck {
    struct Result: Decodable {
        var errors: [String]
        var imgs: [String]
        var links: [String]
        var meta: [String: String]
        var scripts: Int
        var text: String
    }

    static let script = #"""
        import json, sys
        from html.parser import HTMLParser
        VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
        class Parser(HTMLParser):
            def __init__(self):
                super().__init__(convert_charrefs=True)
                self.stack, self.errors, self.imgs, self.links, self.meta, self.text = [], [], [], [], {}, []
                self.scripts = 0
            def handle_starttag(self, tag, attrs):
                a = dict(attrs)
                if tag == "img": self.imgs.append(a.get("src") or "")
                if tag == "a" and "href" in a: self.links.append(a["href"])
                if tag == "script": self.scripts += 1
                if tag == "meta":
                    key = a.get("http-equiv") or a.get("name")
                    if key: self.meta[key] = a.get("content") or ""
                if tag not in VOID: self.stack.append(tag)
            def handle_startendtag(self, tag, attrs):
                self.handle_starttag(tag, attrs)
                if tag not in VOID: self.stack.pop()
            def handle_endtag(self, tag):
                if not self.stack or self.stack[-1] != tag:
                    self.errors.append("unexpected </%s> with %s open" % (tag, self.stack[-3:]))
                else:
                    self.stack.pop()
            def handle_data(self, data):
                self.text.append(data)
        parser = Parser()
        parser.feed(open(sys.argv[1], encoding="utf-8").read())
        parser.close()
        if parser.stack: parser.errors.append("unclosed %s" % parser.stack)
        print(json.dumps(dict(errors=parser.errors, imgs=parser.imgs, links=parser.links, meta=parser.meta,
                              scripts=parser.scripts, text="".join(parser.text))))
        """#
}
