import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Wall-clock time in milliseconds since the Unix epoch.
public enum WallClock {
    public static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A loop's heartbeat: the loop marks progress, a watchdog checks that it did recently.
public final class ProgressMarker: Sendable {
    private let last = Atomic<Int64>(0)

    public init() {}

    public func mark() { last.store(WallClock.milliseconds(), ordering: .relaxed) }

    /// Milliseconds since the last mark, or `nil` before the first.
    public func age(now: Int64 = WallClock.milliseconds()) -> Int64? {
        let value = last.load(ordering: .relaxed)
        return value == 0 ? nil : now - value
    }
}

/// A boolean shared between tasks.
public final class AtomicFlag: Sendable {
    private let value: Atomic<Bool>

    public init(_ initial: Bool = false) { value = Atomic(initial) }

    public func set(_ newValue: Bool = true) { value.store(newValue, ordering: .releasing) }
    public var isSet: Bool { value.load(ordering: .acquiring) }
}
