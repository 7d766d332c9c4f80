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
public enum SocketActivation {
    /// The listening sockets passed by systemd, or an empty array when not socket-activated. Each call after the
    /// first returns nothing: the environment is cleared so child processes do not inherit the sockets.
    public static func takeListeningSockets() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { SD_LISTEN_FDS_START + $0 }
    }
}
