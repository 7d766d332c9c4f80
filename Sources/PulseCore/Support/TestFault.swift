#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Faults that tests switch on to prove the watchdog and crash recovery work. Never set in production.
///
/// `NETPULSE_TEST_FAULT=stall-LOOP-after-SECONDS` (for example `stall-sampling-after-5`) makes the named loop
/// block its thread for an hour the first time it runs after that many seconds of uptime, as a loop stuck in a
/// syscall would. `trap-applying-sequence-N` makes the daemon trap (as a bug in counting would) when its store is
/// about to apply a batch with sequence number N; `kill-after-journal-N` makes it kill itself (SIGKILL) right after
/// its N-th commit of the ingest journal, with those batches acknowledged and not yet applied to the store.
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

    /// Traps if a trap while applying a batch of `sequence` was requested (debug builds only).
    @inline(__always)
    public static func trapIfRequested(applyingSequence sequence: UInt64) {
        #if DEBUG
            if let wanted = number(after: "trap-applying-sequence-"), wanted == sequence {
                fatalError("test fault: trapping while applying batch \(sequence) (NETPULSE_TEST_FAULT)")
            }
        #endif
    }

    /// Whether the daemon should kill itself after its `commit`-th journal commit (debug builds only).
    @inline(__always)
    public static func killRequested(afterJournalCommit commit: Int) -> Bool {
        #if DEBUG
            return number(after: "kill-after-journal-").map { $0 == UInt64(commit) } ?? false
        #else
            return false
        #endif
    }

    #if DEBUG
        private static let text: String? = getenv("NETPULSE_TEST_FAULT").map { String(cString: $0) }

        /// The number after `prefix` in the fault's text, when the text starts with it.
        private static func number(after prefix: String) -> UInt64? {
            guard let text, text.hasPrefix(prefix) else { return nil }
            return UInt64(text.dropFirst(prefix.count))
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

        private static func stall(_ loop: Loop) {
            guard let requested, requested.loop == loop.rawValue,
                MonotonicMilliseconds.now() - start >= requested.after
            else { return }
            sleep(3_600)
        }
    #endif
}
