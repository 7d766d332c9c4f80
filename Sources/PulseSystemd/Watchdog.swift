import Logging
import PulseCore

/// Pings systemd's watchdog only while every loop the service depends on is making progress.
///
/// Every half `WatchdogSec=` it checks each loop's ``LoopHeartbeat``; if one is overdue it stops pinging (and says
/// which loop in the status line), so systemd restarts the service once `WatchdogSec=` passes. Outside systemd,
/// or with the watchdog off, ``run()`` returns at once.
public struct Watchdog: Sendable {
    public let loops: [LoopHeartbeat]
    let logger: Logger

    public init(loops: [LoopHeartbeat], logger: Logger) {
        self.loops = loops
        self.logger = logger
    }

    /// Runs until its task is cancelled.
    public func run() async {
        guard let interval = SystemdNotifier.watchdogPingInterval else { return }
        var reported = Set<String>()
        while !Task.isCancelled {
            let overdue = loops.filter { $0.isOverdue() }.map(\.name)
            if overdue.isEmpty {
                SystemdNotifier.watchdogPing()
                reported.removeAll()
            } else if Set(overdue) != reported {
                reported = Set(overdue)
                let names = overdue.joined(separator: ", ")
                logger.critical("loop stalled: \(names); no more watchdog pings, systemd will restart the service")
                SystemdNotifier.status("stalled: \(names) loop made no progress")
            }
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
        }
    }
}
