import Testing

@testable import PulseDaemon

/// The billing pass's schedule (``BillingService``): at 30 s past each minute, away from the bucket boundaries on
/// the whole minutes, when the live pages redraw.
@Suite struct BillingScheduleTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    /// Passes of a second or so over an hour, started at any moment of a minute: after the first, each starts at 30 s
    /// past a minute, none within 20 s of a whole minute, and each 5-minute interval is taken in (a minute of grace)
    /// by a pass 90 s after it ends.
    @Test(arguments: [0, 1_000, 9_500, 29_999, 30_000, 31_000, 45_000, 59_999] as [Int64])
    func passesStartAtHalfPastEachMinute(_ start: Int64) {
        var now = day + 7 * 60_000 + start
        var starts = [now]
        for pass in 0..<60 {
            now += 900 + Int64(pass % 4) * 250  // the pass's length
            now += BillingService.wait(after: now)
            starts.append(now)
        }
        for time in starts.dropFirst() {
            #expect(time % 60_000 == 30_000, "a pass at \(time % 60_000) ms past the minute")
        }
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 >= 20_000 && $1 - $0 <= 81_000 })
        let grace: Int64 = 60_000
        for end in stride(from: day + 15 * 60_000, to: day + 60 * 60_000, by: 300_000) {
            let takenIn = starts.first { $0 >= end + grace }
            #expect(takenIn == end + 90_000)
        }
    }

    /// A clock that stands still (a test's frozen clock) does not start passes back to back.
    @Test func aClockThatStandsStillWaitsAtLeastTwentySeconds() {
        for offset in stride(from: Int64(0), to: 60_000, by: 500) {
            let wait = BillingService.wait(after: day + offset)
            #expect(wait >= 20_000 && wait < 80_000, "\(wait) ms after \(offset) ms past the minute")
        }
    }
}
