import Testing

@testable import PulseCore

#if canImport(Glibc)
    import Glibc
#endif

/// Ingest's commits run with their thread raised and put it back after (``ThreadPriority``).
@Suite struct ThreadPriorityTests {
    func nice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    @Test func aRaisedCommitRunsFiveNicerAndPutsItsThreadBack() throws {
        let normal = nice()
        // The tests run as root (scripts/test.sh), which may raise a thread; the shipped units allow it with
        // LimitNICE=-5.
        #expect(ThreadPriority.prepare() == nil)
        let inside = ThreadPriority.raised { nice() }
        #expect(inside == max(-20, normal - ThreadPriority.boost))
        #expect(nice() == normal)
        // A commit that throws puts its thread back too.
        struct Refused: Error {}
        #expect(throws: Refused.self) { try ThreadPriority.raised { throw Refused() } }
        #expect(nice() == normal)
    }
}
