import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore
import ServiceLifecycle

/// The whole daemon as one `Service`: store, ingest writer, listener, retention.
public struct DaemonService: Service {
    public let config: DaemonConfig
    let logger: Logger
    /// Called with the bound address once the listener accepts connections (tests, readiness).
    let onListening: @Sendable (SocketAddress) -> Void

    public init(config: DaemonConfig, logger: Logger, onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }) {
        self.config = config
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let tlsContext = try NIOSSLContext(configuration: TLSSetup.server(config.tls))
        let store = try Store(path: config.storePath, synchronous: config.synchronous)
        let registry = ConnectionRegistry()
        let writer = IngestWriter(
            store: store, logger: logger, commitDelay: config.commitDelay, paceThreshold: config.paceThreshold,
            onPace: { registry.broadcast($0) })
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let listener = Listener(config: config, tlsContext: tlsContext, writer: writer, registry: registry, logger: logger)
        let channel: any Channel
        do {
            channel = try await listener.bind(group: group)
        } catch {
            writer.drainAndStop()
            try? await group.shutdownGracefully()
            throw DaemonError("cannot listen on \(config.listen): \(error)")
        }
        let address = channel.localAddress
        logger.notice(
            "listening on \(address.map { "\($0)" } ?? "\(config.listen)") as \(config.name); store \(store.path)")
        if let address { onListening(address) }

        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try? await channel.closeFuture.get() }
                tasks.addTask {
                    // Retention: hourly, starting a minute after start.
                    var delay = Duration.seconds(60)
                    while !Task.isCancelled {
                        try? await Task.sleep(for: delay)
                        delay = .seconds(3_600)
                        do {
                            let deleted = try store.deleteRaw(olderThan: WallClock.milliseconds() - config.rawRetention)
                            if deleted > 0 { logger.info("retention: deleted \(deleted) raw chunk(s)") }
                        } catch {
                            logger.error("retention failed: \(error)")
                        }
                    }
                }
                await tasks.next()
                tasks.cancelAll()
            }
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
        // Stop accepting, finish storing (and acknowledging) what arrived, then say goodbye.
        writer.drainAndStop()
        registry.closeAll(ErrorFrame(.shuttingDown, "the daemon is stopping; reconnect later"))
        try? await Task.sleep(for: .milliseconds(100))
        try await group.shutdownGracefully()
        logger.notice("stopped")
    }
}

/// A daemon start-up failure with a message for the operator.
public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
