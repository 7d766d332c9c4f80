import Testing

@testable import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Ingest's commits run with their thread raised and put it back after (``ThreadPriority``).
@Suite struct ThreadPriorityTests {
    // The tests run as root (scripts/test.sh), which may raise a thread; the shipped units allow it with
    // LimitNICE=-5.
    @Test(.enabled(if: getuid() == 0, "raising a thread needs root or LimitNICE"))
    func aRaisedCommitRunsFiveBelowTheProcessAndPutsItsThreadBack() throws {
        let process = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        let mine = ThreadPriority.current()
        defer {
            ThreadPriority.set(mine)
            ThreadPriority.forget()
        }
        #expect(ThreadPriority.prepare() == nil)
        // A thread with a nice value of its own (as a dispatch pool's may have) is raised for the commit and put
        // back at its own, not at the process's.
        let own = min(19, process + 3)
        ThreadPriority.set(own)
        #expect(ThreadPriority.raised { ThreadPriority.current() } == max(-20, process - ThreadPriority.boost))
        #expect(ThreadPriority.current() == own)
        // A commit that throws puts its thread back too.
        struct Refused: Error {}
        #expect(throws: Refused.self) { try ThreadPriority.raised { throw Refused() } }
        #expect(ThreadPriority.current() == own)
        // A thread already running higher is left where it is.
        ThreadPriority.set(max(-20, process - ThreadPriority.boost - 2))
        #expect(ThreadPriority.raised { ThreadPriority.current() } == max(-20, process - ThreadPriority.boost - 2))
    }
}
