import CSystemd

/// Tells systemd what the service is doing (`sd_notify(3)`): readiness, status lines, reloads, stopping, and
/// watchdog pings.
///
/// Every call is a no-op outside systemd (when `NOTIFY_SOCKET` is not set), so programs call it unconditionally.
/// Calls are cheap (one datagram) and thread-safe; they may be made from any thread, event loops included.
public enum SystemdNotifier {
    /// Whether a service manager is listening (the unit is `Type=notify` and `NOTIFY_SOCKET` is set).
    public static var isAvailable: Bool { Environment.value("NOTIFY_SOCKET") != nil }

    /// Sends raw `KEY=VALUE` lines; returns false when there is no manager or sending failed.
    @discardableResult
    public static func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    /// The service is up and working; `status` becomes its `STATUS=` line.
    public static func ready(status: String) {
        notify("READY=1\nSTATUS=\(sanitize(status))")
    }

    /// Replaces the `STATUS=` line shown by `systemctl status`.
    public static func status(_ status: String) {
        notify("STATUS=\(sanitize(status))")
    }

    /// A reload (SIGHUP) has begun; send ``ready(status:)`` when it is done.
    public static func reloading() {
        notify("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.microseconds())")
    }

    /// The service is shutting down.
    public static func stopping(status: String) {
        notify("STOPPING=1\nSTATUS=\(sanitize(status))")
    }

    /// Keeps the watchdog from firing; see ``Watchdog``.
    public static func watchdogPing() {
        notify("WATCHDOG=1")
    }

    /// Half of `WatchdogSec=` (the recommended ping period), or `nil` when the watchdog is off for this process.
    public static var watchdogPingInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds / 2))
    }

    /// A status line is one line: newlines would start new `KEY=VALUE` assignments.
    static func sanitize(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}

/// Sockets systemd opened for the service (socket activation, `sd_listen_fds(3)`).
///
/// The protocol is small (`LISTEN_PID`, `LISTEN_FDS`, descriptors from 3 on) and is read here rather than through
/// `sd_listen_fds`, which hard-codes the first descriptor: a test can then hand over sockets it opened itself at
/// descriptors it owns, instead of relying on whatever happens to be open at 3 and 4 in a test process.
public enum SocketActivation {
    /// Where systemd puts the first passed socket (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor = Int32(SD_LISTEN_FDS_START)

    /// The listening sockets passed by systemd, or an empty array when not socket-activated. Each call after the
    /// first returns nothing: the environment is cleared so child processes do not inherit the sockets, and the
    /// descriptors are marked close-on-exec.
    ///
    /// - Parameter first: the descriptor of the first socket; only tests pass anything but the default.
    public static func takeListeningSockets(first: Int32 = firstDescriptor) -> [Int32] {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = Environment.value("LISTEN_PID").flatMap({ Int32($0) }), pid == getpid(),
            let count = Environment.value("LISTEN_FDS").flatMap({ Int32($0) }), count > 0, count < 1_024
        else { return [] }
        var descriptors = [Int32]()
        for descriptor in first..<first + count {
            let flags = fcntl(descriptor, F_GETFD)
            // Not open: the environment does not describe this process's descriptors; use none of them.
            guard flags >= 0, fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0 else { return [] }
            descriptors.append(descriptor)
        }
        return descriptors
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
