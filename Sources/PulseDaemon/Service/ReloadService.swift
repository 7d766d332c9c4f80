import Logging
import PulseCore
import PulseSystemd
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// SIGHUP: re-reads the config file and the certificates it names. New connections get the new certificates and
/// agents' labels follow the new `[labels.*]` from their next connection; established connections carry on. Other
/// settings need a restart, which the log says.
final class ReloadService: Service, Sendable {
    let configPath: String?
    let current: CurrentConfig
    let tls: TLSContextBox
    let status: StatusService
    let logger: Logger

    init(configPath: String?, current: CurrentConfig, tls: TLSContextBox, status: StatusService, logger: Logger) {
        self.configPath = configPath
        self.current = current
        self.tls = tls
        self.status = status
        self.logger = logger
    }

    func run() async throws {
        for await _ in SignalEvents([SIGHUP]).cancelOnGracefulShutdown() { reload() }
    }

    private func reload() {
        SystemdNotifier.reloading()
        do {
            let running = current.value
            let fresh = try configPath.map { try DaemonConfig.load(path: $0) } ?? running
            try tls.reload(fresh.tls)
            var others = fresh
            others.tls = running.tls
            others.labels = running.labels
            let restartNote =
                others == running ? "" : "; settings other than [tls] and [labels.*] take effect after a restart"
            var applied = running
            applied.tls = fresh.tls
            applied.labels = fresh.labels
            current.replace(applied)
            logger.notice("reloaded: new connections use the certificates in \(fresh.tls.certificate)\(restartNote)")
            SystemdNotifier.ready(status: status.line())
        } catch {
            logger.error("reload failed, keeping the running configuration and certificates: \(error)")
            SystemdNotifier.ready(status: "reload failed, running the previous configuration: \(error)")
        }
    }
}
