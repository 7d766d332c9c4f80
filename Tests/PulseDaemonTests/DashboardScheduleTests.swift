import Foundation
import PulseCore
import PulseQuery
import PulseReports
import Testing

@testable import PulseDaemon
@testable import PulseSettings

/// When a starting daemon first draws each range (``DashboardService/firstDue(_:stems:now:)``), read from the
/// `latest` links a previous run left in the output directory.
@Suite struct DashboardScheduleTests {
    let midnight: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z: a boundary of every default interval

    /// Publishes a page as the publisher names it: `STEM-RANGE-STAMP.svg`, and `STEM-RANGE-latest.svg` naming it.
    func drawn(_ stem: String, _ range: DashboardRange, at time: Int64, in directory: String) throws {
        let name = "\(stem)-\(range.name)-\(FileName.stamp(time)).svg"
        try FileIO.writeAtomically("\(directory)/\(name)", Array("<svg/>".utf8))
        let link = "\(directory)/\(stem)-\(range.name)-latest.svg"
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: name)
    }

    /// A restarted daemon draws at once only the ranges with a page of a current dashboard not drawn since the
    /// range's last boundary (or never drawn); the others wait for their next boundary, as if it had not stopped.
    @Test func aRestartDrawsAtOnceOnlyWhatIsNotFresh() throws {
        let directory = NSTemporaryDirectory() + "netpulse-schedule-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileIO.createDirectory(directory, mode: 0o700)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = DashboardSettings(directory: directory)
        #expect(settings.ranges.map(\.range.name) == ["hour", "day", "week", "month"])
        let stems = ["fleet", "host-web-01", "host-web-02"]
        let now = midnight + 20_000
        func firstDue() -> [Int64] { DashboardService.firstDue(settings, stems: stems, now: now) }
        #expect(firstDue() == [0, 0, 0, 0], "nothing drawn yet: every range at once")

        let justDrawn = midnight + DashboardService.settle  // each range's render of the midnight boundary
        for range in [DashboardRange.hour, .day, .month] { try drawn("fleet", range, at: justDrawn, in: directory) }
        try drawn("host-web-01", .hour, at: justDrawn, in: directory)
        // web-01's day page is two days old (the daemon was stopped meanwhile); no week page was ever drawn; web-02's
        // month link names a file that is not there. A host no longer drawn left an old link: it does not count.
        try drawn("host-web-01", .day, at: midnight - 2 * 86_400_000, in: directory)
        try FileManager.default.createSymbolicLink(
            atPath: "\(directory)/host-web-02-month-latest.svg",
            withDestinationPath: "host-web-02-month-\(FileName.stamp(justDrawn)).svg")
        try drawn("host-gone-hour", .hour, at: midnight - 30 * 86_400_000, in: directory)

        let due = firstDue()
        #expect(due[0] == midnight + 60_000 + DashboardService.settle, "the hour: at its next boundary")
        #expect(due[1] <= now, "the day: one page is stale, so at once")
        #expect(due[2] == 0, "the week: never drawn")
        #expect(due[3] == 0, "the month: a link to no page counts as never drawn")
        #expect(DashboardService.firstDue(settings, stems: nil, now: now) == [0, 0, 0, 0], "dashboards unknown")

        // With web-02's month drawn too, the month waits six hours; pages "drawn" after now (the clock stepped
        // back) are drawn again at once.
        try drawn("host-web-02", .month, at: justDrawn, in: directory)
        #expect(firstDue()[3] == midnight + 21_600_000 + DashboardService.settle)
        for stem in ["fleet", "host-web-01"] { try drawn(stem, .hour, at: now + 3_600_000, in: directory) }
        #expect(firstDue()[0] == 0)
    }
}
