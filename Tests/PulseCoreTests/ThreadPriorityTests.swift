import Foundation
import Synchronization
import TestSupport
import Testing

@testable import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Ingest's commits run with their thread raised and put it back after (``ThreadPriority``). Serialized: what
/// ``ThreadPriority/prepare()`` finds is the process's.
@Suite(.serialized) struct ThreadPriorityTests {
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

    /// Where the kernel keeps a slice per thread (EEVDF, Linux 6.12 and later), a raised commit runs with the short
    /// slice, so that waking it takes the CPU from drawing at once, and its thread gets the kernel's default back
    /// after, also when the commit throws; an event loop keeps the short slice, which threads it creates do not
    /// inherit. No privilege is needed for it.
    @Test(.enabled(if: Kernel.isAtLeast(6, 12), "slices per thread came with Linux 6.12"))
    func aRaisedCommitRunsWithAShortSliceAndPutsTheDefaultBack() async throws {
        defer { ThreadPriority.forget() }
        ThreadPriority.prepare()
        #expect(ThreadPriority.shortensSlices)
        // On a thread of its own, so that the slice an event loop keeps stays on it; what it saw is checked here.
        struct Seen: Sendable {
            var normal: Int64?, inCommit: Int64?, after: Int64?, afterThrowing: Int64?, threw = false, loop: Int64?
            var loopsChild: Int64?
        }
        let seen = Mutex(Seen())
        let thread = Thread {
            struct Refused: Error {}
            var local = Seen()
            local.normal = ThreadPriority.currentSlice()
            local.inCommit = ThreadPriority.raised { ThreadPriority.currentSlice() }
            local.after = ThreadPriority.currentSlice()
            do { try ThreadPriority.raised { throw Refused() } } catch { local.threw = error is Refused }
            local.afterThrowing = ThreadPriority.currentSlice()
            ThreadPriority.raiseCurrentThread()
            local.loop = ThreadPriority.currentSlice()
            // A thread the event loop creates (as the dispatch pool grows from it) does not inherit the short slice.
            let child = Mutex<Int64?>(nil)
            let grown = Thread { child.withLock { $0 = ThreadPriority.currentSlice() } }
            grown.start()
            while !grown.isFinished { usleep(1_000) }
            local.loopsChild = child.withLock { $0 }
            seen.withLock { $0 = local }
        }
        thread.start()
        while !thread.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        let result = seen.withLock { $0 }
        let short = Int64(ThreadPriority.slice)
        #expect(
            result.normal.map { $0 > short } == true,
            "the kernel's default, longer: \(String(describing: result.normal))")
        #expect(result.inCommit == short)
        #expect(result.after == result.normal)
        #expect(result.threw && result.afterThrowing == result.normal)
        #expect(result.loop == short)
        #expect(result.loopsChild == result.normal, "a thread the loop creates starts with the default slice")
    }
}
