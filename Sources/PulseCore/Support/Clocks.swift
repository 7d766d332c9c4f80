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

/// Wall-clock time in milliseconds since the Unix epoch, as a value handed to whatever reads the time.
///
/// Each executable makes one at its start (``system``, or in a debug build the stepping clock the tests ask for:
/// ``TestEnvironment``) and passes it to the services and loops that date things, so no library reads a global
/// switch to learn what time it is. Deadlines use ``MonotonicMilliseconds`` instead, which never steps.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock that reads the time from `read` (milliseconds since the Unix epoch).
    public init(_ read: @escaping @Sendable () -> Int64) { self.read = read }

    /// Milliseconds since the Unix epoch.
    public func now() -> Int64 { read() }

    /// The system's real-time clock (CLOCK_REALTIME).
    public static let system = WallClock {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

#if DEBUG
    extension WallClock {
        /// The system clock plus a number of milliseconds (possibly negative) read from the file at `path`, read again
        /// at most every 50 ms: a test steps a running process's clock by rewriting the file. Debug builds only.
        public static func stepped(byOffsetIn path: String) -> WallClock {
            let offset = OffsetFile(path: path)
            return WallClock { system.now() + offset.current() }
        }
    }

    /// The last offset read from a file, and when it was read (monotonic milliseconds).
    private final class OffsetFile: Sendable {
        let path: String
        private let cache = Mutex<(offset: Int64, readAt: Int64?)>((0, nil))

        init(path: String) { self.path = path }

        func current() -> Int64 {
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
