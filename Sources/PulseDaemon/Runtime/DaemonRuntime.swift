import Logging
import NIOCore
import NIOPosix
import PulseCore
import PulseSettings
import PulseStore
import PulseStoreBackends
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The daemon's pieces and its services, one `Service` per loop, for one `ServiceGroup` (run by ``run()``).
///
/// Services shut down in reverse order: the helpers first, then the listener (which stops accepting, waits for
/// the ingest queue to be committed and acknowledged, then says goodbye to every agent), then ingest.
public struct DaemonRuntime: Sendable {
    /// How long the services have to stop gracefully after SIGTERM before they are cancelled: ingest then commits
    /// nothing more (what it held is not acknowledged, and its agents send it again) and its applier stops after
    /// the store commit under way, leaving the rest journaled for the next start.
    static let gracefulStopBudget = Duration.milliseconds(1_000)
    /// How long a stop may take from SIGTERM; past it the daemon exits anyway (``StopDeadline``).
    static let stopBudget = Duration.milliseconds(1_500)

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
    /// `[http]`: one per listener (the Unix socket, TCP).
    let httpServices: [any Service]
    let remoteWriteService: RemoteWriteService?
    /// One catalogue for the readers that run all the time: alert rounds, the API and the live pages.
    let catalogues = CatalogueCache()
    /// The reads someone waits for (live pages, the API), which the snapshot and drawing give way to.
    let interactive = InteractiveReads()

    /// Opens the store (migrating an older one) and makes the services; nothing runs yet.
    ///
    /// - Parameters:
    ///   - clock: the wall clock every service dates things by (batches received, bills, alerts, files written).
    ///   - faults: the fault points ingest stops at (tests of debug builds).
    ///   - onListening: called with the bound address once agents can connect (tests).
    ///   - onHTTPListening: called with each HTTP listener's URL (`unix:PATH`, `https://HOST:PORT`) once it serves.
    public init(
        config: DaemonConfig, configPath: String?, logger: Logger, clock: WallClock, faults: FaultPoints,
        onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in },
        onHTTPListening: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws {
        // A notification command that exits without reading its input must not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
        for warning in config.warnings { logger.warning("\(warning)") }
        // systemd makes it (StateDirectory=); a daemon started by hand on PostgreSQL, whose store is elsewhere, keeps
        // only its apply marker and published files there.
        try FileIO.createDirectory(config.stateDirectory, mode: 0o750)
        store = try await Self.openStore(config, logger: logger)
        // The zone of calendar windows and bills: the file's, the one the store's bills were cut in, or the system's.
        let zone = config.resolvingTimeZone(recorded: try await store.recordedTimeZone())
        if let record = zone.record { try await store.recordTimeZone(record) }
        logger.notice("time zone \(zone.config.calendar.name): \(zone.source)")
        let config = zone.config
        self.config = config
        self.configPath = configPath
        self.logger = logger
        self.clock = clock
        current = CurrentConfig(config)
        // Agents moved in [labels.*] while the daemon was down move now, not when they next send.
        await LabelMoves.apply(config, to: store, at: clock.now(), logger: logger)
        leadership = Leadership(leading: !(store is any SharedStore))
        queue = IngestQueue(limit: config.queueLimit, byteLimit: config.queueBytes)
        let registry = ConnectionRegistry()
        self.registry = registry
        let metrics = DaemonMetrics()
        self.metrics = metrics
        // The journal acknowledges batches before the store's larger commits apply them (JournaledStore). On
        // PostgreSQL each daemon acknowledges only what the shared database holds, so that another daemon can take
        // over without this one's disk.
        let journal = try (store as? any JournaledStore)?.openJournal()
        let announcer = BucketAnnouncer(clock: clock, generation: { [store] in store.dataGeneration() })
        // Beside the journal on SQLite; on PostgreSQL (no journal) in the state directory.
        ingest = IngestService(
            store: store, journal: journal, queue: queue, logger: logger, commitDelay: config.commitDelay,
            paceThreshold: config.paceThreshold, metrics: metrics,
            markerPath: journal == nil ? config.stateDirectory + "/netpulse-apply.marker" : nil, clock: clock,
            faults: faults, onPace: { registry.broadcast($0) }, onStored: { announcer.stored($0) })
        if let url = config.remoteWrite.url {
            do {
                remoteWriteService = try RemoteWriteService(
                    store: store, config: config, url: url, metrics: metrics, clock: clock, logger: logger)
            } catch {
                throw DaemonError("remote write cannot start: \(error) ([remote_write])")
            }
        } else {
            remoteWriteService = nil
            // On PostgreSQL the leader does it when it takes the lease (daemons of one database may differ here).
            if store is any JournaledStore, try await store.stopForwarding() {
                logger.notice("remote write is off: its state is cleared (a later [remote_write] starts afresh)")
            }
        }
        let sources = DaemonMetrics.Sources(
            registry: registry, queue: queue, ingest: ingest, store: store, leadership: leadership, clock: clock,
            certificates: { [configuration = self.current] in
                let config = configuration.value
                var files = [(role: "daemon", path: config.tls.certificate), (role: "ca", path: config.tls.ca)]
                if let http = config.http.files, http.certificate != config.tls.certificate {
                    files.append((role: "http", path: http.certificate))
                }
                return files
            })
        if let address = config.metricsListen {
            metricsService = try await MetricsService(
                address: address, metrics: metrics, sources: sources, logger: logger)
        } else {
            metricsService = nil
        }
        if let warning = config.http.plainTextWarning { logger.warning("\(warning)") }
        // The agents' listener and the HTTP server refuse the same revoked certificates, reloaded together.
        let tls = try TLSContextBox(config.tls, revoked: config.revoked, enrollment: config.enrollment)
        logger.notice("\(tls.renewalLine(config.enrollment))")
        for warning in tls.warnings { logger.warning("\(warning)") }
        httpServices = try HTTPServer.services(
            config.http, revoked: { tls.check.revoked },
            routes: HTTPRoutes(
                store: store, config: config, clock: clock, metrics: metrics, sources: sources,
                announcer: announcer, catalogues: catalogues, interactive: interactive, logger: logger),
            logger: logger, onListening: onHTTPListening)
        let current = self.current
        let labelValues = LabelValueLimit()
        listener = try ListenerService(
            config: config, tls: tls, queue: queue, registry: registry, logger: logger,
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
            labelGeneration: { current.generation },
            onListening: onListening)
    }

    let configPath: String?
    let logger: Logger
    let clock: WallClock
    let current: CurrentConfig
    /// The services still running, for the stop's deadline to name.
    let running = RunningServices()

    /// The SQLite file, or the PostgreSQL database when `[store] postgresql` is set.
    static func openStore(_ config: DaemonConfig, logger: Logger) async throws -> any MetricStore {
        let location = try config.postgresLocation()
        let store = try await StoreBackends.open(
            path: config.storePath, postgres: location, settings: config.store,
            idleTransactionTimeout: config.leaseLength, logger: logger)
        if let location, let store = store as? any SharedStore {
            logger.notice(
                "store: PostgreSQL at \(location); the daemon holding the leader lease keeps bills, alerts, remote write, dashboards and snapshots"
            )
            await checkReplication(store, logger: logger)
        }
        return store
    }

    /// Says at start whether a failover of the PostgreSQL server could lose batches this daemon acknowledges
    /// (asynchronous standbys only, or commits that do not wait for them): a warning naming what to set, or one
    /// line saying the standbys are synchronous. A server that cannot say is no reason not to start.
    static func checkReplication(_ store: any SharedStore, logger: Logger) async {
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
        store is any SharedStore ? LeaderOnly(service, leadership: leadership) : service
    }

    /// The services in start order, with what their ending means for the group. Call once.
    public func makeServices() -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let notifier = NotifierService(
            store: store, current: current, clock: clock, logger: logger, group: MultiThreadedEventLoopGroup.singleton)
        let status = StatusService(
            loops: [ingest.heartbeat, ingest.applyHeartbeat] + listener.loopHeartbeats + notifier.heartbeats,
            registry: registry, ingest: ingest, store: store, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: ingest),
            .init(service: listener, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(
                service: leaderOnly(
                    RetentionService(store: store, policy: config.retention, clock: clock, logger: logger))),
            .init(
                service: leaderOnly(
                    BillingService(store: store, config: config, clock: clock, logger: logger, metrics: metrics))),
            .init(
                service: leaderOnly(
                    AlertService(
                        store: store, current: current, clock: clock, logger: logger, metrics: metrics,
                        catalogues: catalogues, certificateExpiries: { registry.certificateExpiries }))),
            // Its loops wait a second between rounds without watching for a stop; cancelled, it ends at once, and
            // a notification whose delivery is cut short stays queued in the store for the next start.
            .init(service: leaderOnly(CancelledOnStop(notifier))),
            .init(
                service: ReloadService(
                    configPath: configPath, current: current, tls: listener.tls, registry: registry, status: status,
                    store: store,
                    clock: clock, logger: logger)),
            .init(service: status, successTerminationBehavior: .ignore),
        ]
        // The snapshot and drawing wait, between their parts, while ingest is behind or someone waits for a page.
        let (queue, applying, interactive) = (self.queue, ingest.backlog, self.interactive)
        let giveWay: @Sendable () -> Bool = {
            interactive.busy || DashboardService.behind(committing: queue.backlogAge, applying: applying.age)
        }
        if config.snapshots.enabled {
            let snapshots = SnapshotService(
                store: store, config: config, clock: clock, logger: logger, giveWay: giveWay)
            services.insert(.init(service: leaderOnly(snapshots)), at: 2)
        }
        if config.dashboards.enabled {
            services.insert(
                .init(
                    service: leaderOnly(
                        DashboardService(
                            store: store, config: config, clock: clock, logger: logger, metrics: metrics,
                            giveWay: giveWay))), at: 2)
        }
        if let remoteWriteService {
            services.insert(.init(service: leaderOnly(remoteWriteService)), at: 2)
        }
        if let store = store as? any SharedStore {
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
        for service in httpServices {
            services.insert(.init(service: service), at: 2)
        }
        return services.map { configuration in
            var tracked = configuration
            tracked.service = Tracked(configuration.service, running: running)
            return tracked
        }
    }

    /// Runs the services until SIGTERM or SIGINT, then stops them gracefully: the helpers end, the listener stops
    /// accepting, acknowledges only what is stored (journaled) and closes every connection, ingest finishes.
    ///
    /// The stop ends within ``stopBudget`` whatever happens: past ``gracefulStopBudget`` the services are cancelled,
    /// and past ``stopBudget`` the daemon exits anyway. Nothing is lost either way: a batch is acknowledged only once
    /// it is durable in the journal (or the store), what is journaled and not yet applied is applied by the next
    /// start, and what was not yet acknowledged is sent again by its agent. A second SIGTERM or SIGINT ends the
    /// daemon at once.
    public func run() async throws {
        let stops = SignalEvents([SIGTERM, SIGINT])
        var configuration = ServiceGroupConfiguration(services: makeServices(), logger: logger)
        configuration.maximumGracefulShutdownDuration = Self.gracefulStopBudget
        let group = ServiceGroup(configuration: configuration)
        let stopping = AtomicFlag()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                var signals = stops.makeAsyncIterator()
                guard let signal = await signals.next() else { return }
                stopping.set()
                beginStop(signal, stops: stops)
                await group.triggerGracefulShutdown()
            }
            do {
                try await group.run()
            } catch  where stopping.isSet {
                // Cancelled past the graceful budget, a service may end with an error: the stop goes on all the same.
                logger.warning("a service ended with an error while stopping: \(error)")
            }
            tasks.cancelAll()
        }
    }

    /// Says the daemon is stopping, starts the stop's deadline, and makes a second stop signal end the process.
    private func beginStop(_ signal: Int32, stops: SignalEvents) {
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        // If the stop's deadline ends the process mid-apply, that is no batch's fault.
        ingest.marker?.stop()
        logger.notice(
            "\(name): stopping (storing and acknowledging what arrived; a second \(name) ends the daemon at once)")
        let (logger, budget, running, backlog) = (self.logger, Self.stopBudget, self.running, ingest.backlog)
        _ = StopDeadline.start(budget: budget, stage: "stopping") { _ in
            // Whatever is acknowledged is in the journal or the store, and the next start applies what the journal
            // holds; what was not acknowledged its agents send again. Exiting now loses nothing.
            let journaled =
                backlog.count > 0 ? "; \(backlog.count) journaled batch(es) not yet applied, for the next start" : ""
            logger.warning(
                "the stop took longer than \(budget); still running: \(running.names.joined(separator: ", "))\(journaled); exiting now"
            )
        }
        stops.restoreDefaultActions()
    }
}

/// The services still running, in start order.
final class RunningServices: Sendable {
    private let running = Mutex<[String]>([])

    var names: [String] { running.withLock { $0 } }

    func started(_ name: String) { running.withLock { $0.append(name) } }

    func ended(_ name: String) {
        running.withLock { names in
            if let index = names.firstIndex(of: name) { names.remove(at: index) }
        }
    }
}

/// A service whose running is recorded in ``RunningServices``.
struct Tracked: Service, CustomStringConvertible {
    let inner: any Service
    let running: RunningServices
    let name: String

    init(_ inner: any Service, running: RunningServices) {
        self.inner = inner
        self.running = running
        name = Self.name(of: inner)
    }

    func run() async throws {
        running.started(name)
        defer { running.ended(name) }
        try await inner.run()
    }

    var description: String { String(describing: type(of: Self.unwrapped(inner))) }

    /// "ingest" for `IngestService`, and the same through the wrappers that only say when a service runs.
    static func name(of service: any Service) -> String {
        var name = String(describing: type(of: unwrapped(service)))
        if name.hasSuffix("Service") { name.removeLast("Service".count) }
        return name.prefix(1).lowercased() + name.dropFirst()
    }

    static func unwrapped(_ service: any Service) -> any Service {
        if let leaderOnly = service as? LeaderOnly { return unwrapped(leaderOnly.inner) }
        if let cancelled = service as? CancelledOnStop { return unwrapped(cancelled.inner) }
        return service
    }
}

/// Runs a service that does not watch for graceful shutdown in all its waits, and cancels it when the daemon stops.
struct CancelledOnStop: Service {
    let inner: any Service

    init(_ inner: any Service) { self.inner = inner }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await inner.run() }
        } catch is CancellationError where Task.isShuttingDownGracefully {
            // Stopping: ending by cancellation is this wrapper's purpose, not a failure.
        }
    }
}

/// The config in force, replaced on reload (only the parts that apply without a restart are read from it).
final class CurrentConfig: Sendable {
    private let state: Mutex<DaemonConfig>
    private let replaced = Atomic<Int>(0)
    init(_ config: DaemonConfig) { state = Mutex(config) }
    var value: DaemonConfig { state.withLock { $0 } }
    /// How many times the configuration was replaced (connections take their agents' labels again when it moves).
    var generation: Int { replaced.load(ordering: .acquiring) }
    func replace(_ config: DaemonConfig) {
        state.withLock { $0 = config }
        replaced.add(1, ordering: .releasing)
    }
}

/// A daemon start-up failure with a message for the operator.
public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
