#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Faults that tests switch on to prove the watchdog and crash recovery work, as a value the executables hand to
/// the loops that have fault points. Production runs with ``none``.
///
/// `stall-LOOP-after-SECONDS` (for example `stall-sampling-after-5`) makes the named loop block its thread for an
/// hour the first time it runs after that many seconds of uptime, as a loop stuck in a syscall would.
/// `trap-applying-sequence-N` makes the daemon trap (as a bug in counting would) when its store is about to apply a
/// batch with sequence number N; `kill-after-journal-N` makes it kill itself (SIGKILL) right after its N-th commit
/// of the ingest journal, with those batches acknowledged and not yet applied to the store.
///
/// Only debug builds (what the tests run) can hold a fault, taken from the environment by ``TestEnvironment``: in a
/// release build the value is empty and every fault point is inlined away, so the loops operators run carry no test
/// switch at all (`build_release` in `scripts/lib/common.sh` checks that the variables' names are absent from the
/// release binaries).
public struct FaultPoints: Sendable {
    public enum Loop: String, Sendable {
        case sampling, sending
    }

    /// No fault: what release builds always run with.
    public static let none = FaultPoints()

    #if DEBUG
        private enum Fault: Sendable {
            case stall(Loop, afterMilliseconds: Int64)
            case trap(applyingSequence: UInt64)
            case kill(afterJournalCommit: UInt64)
        }

        private let fault: Fault?
        /// Monotonic milliseconds when the process started, for a stall's delay.
        private let start: Int64

        private init() {
            fault = nil
            start = 0
        }

        /// The fault that `text` names (see above); none when it names none. Debug builds only.
        ///
        /// - Parameter start: when the process started (monotonic milliseconds), for a stall's seconds of uptime.
        public init(_ text: String, start: Int64 = MonotonicMilliseconds.now()) {
            self.start = start
            let parts = text.split(separator: "-")
            if parts.count == 4, parts[0] == "stall", parts[2] == "after", let loop = Loop(rawValue: String(parts[1])),
                let seconds = Int64(parts[3])
            {
                fault = .stall(loop, afterMilliseconds: seconds * 1_000)
            } else if let sequence = Self.number(in: text, after: "trap-applying-sequence-") {
                fault = .trap(applyingSequence: sequence)
            } else if let commit = Self.number(in: text, after: "kill-after-journal-") {
                fault = .kill(afterJournalCommit: commit)
            } else {
                fault = nil
            }
        }

        /// The number after `prefix` in `text`, when the text starts with it.
        private static func number(in text: String, after prefix: String) -> UInt64? {
            guard text.hasPrefix(prefix) else { return nil }
            return UInt64(text.dropFirst(prefix.count))
        }
    #else
        private init() {}
    #endif

    /// Blocks the calling thread for an hour if a stall of `loop` was requested and is due.
    @inline(__always)
    public func stallIfRequested(_ loop: Loop) {
        #if DEBUG
            if case .stall(loop, let after) = fault, MonotonicMilliseconds.now() - start >= after {
                sleep(3_600)
            }
        #endif
    }

    /// Traps if a trap while applying a batch of `sequence` was requested.
    @inline(__always)
    public func trapIfRequested(applyingSequence sequence: UInt64) {
        #if DEBUG
            if case .trap(sequence) = fault {
                fatalError("test fault: trapping while applying batch \(sequence)")
            }
        #endif
    }

    /// Whether the daemon should kill itself after its `commit`-th journal commit.
    @inline(__always)
    public func killRequested(afterJournalCommit commit: Int) -> Bool {
        #if DEBUG
            if case .kill(UInt64(commit)) = fault { return true }
        #endif
        return false
    }
}
