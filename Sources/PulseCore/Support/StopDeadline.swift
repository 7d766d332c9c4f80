import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Ends the process when a stop takes longer than it may, whatever is holding it up.
///
/// A program calls ``start(budget:stage:onExpiry:)`` when it receives its stop signal, then says which stage of the
/// stop it is in with ``enter(_:)``. If the process has not exited once `budget` has passed, `onExpiry` is called
/// with the current stage (to log what did not finish) and the process exits with status 0 at once (`_exit`, no
/// atexit handlers, since a thread that is stuck may hold a lock they need).
///
/// The deadline runs on a thread of its own, sleeping on the monotonic clock: a timer task on the cooperative pool, or
/// a Dispatch timer, would not fire if the thing that hangs is the pool or Dispatch itself, and under systemd a stop
/// that never ends waits for `TimeoutStopSec=` and ends in SIGKILL.
///
/// Only call it once everything a later start needs is durable: exiting here must lose nothing.
public final class StopDeadline: Sendable {
    private let stage: Mutex<String>

    private init(stage: String) {
        self.stage = Mutex(stage)
    }

    /// Starts the deadline; the returned object records the stage the stop is in.
    ///
    /// - Parameters:
    ///   - budget: how long the stop may take from now.
    ///   - stage: what the stop does first, in words for the log ("closing the open batch into the spool").
    ///   - onExpiry: called on the deadline's thread with the stage the stop was in; it should only log.
    public static func start(
        budget: Duration, stage: String, onExpiry: @escaping @Sendable (_ stage: String) -> Void
    ) -> StopDeadline {
        let deadline = StopDeadline(stage: stage)
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let nanoseconds = Int(end.tv_nsec) + Int(budget.components.attoseconds / 1_000_000_000)
        end.tv_sec += Int(budget.components.seconds) + nanoseconds / 1_000_000_000
        end.tv_nsec = nanoseconds % 1_000_000_000
        let sleeper = Sleeper(until: end) { onExpiry(deadline.stage.withLock { $0 }) }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(sleeper).toOpaque()
        if pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Sleeper>.fromOpaque(context!).takeRetainedValue().run()
            }, context) == 0
        {
            pthread_detach(thread)
        } else {
            // Without a thread there is no deadline; the stop goes on as it would have without one.
            Unmanaged<Sleeper>.fromOpaque(context).release()
        }
        return deadline
    }

    /// Records the stage the stop is in now, for the log line should the deadline pass.
    public func enter(_ stage: String) {
        self.stage.withLock { $0 = stage }
    }

    private final class Sleeper: Sendable {
        let end: timespec
        let onExpiry: @Sendable () -> Void

        init(until end: timespec, onExpiry: @escaping @Sendable () -> Void) {
            self.end = end
            self.onExpiry = onExpiry
        }

        func run() -> Never {
            var end = self.end
            // An absolute deadline: a signal that interrupts the sleep does not lengthen it.
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, nil) == EINTR {}
            onExpiry()
            _exit(0)
        }
    }
}
