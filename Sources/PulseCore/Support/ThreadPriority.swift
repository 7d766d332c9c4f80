import Synchronization

#if canImport(Glibc)
    import Glibc
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
public enum ThreadPriority {
    /// How much higher ingest runs than the process: nice 5 lower.
    public static let boost: Int32 = 5

    private struct Levels {
        var normal: Int32
        var raised: Int32
    }

    private static let levels = Mutex<Levels?>(nil)

    /// Reads the process's nice value and checks that the calling thread may run `boost` lower (and back); from
    /// then on ingest's threads are raised. Call once at start, on a thread at the process's nice value. Returns
    /// why not when it may not (the daemon then runs everything at one priority).
    @discardableResult
    public static func prepare() -> String? {
        #if os(Linux)
            errno = 0
            let normal = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            guard errno == 0 else { return String(cString: strerror(errno)) }
            let raised = max(-20, normal - boost)
            guard set(raised) else {
                let reason = String(cString: strerror(errno))
                levels.withLock { $0 = nil }
                return reason
            }
            _ = set(normal)
            levels.withLock { $0 = Levels(normal: normal, raised: raised) }
            return nil
        #else
            return "thread priorities are set on Linux only"
        #endif
    }

    /// Runs `body` with the calling thread raised, then puts it back at the process's nice value.
    public static func raised<T>(_ body: () throws -> T) rethrows -> T {
        guard let levels = levels.withLock({ $0 }) else { return try body() }
        _ = set(levels.raised)
        defer { _ = set(levels.normal) }
        return try body()
    }

    /// Raises the calling thread for as long as it lives (an event loop's thread).
    public static func raiseCurrentThread() {
        guard let levels = levels.withLock({ $0 }) else { return }
        _ = set(levels.raised)
    }

    /// Sets the calling thread's nice value (Linux keeps one per thread; `who` 0 is the calling thread).
    private static func set(_ nice: Int32) -> Bool {
        #if os(Linux)
            return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0
        #else
            return false
        #endif
    }
}
