import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore
import ServiceLifecycle

/// The whole agent as one `Service`: the sampling loop and the sender, sharing the spool.
public struct AgentService: Service {
    public let config: AgentConfig
    let logger: Logger

    public init(config: AgentConfig, logger: Logger) {
        self.config = config
        self.logger = logger
    }

    /// Opens the spool, loads the certificates and samples once (so a broken setup fails at start), then runs
    /// until graceful shutdown, when the open batch is closed into the spool.
    public func run() async throws {
        let spool = try Spool(directory: config.spoolDirectory, maximumBytes: config.spoolMaximumBytes)
        for name in spool.quarantined {
            logger.error("spool file \(name) could not be decoded; moved to \(config.spoolDirectory)/corrupt/")
        }
        let tlsContext = try NIOSSLContext(configuration: TLSSetup.client(config.tls))
        var sampler = Sampler(filter: config.filter, bootID: try SysfsLink.bootID())
        let first = try sampler.sample(at: WallClock.milliseconds(), readLinkState: false)
        let stream = UInt64.random(in: 1...UInt64.max)
        logger.notice(
            "sampling \(first.interfaces.count) interface(s) every \(Units.formatDuration(config.sampleInterval)); \(spool.entries.count) batch(es) spooled",
            metadata: ["stream": "\(Hex.string(stream, width: 16))"])

        let pipeline = AgentPipeline(spool: spool, logger: logger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sampling = SamplingLoop(config: config, pipeline: pipeline, stream: stream, logger: logger)
        let warmSampler = sampler
        let sender = Sender(config: config, pipeline: pipeline, group: group, tlsContext: tlsContext, logger: logger)
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                do {
                    try await sampling.run(sampler: warmSampler)
                } catch {
                    logger.error("sampling stopped: \(error)")
                }
            }
            tasks.addTask {
                // On SIGTERM the sampling loop closes its batch into the spool; the sender just stops, and the
                // spool keeps whatever is unacknowledged for the next start.
                try? await cancelWhenGracefulShutdown { await sender.run() }
            }
        }
        let spooled = await pipeline.spooledBatches
        logger.notice("stopped; \(spooled) batch(es) left in the spool for the next start")
        try await group.shutdownGracefully()
    }
}
