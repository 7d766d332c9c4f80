import Logging
import NIOCore
import NIOPosix
import PulseCore
import PulseSystemd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The whole agent: the sampling loop and the sender sharing the spool, the watchdog, status lines for systemd,
/// and signal handling (SIGHUP reloads, SIGTERM and SIGINT stop cleanly, a second one at once).
public struct AgentService: Sendable {
    let configPath: String
    let settings: AgentSettings
    let logger: Logger
    let clock: WallClock
    let faults: FaultPoints
    let expiry: CertificateExpiryWatch
    /// How long a stop may take from the signal on; past it the agent exits anyway (``StopDeadline``). A stop takes
    /// a few milliseconds; the budget leaves room within systemd's and the operator's 2 s for a slow disk's fsyncs.
    static let stopBudget = Duration.milliseconds(1_500)
    /// How long the stop waits for the event loop to close what is left (a connection whose close the daemon does
    /// not answer is cut by then: see ``AgentSettings``).
    static let eventLoopBudget = Duration.milliseconds(500)

    /// - Parameters:
    ///   - clock: the wall clock that dates samples and the daemon's acknowledgements.
    ///   - faults: the fault points the sampling and sending loops stop at (tests of debug builds).
    /// - Throws: when the certificates named in `config` cannot be loaded.
    public init(
        config: AgentConfig, configPath: String, logger: Logger, clock: WallClock, faults: FaultPoints
    ) throws {
        self.configPath = configPath
        settings = try AgentSettings(config: config)
        self.logger = logger
        expiry = CertificateExpiryWatch(logger: logger)
        self.clock = clock
        self.faults = faults
    }

    /// Opens the spool and samples once (so a broken setup fails at start, before systemd is told the agent is
    /// ready), then runs until SIGTERM or SIGINT, when the open batch is closed into the spool.
    ///
    /// The stop ends within ``stopBudget`` whatever happens: the spool is durable by then (each batch is written
    /// and fsynced before the daemon may acknowledge it, and an unacknowledged batch is sent again by the next start),
    /// so the agent then exits even if a library is still waiting for something. A second SIGTERM or SIGINT ends it
    /// at once.
    public func run() async throws {
        let (config, clock) = (settings.config, self.clock)
        let stops = SignalEvents([SIGTERM, SIGINT])
        let reloads = SignalEvents([SIGHUP])
        var orders = try OrderClock(path: config.orderPath)
        let spool = try Spool(
            directory: config.spoolDirectory, maximumBytes: config.spoolMaximumBytes,
            legacy: Spool.LegacyConversion(
                interval: config.sampleInterval, heartbeat: config.idleHeartbeat,
                nextOrder: { try orders.next(now: clock.now()) }))
        for name in spool.quarantined {
            logger.error("spool file \(name) could not be decoded; moved to \(config.spoolDirectory)/corrupt/")
        }
        var sampler = Sampler(filter: config.filter, bootID: try SysfsLink.bootID())
        let first = try sampler.sample(at: clock.now(), readLinkState: false)
        let stream = UInt64.random(in: 1...UInt64.max)
        logger.notice(
            "sampling \(first.interfaces.count) interface(s) every \(Units.formatDuration(config.sampleInterval)); \(spool.entries.count) batch(es) spooled",
            metadata: ["stream": "\(Hex.string(stream, width: 16))"])

        // An hour of orders reserved now, at start: later reservations are written by the spool writer.
        try orders.reserve(now: clock.now())
        let pipeline = AgentPipeline(spool: spool, orders: orders, clock: clock, logger: logger)
        await pipeline.sampled(interfaces: first.interfaces.count, at: first.timestamp)
        // One event loop thread: the agent has one connection at a time.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sampling = SamplingLoop(
            settings: settings, pipeline: pipeline, stream: stream, clock: clock, faults: faults, logger: logger)
        let sender = Sender(
            settings: settings, pipeline: pipeline, group: group, clock: clock, faults: faults, logger: logger)
        let watchdog = Watchdog(loops: [sampling.heartbeat, sender.heartbeat], logger: logger)
        let warmSampler = sampler
        SystemdNotifier.ready(
            status: await pipeline.statusLine(now: clock.now(), interval: config.sampleInterval))

        let writer = Task { await SpoolWriter(pipeline: pipeline, clock: clock, logger: logger).run() }
        let deadline = await withTaskGroup(of: Void.self) { tasks -> StopDeadline in
            tasks.addTask { await sampling.run(sampler: warmSampler) }
            tasks.addTask { await sender.run() }
            tasks.addTask { await watchdog.run() }
            tasks.addTask { await reportStatus(pipeline, loops: watchdog.loops) }
            tasks.addTask { for await _ in reloads { await reload(pipeline) } }
            tasks.addTask { await watchCertificate() }
            var signals = stops.makeAsyncIterator()
            let deadline = beginStop(await signals.next() ?? SIGTERM, stops: stops)
            tasks.cancelAll()
            return deadline
        }
        // The sampling loop has closed its open batch: written before the agent exits.
        deadline.enter("writing the open batch into the spool")
        await pipeline.finishWrites()
        await writer.value
        let spooled = await pipeline.spooledBatches
        logger.notice("stopped; \(spooled) batch(es) left in the spool for the next start")
        deadline.enter("shutting down the event loop")
        do {
            try await awaitAbandoning(within: Self.eventLoopBudget) { try await group.shutdownGracefully() }
        } catch let error as StoppedWaiting {
            // The spool is durable and the connection is of no more use: exiting closes what the library still holds.
            logger.warning(
                "the event loop did not shut down within \(Self.eventLoopBudget) (\(error)); exiting without it")
        }
    }

    /// Says the agent is stopping, starts the stop's deadline, and makes a second stop signal end the process.
    private func beginStop(_ signal: Int32, stops: SignalEvents) -> StopDeadline {
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        logger.notice("stopping: closing the open batch into the spool (a second \(name) ends the agent at once)")
        SystemdNotifier.stopping(status: "stopping: closing the open batch into the spool")
        let (logger, budget) = (self.logger, Self.stopBudget)
        let deadline = StopDeadline.start(
            budget: budget, stage: "closing the open batch into the spool and the connection to the daemon"
        ) { stage in
            // Everything written to the spool is durable; what the stop had not yet written is at most the open
            // batch, whose bytes the next batch's counters still carry.
            logger.warning(
                "the stop took longer than \(budget), still \(stage); exiting now (the spool is durable: the next start sends what it holds)"
            )
        }
        stops.restoreDefaultActions()
        return deadline
    }

    /// Re-reads the config file and certificates; on any error keeps running with the old ones.
    private func reload(_ pipeline: AgentPipeline) async {
        SystemdNotifier.reloading()
        let status: String
        do {
            let config = try AgentConfig.load(path: configPath)
            let needRestart = try settings.replace(with: config)
            let restartNote =
                needRestart.isEmpty ? "" : "; \(needRestart.joined(separator: ", ")) take effect after a restart"
            logger.notice("reloaded \(configPath); new connections use the new settings and certificates\(restartNote)")
            expiry.check(path: settings.current.credentials.files.certificate, agent: config.agentID, now: clock.now())
            status = await pipeline.statusLine(now: clock.now(), interval: config.sampleInterval)
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
            status = "reload failed, running the previous configuration: \(error)"
        }
        SystemdNotifier.ready(status: status)
    }

    /// Says when the certificate nears its end (``CertificateExpiryWatch``): at start, then every hour.
    private func watchCertificate() async {
        while !Task.isCancelled {
            let current = settings.current
            expiry.check(
                path: current.credentials.files.certificate, agent: current.config.agentID, now: clock.now())
            do {
                try await Task.sleep(for: .seconds(3_600))
            } catch {
                return
            }
        }
    }

    /// Keeps `systemctl status` current.
    private func reportStatus(_ pipeline: AgentPipeline, loops: [LoopHeartbeat]) async {
        guard SystemdNotifier.isAvailable else { return }
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(5))
            } catch {
                return
            }
            // A stalled loop's status line (from the watchdog) stays until systemd restarts the agent.
            guard !loops.contains(where: { $0.isOverdue() }) else { continue }
            SystemdNotifier.status(
                await pipeline.statusLine(now: clock.now(), interval: settings.config.sampleInterval))
        }
    }
}
