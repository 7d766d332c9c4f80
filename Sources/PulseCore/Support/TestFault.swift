#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Faults that tests switch on to prove the watchdog works. Never set in production.
///
/// `NETPULSE_TEST_FAULT=stall-LOOP-after-SECONDS` (for example `stall-sampling-after-5`) makes the named loop
/// block its thread for an hour the first time it runs after that many seconds of uptime, as a loop stuck in a
/// syscall would.
///
/// Only debug builds (what the tests run) have them: in a release build ``stallIfRequested(_:)`` is empty and
/// inlined away, so the loops operators run carry no test switch at all (`build_release` in
/// `scripts/lib/common.sh` checks that the variable's name is absent from the release binaries).
public enum TestFault {
    public enum Loop: String, Sendable {
        case sampling, sending
    }

    /// Blocks the calling thread for an hour if a stall of `loop` was requested and is due (debug builds only).
    @inline(__always)
    public static func stallIfRequested(_ loop: Loop) {
        #if DEBUG
            stall(loop)
        #endif
    }

    #if DEBUG
        private static let requested: (loop: String, after: Int64)? = {
            guard let raw = getenv("NETPULSE_TEST_FAULT") else { return nil }
            let text = String(cString: raw)
            let parts = text.split(separator: "-")
            guard parts.count == 4, parts[0] == "stall", parts[2] == "after", let seconds = Int64(parts[3]) else {
                return nil
            }
            return (String(parts[1]), seconds * 1_000)
        }()
        private static let start = MonotonicMilliseconds.now()

        private static func stall(_ loop: Loop) {
            guard let requested, requested.loop == loop.rawValue,
                MonotonicMilliseconds.now() - start >= requested.after
            else { return }
            sleep(3_600)
        }
    #endif
}
