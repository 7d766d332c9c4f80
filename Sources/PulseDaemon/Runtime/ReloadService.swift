import Logging
import PulseCertificates
import PulseCore
import PulseSettings
import PulseStore
import PulseSystemd
import ServiceLifecycle
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// SIGHUP: re-reads the config file and the certificates it names. New connections get the new certificates and
/// the new revocation list (`[tls] revoked`), and open connections whose certificate it names are closed;
/// agents' labels follow the new `[labels.*]` at once: known agents are moved to their new groups when the reload is
/// read (``LabelMoves``), and connected ones carry the new labels from their next batch. Alert
/// rules and notification settings (`[alert.*]`, `[alerts]`) apply from the next evaluation, unchanged rules
/// keeping their pending and firing alerts. Other settings need a restart, which the log says.
final class ReloadService: Service, Sendable {
    let configPath: String?
    let current: CurrentConfig
    let tls: TLSContextBox
    /// The open connections, closed when a reloaded revocation list names their certificate.
    let registry: ConnectionRegistry?
    let status: StatusService
    let store: any MetricStore
    let clock: WallClock
    let logger: Logger

    init(
        configPath: String?, current: CurrentConfig, tls: TLSContextBox, registry: ConnectionRegistry? = nil,
        status: StatusService, store: any MetricStore, clock: WallClock, logger: Logger
    ) {
        self.registry = registry
        self.clock = clock
        self.configPath = configPath
        self.current = current
        self.tls = tls
        self.status = status
        self.store = store
        self.logger = logger
    }

    func run() async throws {
        for await _ in SignalEvents([SIGHUP]).cancelOnGracefulShutdown() {
            guard let applied = reload() else { continue }
            // Ready again once the agents are in their new groups.
            await LabelMoves.apply(applied, to: store, at: clock.now(), logger: logger)
            SystemdNotifier.ready(status: status.line())
        }
    }

    /// The configuration now in force, or nil when the reload failed.
    private func reload() -> DaemonConfig? {
        SystemdNotifier.reloading()
        do {
            let running = current.value
            // Without [daemon] time_zone, the zone the daemon runs in (recorded in the store) stays.
            let fresh =
                try configPath.map {
                    try DaemonConfig.load(path: $0).resolvingTimeZone(recorded: running.calendar.name).config
                }
                ?? running
            try tls.reload(fresh.tls, revoked: fresh.revoked, enrollment: fresh.enrollment)
            logger.notice("\(tls.renewalLine(fresh.enrollment))")
            for warning in tls.warnings { logger.warning("\(warning)") }
            let revoked = tls.check.revoked
            registry?.closeConnections(
                refusing: { der in
                    (try? Certificate(derEncoded: der)).flatMap { revoked.entry(for: $0) }.map {
                        $0.serial == RevocationList.everySerial
                            ? "was revoked with every certificate of its name\($0.when)"
                            : "(serial \($0.serial)) was revoked\($0.when)"
                    }
                },
                closed: { [logger] agent, reason in
                    logger.warning("closed the connection of agent \(agent): its certificate \(reason)")
                })
            var others = fresh
            others.tls = running.tls
            others.revoked = running.revoked
            others.enrollment = running.enrollment
            // The zone is compared as resolved (``calendar``), not as written: a setting removed that names the
            // recorded zone changes nothing.
            others.timeZoneSetting = running.timeZoneSetting
            others.labels = running.labels
            others.alerts = running.alerts
            let restartNote =
                others == running
                ? ""
                : "; settings other than [tls], [enrollment], [labels.*], [alerts] and [alert.*] take effect after a restart"
            var applied = running
            applied.tls = fresh.tls
            applied.revoked = fresh.revoked
            applied.enrollment = fresh.enrollment
            applied.labels = fresh.labels
            applied.alerts = fresh.alerts
            current.replace(applied)
            let changedRules = Set(fresh.alerts.rules.map(\.digest)).symmetricDifference(
                running.alerts.rules.map(\.digest))
            logger.notice(
                "reloaded: new connections use the certificates in \(fresh.tls.certificate); \(fresh.alerts.rules.count) alert rules (\(changedRules.isEmpty ? "unchanged" : "changed"))\(restartNote)"
            )
            return applied
        } catch {
            logger.error("reload failed, keeping the running configuration and certificates: \(error)")
            SystemdNotifier.ready(status: "reload failed, running the previous configuration: \(error)")
            return nil
        }
    }
}
