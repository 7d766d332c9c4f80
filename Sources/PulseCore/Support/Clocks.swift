import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Duration {
    /// The whole milliseconds of this duration (rounded toward zero).
    public var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}

/// Wall-clock time in milliseconds since the Unix epoch.
public enum WallClock {
    public static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let now = Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
        #if DEBUG
            return now + TestClockOffset.current()
        #else
            return now
        #endif
    }
}

#if DEBUG
    /// A wall clock that steps, for tests (debug builds only, like ``TestFault``): when
    /// `NETPULSE_TEST_CLOCK_OFFSET_FILE` names a file, its number (milliseconds, possibly negative) is added to
    /// the wall clock, read again at most every 50 ms, so a test steps a running process's clock by rewriting it.
    enum TestClockOffset {
        private static let path: String? = getenv("NETPULSE_TEST_CLOCK_OFFSET_FILE").map { String(cString: $0) }
        private static let cache = Mutex<(offset: Int64, readAt: Int64?)>((0, nil))

        static func current() -> Int64 {
            guard let path else { return 0 }
            let now = MonotonicMilliseconds.now()
            return cache.withLock { cache in
                if cache.readAt.map({ now - $0 >= 50 }) ?? true {
                    cache.readAt = now
                    if let text = try? FileIO.readString(path), let offset = Int64(text.trimmingWhitespace()) {
                        cache.offset = offset
                    }
                }
                return cache.offset
            }
        }
    }
#endif

/// Milliseconds of a clock that never jumps (CLOCK_MONOTONIC), for deadlines.
public enum MonotonicMilliseconds {
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// The liveness of one long-running loop, for the watchdog.
///
/// Before anything that may take a while (a sleep, a wait, a connection attempt) the loop calls
/// ``beat(within:)`` with how long that may legitimately take; the loop is *overdue* when that deadline passes
/// without another beat. A loop stuck in a syscall, a deadlock or an endless computation therefore stops the
/// watchdog pings, while a loop that is merely waiting does not.
public final class LoopHeartbeat: Sendable {
    public let name: String
    private let deadline = Atomic<Int64>(.max)

    public init(_ name: String) {
        self.name = name
    }

    /// The loop is alive and will beat again within `milliseconds` (plus a grace of a few seconds).
    public func beat(within milliseconds: Int64) {
        deadline.store(MonotonicMilliseconds.now() + milliseconds + Self.grace, ordering: .relaxed)
    }

    /// The loop finished on purpose (shutdown): never overdue.
    public func finish() { deadline.store(.max, ordering: .relaxed) }

    public func isOverdue(now: Int64 = MonotonicMilliseconds.now()) -> Bool {
        now > deadline.load(ordering: .relaxed)
    }

    /// Slack for scheduling delays on a loaded machine.
    public static let grace: Int64 = 5_000
}

/// A boolean shared between tasks.
public final class AtomicFlag: Sendable {
    private let value: Atomic<Bool>

    public init(_ initial: Bool = false) { value = Atomic(initial) }

    public func set(_ newValue: Bool = true) { value.store(newValue, ordering: .releasing) }
    public var isSet: Bool { value.load(ordering: .acquiring) }
}
