import Foundation
import PulseCore
import PulseReports
import Testing

@testable import PulseDaemon

/// When a starting daemon first draws each range (``DashboardService/firstDue(_:)``), read from the `latest` links
/// a previous run left in the output directory.
@Suite struct DashboardScheduleTests {
    let midnight: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z: a boundary of every default interval

    /// Publishes a page as the publisher names it: `STEM-RANGE-STAMP.svg`, and `STEM-RANGE-latest.svg` naming it.
    func drawn(_ stem: String, _ range: DashboardRange, at time: Int64, in directory: String) throws {
        let name = "\(stem)-\(range.name)-\(FileName.stamp(time)).svg"
        try FileIO.writeAtomically("\(directory)/\(name)", Array("<svg/>".utf8))
        try FileManager.default.createSymbolicLink(
            atPath: "\(directory)/\(stem)-\(range.name)-latest.svg", withDestinationPath: name)
    }

    /// A restarted daemon draws at once only the ranges with a page not drawn since the range's last boundary (or
    /// never drawn); the others wait for their next boundary, as if it had not stopped.
    @Test func aRestartDrawsAtOnceOnlyWhatIsNotFresh() throws {
        let directory = NSTemporaryDirectory() + "netpulse-schedule-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileIO.createDirectory(directory, mode: 0o700)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = DashboardSettings(directory: directory)
        #expect(DashboardService.firstDue(settings) == [0, 0, 0, 0], "nothing drawn yet: every range at once")

        let justDrawn = midnight + DashboardService.settle  // each range's render of the midnight boundary
        for range in [DashboardRange.hour, .day, .month] { try drawn("fleet", range, at: justDrawn, in: directory) }
        try drawn("host-web-01", .hour, at: justDrawn, in: directory)
        // web-01's day page is two days old (the daemon was stopped meanwhile); no week page was ever drawn; one
        // month link names a file that is not a page.
        try drawn("host-web-01", .day, at: midnight - 2 * 86_400_000, in: directory)
        try FileManager.default.createSymbolicLink(
            atPath: "\(directory)/host-web-02-month-latest.svg", withDestinationPath: "elsewhere.svg")

        let due = DashboardService.firstDue(settings)
        #expect(settings.ranges.map(\.range.name) == ["hour", "day", "week", "month"])
        #expect(due[0] == midnight + 60_000 + DashboardService.settle, "the hour: at its next boundary")
        #expect(due[1] <= midnight, "the day: one page is stale, so at once")
        #expect(due[2] == 0, "the week: never drawn")
        #expect(due[3] == 0, "the month: a page whose time cannot be told counts as never drawn")

        // With web-02's month drawn too, the month waits six hours.
        try FileManager.default.removeItem(atPath: "\(directory)/host-web-02-month-latest.svg")
        try drawn("host-web-02", .month, at: justDrawn, in: directory)
        #expect(DashboardService.firstDue(settings)[3] == midnight + 21_600_000 + DashboardService.settle)
    }
}
