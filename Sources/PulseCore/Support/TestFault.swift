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
public enum TestFault {
    public enum Loop: String, Sendable {
        case sampling, sending
    }

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

    /// Blocks the calling thread for an hour if a stall of `loop` was requested and is due.
    public static func stallIfRequested(_ loop: Loop) {
        guard let requested, requested.loop == loop.rawValue,
            MonotonicMilliseconds.now() - start >= requested.after
        else { return }
        sleep(3_600)
    }
}
