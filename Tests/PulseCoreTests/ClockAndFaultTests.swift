import Foundation
import Testing

@testable import PulseCore

/// The values the executables hand down in place of global switches: a wall clock a test can step, and fault points.
@Suite struct ClockAndFaultTests {
    @Test func aSteppedClockFollowsItsFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clock-offset-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "3600000\n".write(toFile: path, atomically: true, encoding: .utf8)
        let clock = WallClock.stepped(byOffsetIn: path)
        #expect(abs(clock.now() - WallClock.system.now() - 3_600_000) < 1_000)
        try "-30000".write(toFile: path, atomically: true, encoding: .utf8)
        // The file is read again at most every 50 ms.
        Thread.sleep(forTimeInterval: 0.06)
        #expect(abs(clock.now() - WallClock.system.now() + 30_000) < 1_000)
        // A file that no longer holds a number keeps the last offset read.
        try "soon".write(toFile: path, atomically: true, encoding: .utf8)
        Thread.sleep(forTimeInterval: 0.06)
        #expect(abs(clock.now() - WallClock.system.now() + 30_000) < 1_000)
    }

    @Test func aClockReadsWhatItIsGiven() {
        #expect(WallClock { 42 }.now() == 42)
    }

    @Test func faultPointsDoOnlyWhatTheirTextNames() {
        let kill = FaultPoints("kill-after-journal-6")
        #expect(kill.killRequested(afterJournalCommit: 6))
        #expect(!kill.killRequested(afterJournalCommit: 5))
        #expect(!FaultPoints.none.killRequested(afterJournalCommit: 6))
        #expect(!FaultPoints("kill-after-journal-").killRequested(afterJournalCommit: 0))
        #expect(!FaultPoints("trap-applying-sequence-6").killRequested(afterJournalCommit: 6))
        // Neither returns late: a stall of another loop, and one not yet due.
        let started = MonotonicMilliseconds.now()
        FaultPoints("stall-sending-after-0").stallIfRequested(.sampling)
        FaultPoints("stall-sampling-after-3600").stallIfRequested(.sampling)
        FaultPoints("trap-applying-sequence-5").trapIfRequested(applyingSequence: 4)
        #expect(MonotonicMilliseconds.now() - started < 1_000)
    }
}
