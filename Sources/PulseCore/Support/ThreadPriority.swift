import CSchedule
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Ingest's threads run at a higher priority than the daemon's other work.
///
/// Why: at half of its maximum ingest the daemon already uses most of a two-core machine, and drawing dashboards at
/// the same priority took the CPU that the store's applier needed to keep up with what the journal acknowledged, so
/// its backlog filled and acknowledgements waited (docs/benchmarks.md, "Ack latency while drawing"). Lowering the
/// background work instead was tried and is worse: starved, it holds its read snapshots of the WAL for seconds.
/// Raising ingest a little leaves drawing, billing and retention a fair share (the kernel weighs nice -5 about three
/// times nice 0), so they are slowed, never starved.
///
/// Linux keeps a nice value per thread: ``raised(_:)`` lowers the calling thread's for the duration of a store or
/// journal commit (their threads are the dispatch pool's, shared with other work) and ``raiseCurrentThread()`` for
/// good (an event loop's). Nothing changes until ``prepare()`` has run and found that the process may do it: as
/// root, or with `LimitNICE=-5` (the shipped units have it).
///
/// A raised thread also gets a short scheduling slice (``slice``, where the kernel has them: Linux 6.12 and later,
/// no privilege needed, so also where the nice value cannot be raised). A nice value sets a thread's share of the
/// CPU, not how soon a woken thread runs: with the kernel's default slice (1.4 ms on these two-core machines) a
/// connection's thread that wakes while drawing holds the core may wait for the rest of drawing's slice. With a
/// shorter slice its deadline is earlier and the kernel switches to it sooner: while drawing, the event loops'
/// wait for a core fell from 152 to 95 µs a wake-up (docs/benchmarks.md, "Ack latency while drawing").
public enum ThreadPriority {
    /// How much higher ingest runs than the process: nice 5 lower.
    public static let boost: Int32 = 5

    /// The scheduling slice of a raised thread, in nanoseconds: the shortest the kernel takes (0.1 ms).
    public static let slice: UInt64 = 100_000

    private static let raisedLevel = Mutex<Int32?>(nil)
    private static let slicesShortened = Mutex(false)

    /// Whether raised threads get the short ``slice`` (found by ``prepare()``).
    public static var shortensSlices: Bool { slicesShortened.withLock { $0 } }

    /// Reads the process's nice value (its main thread's, which the Swift runtime leaves alone, unlike its pool's)
    /// and checks that the calling thread may run `boost` below it; from then on ingest's threads are raised. Call
    /// once at start. Returns why not when it may not (the daemon then runs everything at one priority).
    @discardableResult
    public static func prepare() -> String? {
        #if os(Linux)
            // Short slices: set one on this thread, read it back (older kernels ignore it) and put the default back.
            let shortens = netpulse_set_thread_slice(slice, 0) == 0 && netpulse_thread_slice() == Int64(slice)
            _ = netpulse_set_thread_slice(0, 0)
            slicesShortened.withLock { $0 = shortens }
            errno = 0
            let normal = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
            guard errno == 0 else { return String(cString: strerror(errno)) }
            let raised = max(-20, normal - boost)
            let before = current()
            guard set(raised) else {
                let reason = String(cString: strerror(errno))
                raisedLevel.withLock { $0 = nil }
                return reason
            }
            _ = set(before)
            raisedLevel.withLock { $0 = raised }
            return nil
        #else
            return "thread priorities are set on Linux only"
        #endif
    }

    /// Forgets what ``prepare()`` found: nothing is raised any more (for tests).
    static func forget() {
        raisedLevel.withLock { $0 = nil }
        slicesShortened.withLock { $0 = false }
    }

    /// Runs `body` with the calling thread raised (unless it already runs higher), then puts the thread back where
    /// it was: a dispatch pool's thread may have had a nice value of its own.
    /// The thread's slice goes back to the kernel's default (the pool's threads never set one of their own).
    public static func raised<T>(_ body: () throws -> T) rethrows -> T {
        let shortened = shortenSlice()
        defer { if shortened { restoreSlice() } }
        guard let raised = raisedLevel.withLock({ $0 }) else { return try body() }
        let before = current()
        guard raised < before else { return try body() }
        _ = set(raised)
        defer { _ = set(before) }
        return try body()
    }

    /// Raises the calling thread for as long as it lives (an event loop's thread).
    public static func raiseCurrentThread() {
        _ = shortenSlice()
        guard let raised = raisedLevel.withLock({ $0 }), raised < current() else { return }
        _ = set(raised)
    }

    /// Gives the calling thread the short ``slice`` when raised threads get one and it has a longer one; whether it
    /// did.
    private static func shortenSlice() -> Bool {
        #if os(Linux)
            guard shortensSlices, netpulse_thread_slice() > Int64(slice) else { return false }
            return netpulse_set_thread_slice(slice, 1) == 0
        #else
            return false
        #endif
    }

    /// Gives the calling thread the kernel's default slice again.
    private static func restoreSlice() {
        #if os(Linux)
            _ = netpulse_set_thread_slice(0, 0)
        #endif
    }

    /// The calling thread's scheduling slice in nanoseconds (nil where it cannot be read).
    static func currentSlice() -> Int64? {
        #if os(Linux)
            let slice = netpulse_thread_slice()
            return slice >= 0 ? slice : nil
        #else
            return nil
        #endif
    }

    /// The calling thread's nice value.
    static func current() -> Int32 {
        #if os(Linux)
            return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #else
            return 0
        #endif
    }

    /// Sets the calling thread's nice value (Linux keeps one per thread; `who` 0 is the calling thread).
    @discardableResult
    static func set(_ nice: Int32) -> Bool {
        #if os(Linux)
            return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0
        #else
            return false
        #endif
    }
}
