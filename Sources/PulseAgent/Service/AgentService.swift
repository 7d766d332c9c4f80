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
/// and signal handling (SIGHUP reloads, SIGTERM and SIGINT stop cleanly).
public struct AgentService: Sendable {
    let configPath: String
    let settings: AgentSettings
    let logger: Logger

    /// - Throws: when the certificates named in `config` cannot be loaded.
    public init(config: AgentConfig, configPath: String, logger: Logger) throws {
        self.configPath = configPath
        settings = try AgentSettings(config: config)
        self.logger = logger
    }

    /// Opens the spool and samples once (so a broken setup fails at start, before systemd is told the agent is
    /// ready), then runs until SIGTERM or SIGINT, when the open batch is closed into the spool.
    public func run() async throws {
        let config = settings.config
        let signals = SignalEvents([SIGTERM, SIGINT, SIGHUP])
        var orders = try OrderClock(path: config.orderPath)
        let spool = try Spool(
            directory: config.spoolDirectory, maximumBytes: config.spoolMaximumBytes,
            legacy: Spool.LegacyConversion(
                interval: config.sampleInterval, heartbeat: config.idleHeartbeat,
                nextOrder: { try orders.next(now: WallClock.milliseconds()) }))
        for name in spool.quarantined {
            logger.error("spool file \(name) could not be decoded; moved to \(config.spoolDirectory)/corrupt/")
        }
        var sampler = Sampler(filter: config.filter, bootID: try SysfsLink.bootID())
        let first = try sampler.sample(at: WallClock.milliseconds(), readLinkState: false)
        let stream = UInt64.random(in: 1...UInt64.max)
        logger.notice(
            "sampling \(first.interfaces.count) interface(s) every \(Units.formatDuration(config.sampleInterval)); \(spool.entries.count) batch(es) spooled",
            metadata: ["stream": "\(Hex.string(stream, width: 16))"])

        // An hour of orders reserved now, at start: later reservations are written by the spool writer.
        try orders.reserve(now: WallClock.milliseconds())
        let pipeline = AgentPipeline(spool: spool, orders: orders, logger: logger)
        await pipeline.sampled(interfaces: first.interfaces.count, at: first.timestamp)
        // One event loop thread: the agent has one connection at a time.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sampling = SamplingLoop(settings: settings, pipeline: pipeline, stream: stream, logger: logger)
        let sender = Sender(settings: settings, pipeline: pipeline, group: group, logger: logger)
        let watchdog = Watchdog(loops: [sampling.heartbeat, sender.heartbeat], logger: logger)
        let warmSampler = sampler
        SystemdNotifier.ready(
            status: await pipeline.statusLine(now: WallClock.milliseconds(), interval: config.sampleInterval))

        let writer = Task { await SpoolWriter(pipeline: pipeline, logger: logger).run() }
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await sampling.run(sampler: warmSampler) }
            tasks.addTask { await sender.run() }
            tasks.addTask { await watchdog.run() }
            tasks.addTask { await reportStatus(pipeline, loops: watchdog.loops) }
            for await signal in signals {
                if signal == SIGHUP {
                    await reload(pipeline)
                    continue
                }
                logger.notice("stopping: closing the open batch into the spool")
                SystemdNotifier.stopping(status: "stopping: closing the open batch into the spool")
                break
            }
            tasks.cancelAll()
        }
        // The sampling loop has closed its open batch: written before the agent exits.
        await pipeline.finishWrites()
        await writer.value
        let spooled = await pipeline.spooledBatches
        logger.notice("stopped; \(spooled) batch(es) left in the spool for the next start")
        try await group.shutdownGracefully()
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
            status = await pipeline.statusLine(now: WallClock.milliseconds(), interval: config.sampleInterval)
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
            status = "reload failed, running the previous configuration: \(error)"
        }
        SystemdNotifier.ready(status: status)
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
                await pipeline.statusLine(now: WallClock.milliseconds(), interval: settings.config.sampleInterval))
        }
    }
}
