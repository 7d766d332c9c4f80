import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import StoreFixtures
import TestSupport
import Testing

@testable import PulseReports

/// Reports from a real store: a self-contained HTML page that a real HTML parser, XML parser (for each inline SVG),
/// librsvg and Chromium accept, with odd names escaped; CSV and JSON of the same figures; a manifest `sha256sum`
/// accepts; the same data giving byte-identical files. (Figures against the oracle, and adjustments after late
/// data: OracleTests.)
@Suite struct ReportTests {
    static let tools = FileIO.parentDirectory(FileIO.parentDirectory(#filePath)) + "/Tools"

    func make(
        _ period: ReportPeriod, group: GroupKey? = nil, in directory: String, now: Int64 = Fleet.now
    ) async throws -> (Report, ReportPublisher.Published) {
        let fleet = try await Fleet.shared.value
        let query = ReportQuery(engine: fleet.engine)
        var report = ReportBuilder().build(try await query.read(period: period, group: group, now: now))
        var ledger = try ReportLedger.load("\(directory)/ledger.json")
        ledger.reconcile(&report, current: await query.ledgerFigures(of: ledger.earlier(than: report), now: now))
        return (report, try ReportPublisher.publish(report, ledger: ledger, in: directory))
    }

    /// Links planted in the reports directory where a publication used to look (the issue's temporary name of
    /// this process, and the issue's own name) point at directories elsewhere: publishing replaces the links and
    /// deletes nothing they point at.
    @Test(.timeLimit(.minutes(2)))
    func linksPlantedInTheReportsDirectoryDeleteNothingElsewhere() async throws {
        let period = ReportPeriod.previous(.day, now: Fleet.now, settle: 3_600_000, calendar: .utc)
        let probe = temporaryDirectory() + "/probe"
        let issueName = String(try await make(period, in: probe).1.issue.split(separator: "/").last ?? "")
        let root = temporaryDirectory()
        let directory = root + "/reports"
        try FileIO.createDirectory(directory + "/issues", mode: 0o755)
        for victim in ["elsewhere-1", "elsewhere-2"] {
            try FileIO.createDirectory("\(root)/\(victim)", mode: 0o755)
            try "precious\n".write(toFile: "\(root)/\(victim)/store.db", atomically: false, encoding: .utf8)
        }
        #expect(symlink("\(root)/elsewhere-1", "\(directory)/issues/.\(issueName).tmp-\(getpid())") == 0)
        #expect(symlink("\(root)/elsewhere-2", "\(directory)/issues/\(issueName)") == 0)
        #expect(symlink("\(root)/elsewhere-1/store.db", "\(directory)/ledger.json.tmp-\(getpid())-1") == 0)

        var publication: ReportPublisher.Published?
        do {
            publication = try await make(period, in: directory).1
        } catch {
            Issue.record("publishing failed: \(error)")
        }
        for victim in ["elsewhere-1", "elsewhere-2"] {
            #expect(
                (try? String(contentsOfFile: "\(root)/\(victim)/store.db", encoding: .utf8)) == "precious\n",
                "\(victim)")
        }
        let published = try #require(publication)
        var info = stat()
        #expect(lstat(published.issue, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
        let check = try python(
            """
            import subprocess, sys
            done = subprocess.run(["sha256sum", "--check", "--strict", "--quiet", "SHA256SUMS"], cwd=sys.argv[1])
            print(done.returncode)
            """, [published.path])
        #expect(check.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(check)")
    }

    @Test func previousPeriodsAreTheLastCompleteOnesAfterTheSettleDelay() {
        // Fleet.now is Sunday 2025-11-23 14:05:30 UTC.
        let day = ReportPeriod.previous(.day, now: Fleet.now, settle: 3_600_000, calendar: .utc)
        #expect(day.label == "2025-11-22" && day.to - day.from == 86_400_000)
        // Ten minutes after midnight, with an hour to settle, yesterday is not yet reported: the day before is.
        let early = ReportPeriod.previous(
            .day, now: 1_763_856_000_000 + 600_000, settle: 3_600_000, calendar: .utc)
        #expect(early.label == "2025-11-21")
        let week = ReportPeriod.previous(.week, now: Fleet.now, settle: 3_600_000, calendar: .utc)
        #expect(week.label == "2025-W46" && week.title(.utc) == "Week 2025-W46 (2025-11-10 – 2025-11-16)")
        let month = ReportPeriod.previous(.month, now: Fleet.now, settle: 3_600_000, calendar: .utc)
        #expect(month.label == "2025-10" && month.to == 1_761_955_200_000)
        let berlin = CivilCalendar(identifier: "Europe/Berlin")!
        // The last Sunday of October 2025 in Berlin has 25 hours.
        let long = ReportPeriod.named(.day, from: 1_761_429_600_000, to: 1_761_519_600_000, calendar: berlin)
        #expect(long.label == "2025-10-26")
    }

    @Test(.timeLimit(.minutes(3)))
    func aDayReportIsSelfContainedEscapedReproducibleAndRendersInABrowser() async throws {
        let directory = temporaryDirectory() + "/reports"
        let period = ReportPeriod.previous(.day, now: Fleet.now, settle: 3_600_000, calendar: .utc)
        let (report, published) = try await make(period, in: directory)
        #expect(published.isNew && published.path == "\(directory)/day-2025-11-22")
        #expect(report.hosts.map(\.series.name) == ["a<b&c", "db-01", "web-01"])
        #expect(report.groups.map(\.series.name) == ["site=fra1", "site=p\"q>"])
        #expect(report.hours.count == 24 && report.busiestHours(10).count == 10)

        let html = try String(contentsOfFile: "\(published.path)/report.html", encoding: .utf8)
        #expect(html.contains("a&lt;b&amp;c") && html.contains("site=p&quot;q&gt;"))
        #expect(!html.contains("a<b&c") && !html.contains("p\"q>"))
        #expect(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"))
        #expect(report.charts.count == 5)
        for (index, svg) in report.charts.enumerated() { SVGCheck.validate(svg, name: "report-chart-\(index)") }
        // The page as a browser's HTML parser reads it: every element closed, every inline SVG well-formed XML
        // for a real XML parser, and each renders in librsvg.
        let check = try python(
            """
            import html.parser, sys, re, subprocess, tempfile, os, xml.etree.ElementTree as ET
            text = open(sys.argv[1], encoding="utf-8").read()
            void = {"meta", "br", "img", "link", "hr", "input"}
            class P(html.parser.HTMLParser):
                def __init__(self):
                    super().__init__(); self.stack = []; self.svgs = 0
                def handle_starttag(self, tag, attrs):
                    if tag == "svg": self.svgs += 1
                    if tag not in void: self.stack.append(tag)
                def handle_startendtag(self, tag, attrs): pass
                def handle_endtag(self, tag):
                    if not self.stack or self.stack[-1] != tag: sys.exit("unbalanced </%s> after %s" % (tag, self.stack[-3:]))
                    self.stack.pop()
            p = P(); p.feed(text); p.close()
            if p.stack: sys.exit("unclosed: %s" % p.stack)
            # Each chart is one <figure> holding one SVG document (which nests an <svg> per panel).
            outer = re.findall(r"<figure>(.*?)</figure>", text, re.S)
            with tempfile.TemporaryDirectory() as d:
                for i, svg in enumerate(outer):
                    ET.fromstring(svg)
                    path = os.path.join(d, "%d.svg" % i)
                    open(path, "w", encoding="utf-8").write(svg)
                    subprocess.run(["rsvg-convert", path, "-o", path + ".png"], check=True)
            print("ok", len(outer))
            """, ["\(published.path)/report.html"])
        #expect(check == "ok 5\n", "\(check)")
        for name in ["figures.csv", "hours.csv", "heatmap.csv", "alerts.csv", "adjustments.csv"] {
            let csv = try python(
                "import subprocess, sys; print(subprocess.run(['python3', sys.argv[1], 'csv', sys.argv[2]], capture_output=True, text=True).stdout)",
                [Self.tools + "/check_outputs.py", "\(published.path)/\(name)"])
            #expect(csv.hasPrefix("csv ok"), "\(name): \(csv)")
        }
        // JSON and CSV say the same: each host's bytes.
        let json = try python(
            """
            import json, csv, sys
            report = json.load(open(sys.argv[1] + "/report.json"))
            rows = [r for r in csv.DictReader(open(sys.argv[1] + "/figures.csv", newline="")) if r["section"] == "host"]
            hosts = {h["series"]["name"]: h["figures"]["bytes"] for h in report["hosts"]}
            same = all(hosts[r["series"]] == {"rx": int(r["rx_bytes"]), "tx": int(r["tx_bytes"])} for r in rows)
            print(report["report"]["name"], len(rows), same, report["report"]["period"]["resolution"])
            """, [published.path])
        #expect(json == "day-2025-11-22 3 True 5m\n", "\(json)")

        // The manifest, checked by coreutils.
        let sums = Process()
        sums.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        sums.arguments = ["--check", "--strict", "--quiet", "SHA256SUMS"]
        sums.currentDirectoryURL = URL(fileURLWithPath: published.path)
        try sums.run()
        sums.waitUntilExit()
        #expect(sums.terminationStatus == 0)

        // The same data again: the same issue, untouched; in another directory, the same bytes.
        let (_, again) = try await make(period, in: directory)
        #expect(!again.isNew && again.issue == published.issue)
        // Made 40 days later (the minute buckets of that day gone by then), elsewhere: the same bytes.
        let elsewhere = temporaryDirectory() + "/reports"
        let (_, copy) = try await make(period, in: elsewhere, now: Fleet.now + 40 * 86_400_000)
        for name in ["report.html", "report.json", "figures.csv", "SHA256SUMS"] {
            #expect(
                FileManager.default.contents(atPath: "\(copy.issue)/\(name)")
                    == FileManager.default.contents(atPath: "\(published.issue)/\(name)"), "\(name)")
        }
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/day-latest")
                == "issues/" + (published.issue as NSString).lastPathComponent)

        // In Chromium: no console error, no failed load, not blank.
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        browser.arguments = [Self.tools + "/browser_check.py", "\(published.path)/report.html"]
        try browser.run()
        browser.waitUntilExit()
        #expect(browser.terminationStatus == 0)
    }

    @Test(.timeLimit(.minutes(2)))
    func aGroupReportCoversItsHostsAndAnOlderDayDoesNotMoveLatest() async throws {
        let directory = temporaryDirectory() + "/reports"
        let day = ReportPeriod.previous(.day, now: Fleet.now, settle: 3_600_000, calendar: .utc)
        _ = try await make(day, in: directory)
        let older = ReportPeriod.named(.day, from: day.from - 86_400_000, to: day.from, calendar: .utc)
        let (_, published) = try await make(older, in: directory)
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/day-latest").hasPrefix(
                "issues/day-2025-11-22-"))
        #expect(published.path == "\(directory)/day-2025-11-21")

        let group = GroupKey(parsing: "site=fra1")!
        let (report, grouped) = try await make(day, group: group, in: directory)
        #expect(grouped.path == "\(directory)/day-2025-11-22-" + FileName.safe("site=fra1"))
        #expect(report.scopeLabel == "group site=fra1")
        #expect(report.hosts.map(\.series.name) == ["db-01", "web-01"])
        #expect(report.groups.map(\.series.name) == ["site=fra1"])
        #expect(
            !report.topInterfaces.isEmpty
                && report.topInterfaces.allSatisfy { ["db-01", "web-01"].contains($0.series.agent) })
        // The group's bytes are its hosts' counted interfaces'.
        let hostBytes = report.hosts.map { $0.figures.bytes.rx }.reduce(0, +)
        #expect(report.scope?.figures.bytes.rx == hostBytes)
    }
}
