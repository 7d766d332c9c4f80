import Logging
import NIOCore
import NIOPosix
import PulseCore
import PulseStore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The daemon's pieces and its services, one `Service` per loop, for one `ServiceGroup` (built by `netpulsed`).
///
/// Services shut down in reverse order: the helpers first, then the listener (which stops accepting, waits for
/// the ingest queue to be committed and acknowledged, then says goodbye to every agent), then ingest.
public struct DaemonRuntime: Sendable {
    public let config: DaemonConfig
    public let store: any MetricStore
    public let queue: IngestQueue
    public let registry: ConnectionRegistry
    public let ingest: IngestService
    public let listener: ListenerService
    /// The daemon's own metrics, and their HTTP endpoint when `[metrics] listen` is set.
    public let metrics: DaemonMetrics
    /// Whether this daemon leads (always with SQLite; the lease's holder on PostgreSQL).
    let leadership: Leadership
    let metricsService: MetricsService?
    let remoteWriteService: RemoteWriteService?

    /// Opens the store (migrating an older one) and makes the services; nothing runs yet.
    ///
    /// - Parameter onListening: called with the bound address once agents can connect (tests).
    public init(
        config: DaemonConfig, configPath: String?, logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }
    ) async throws {
        // A notification command that exits without reading its input must not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
        self.config = config
        self.configPath = configPath
        self.logger = logger
        current = CurrentConfig(config)
        for warning in config.warnings { logger.warning("\(warning)") }
        store = try await Self.openStore(config, logger: logger)
        leadership = Leadership(leading: !(store is PostgresStore))
        queue = IngestQueue(limit: config.queueLimit, byteLimit: config.queueBytes)
        let registry = ConnectionRegistry()
        self.registry = registry
        let metrics = DaemonMetrics()
        self.metrics = metrics
        // The journal acknowledges batches before the store's larger commits apply them (IngestJournal). On
        // PostgreSQL each daemon acknowledges only what the shared database holds, so that another daemon can take
        // over without this one's disk.
        let journal = try (store as? SQLiteStore).map { store in
            try IngestJournal(
                path: IngestJournal.path(forStore: config.storePath),
                synchronous: config.store.synchronous,
                after: try store.journalApplied())
        }
        // Beside the journal on SQLite; on PostgreSQL (no journal) in the state directory.
        ingest = IngestService(
            store: store, journal: journal, queue: queue, logger: logger, commitDelay: config.commitDelay,
            paceThreshold: config.paceThreshold, metrics: metrics,
            markerPath: journal == nil ? config.stateDirectory + "/netpulse-apply.marker" : nil,
            onPace: { registry.broadcast($0) })
        if let url = config.remoteWrite.url {
            do {
                remoteWriteService = try RemoteWriteService(
                    store: store, config: config, url: url, metrics: metrics, logger: logger)
            } catch {
                throw DaemonError("remote write cannot start: \(error) ([remote_write])")
            }
        } else {
            remoteWriteService = nil
            // On PostgreSQL the leader does it when it takes the lease (daemons of one database may differ here).
            if let store = store as? SQLiteStore, try store.stopForwarding() {
                logger.notice("remote write is off: its state is cleared (a later [remote_write] starts afresh)")
            }
        }
        if let address = config.metricsListen {
            metricsService = try MetricsService(
                address: address, metrics: metrics,
                sources: DaemonMetrics.Sources(
                    registry: registry, queue: queue, ingest: ingest, store: store, leadership: leadership),
                logger: logger)
        } else {
            metricsService = nil
        }
        let current = self.current
        let labelValues = LabelValueLimit()
        listener = try ListenerService(
            config: config, queue: queue, registry: registry, logger: logger,
            labelPolicy: { [logger] agent, sent in
                // Of what the agent may set itself, only a bounded number of distinct values (`[limits]`).
                let config = current.value
                let (admitted, refused) = labelValues.admit(
                    agent: agent, config.effectiveLabels(agent: agent, sent: sent, ownLabels: false),
                    limit: config.agentLimits.labelValues)
                if !refused.isEmpty,
                    let line = registry.limitRefusals.refused(
                        agent: agent, .labelValues,
                        "ignoring its new label(s) \(refused.joined(separator: ", ")), kept its earlier ones")
                {
                    logger.warning("\(line)")
                }
                return config.effectiveLabels(agent: agent, sent: admitted)
            },
            onListening: onListening)
    }

    let configPath: String?
    let logger: Logger
    let current: CurrentConfig

    /// The SQLite file, or the PostgreSQL database when `[store] postgresql` is set.
    static func openStore(_ config: DaemonConfig, logger: Logger) async throws -> any MetricStore {
        guard let location = try config.postgresLocation() else {
            return try SQLiteStore(path: config.storePath, settings: config.store)
        }
        let store = try await PostgresStore(
            location: location, settings: config.store, idleTransactionTimeout: config.leaseLength, logger: logger)
        logger.notice(
            "store: PostgreSQL at \(location); the daemon holding the leader lease keeps bills, alerts, remote write, dashboards and snapshots"
        )
        await checkReplication(store, logger: logger)
        return store
    }

    /// Says at start whether a failover of the PostgreSQL server could lose batches this daemon acknowledges
    /// (asynchronous standbys only, or commits that do not wait for them): a warning naming what to set, or one
    /// line saying the standbys are synchronous. A server that cannot say is no reason not to start.
    static func checkReplication(_ store: PostgresStore, logger: Logger) async {
        do {
            let replication = try await store.replication()
            if let warning = replication.warning {
                logger.warning("store: \(warning)")
            } else if replication.hasSynchronousStandby {
                logger.notice(
                    "store: PostgreSQL replicates synchronously (\(replication.standbysText)): a failover to a synchronous standby loses no acknowledged batch"
                )
            } else if replication.streaming.isEmpty {
                logger.info("store: the PostgreSQL server has no standby connected; \(PostgresReplication.requirement)")
            }
        } catch {
            logger.notice(
                "store: cannot read the PostgreSQL server's replication state (\(error)); \(PostgresReplication.requirement)"
            )
        }
    }

    /// `service` as it runs in this daemon: only while it leads (``LeaderOnly``), or always with SQLite.
    func leaderOnly(_ service: any Service) -> any Service {
        store is PostgresStore ? LeaderOnly(service, leadership: leadership) : service
    }

    /// The services in start order, with what their ending means for the group. Call once.
    public func makeServices() -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let notifier = NotifierService(
            store: store, current: current, logger: logger, group: MultiThreadedEventLoopGroup.singleton)
        let status = StatusService(
            loops: [ingest.heartbeat, ingest.applyHeartbeat] + listener.loopHeartbeats + notifier.heartbeats,
            registry: registry, ingest: ingest, store: store, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: ingest),
            .init(service: listener, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: leaderOnly(RetentionService(store: store, policy: config.retention, logger: logger))),
            .init(service: leaderOnly(BillingService(store: store, config: config, logger: logger, metrics: metrics))),
            .init(service: leaderOnly(AlertService(store: store, current: current, logger: logger, metrics: metrics))),
            .init(service: leaderOnly(notifier)),
            .init(
                service: ReloadService(
                    configPath: configPath, current: current, tls: listener.tls, status: status, logger: logger)),
            .init(service: status, successTerminationBehavior: .ignore),
        ]
        if config.snapshots.enabled {
            services.insert(
                .init(service: leaderOnly(SnapshotService(store: store, config: config, logger: logger))), at: 2)
        }
        if config.dashboards.enabled {
            let (queue, applying) = (self.queue, ingest.backlog)
            services.insert(
                .init(
                    service: leaderOnly(
                        DashboardService(
                            store: store, config: config, logger: logger, metrics: metrics,
                            ingestBacklog: { (queue.backlogAge, applying.age) }))), at: 2)
        }
        if let remoteWriteService {
            services.insert(.init(service: leaderOnly(remoteWriteService)), at: 2)
        }
        if let store = store as? PostgresStore {
            let (logger, forwarding) = (logger, config.remoteWrite.url != nil)
            let lease = LeaseService(
                store: store, leadership: leadership, length: config.leaseLength, name: config.name, logger: logger
            ) {
                // Remote write turned off in the leader's config: its state is cleared, as a SQLite daemon clears it
                // at start (a later [remote_write] starts afresh).
                guard !forwarding else { return }
                do {
                    if try await store.stopForwarding() {
                        logger.notice(
                            "remote write is off: its state is cleared (a later [remote_write] starts afresh)")
                    }
                } catch {
                    logger.warning("remote write is off, but its state could not be cleared: \(error)")
                }
            }
            services.insert(.init(service: lease), at: 2)
        }
        if let metricsService {
            services.insert(.init(service: metricsService), at: 2)
        }
        return services
    }
}

/// The config in force, replaced on reload (only the parts that apply without a restart are read from it).
final class CurrentConfig: Sendable {
    private let state: Mutex<DaemonConfig>
    init(_ config: DaemonConfig) { state = Mutex(config) }
    var value: DaemonConfig { state.withLock { $0 } }
    func replace(_ config: DaemonConfig) { state.withLock { $0 = config } }
}

/// A daemon start-up failure with a message for the operator.
public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
