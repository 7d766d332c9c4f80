import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore
import PulseSettings
import PulseStore
import Synchronization

/// The TLS listener: accepts agents, enforces the connection and handshake limits and the timeouts, and gives each connection
/// its ``ConnectionHandler``.
public struct Listener: Sendable {
    let config: DaemonConfig
    let tls: TLSContextBox
    let queue: IngestQueue
    let registry: ConnectionRegistry
    let logger: Logger
    let labelPolicy: @Sendable (String, Labels) -> Labels
    let labelGeneration: @Sendable () -> Int

    public init(
        config: DaemonConfig, tls: TLSContextBox, queue: IngestQueue, registry: ConnectionRegistry,
        logger: Logger, labelPolicy: @escaping @Sendable (String, Labels) -> Labels,
        labelGeneration: @escaping @Sendable () -> Int = { 0 }
    ) {
        self.config = config
        self.tls = tls
        self.queue = queue
        self.registry = registry
        self.logger = logger
        self.labelPolicy = labelPolicy
        self.labelGeneration = labelGeneration
    }

    /// Binds the listening socket.
    ///
    /// - Parameter boundSocket: an already bound and listening socket (from systemd socket activation) to use
    ///   instead of binding ``DaemonConfig/listen``.
    public func bind(group: any EventLoopGroup, boundSocket: NIOBSDSocket.Handle? = nil) async throws -> any Channel {
        let limits = ConnectionRegistry.Limits(
            connections: config.maximumConnections, handshakes: config.maximumHandshakes,
            handshakesPerAddress: config.maximumHandshakesPerAddress,
            handshakesPerNetwork: config.maximumHandshakesPerNetwork, prefixes: config.handshakeNetworkPrefixes)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in self.accept(channel, limits: limits) }
        if let boundSocket {
            return try await bootstrap.withBoundSocket(boundSocket).get()
        }
        return try await bootstrap.bind(host: config.listen.host, port: config.listen.port).get()
    }

    /// Admits a new connection within `limits` (or closes it, logging why), then gives it TLS, the idle timeout,
    /// the frame decoder and its ``ConnectionHandler``.
    private func accept(_ channel: any Channel, limits: ConnectionRegistry.Limits) -> EventLoopFuture<Void> {
        let source = ConnectionSource(channel.remoteAddress, prefixes: limits.prefixes)
        if let reason = registry.admit(channel, source: source, limits: limits) {
            if let line = registry.refused(because: reason) { logger.warning("\(line)") }
            return channel.close()
        }
        channel.closeFuture.whenComplete { [registry] _ in registry.release(channel) }
        return channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(NIOSSLServerHandler(context: tls.current))
            try pipeline.addHandler(IdleStateHandler(readTimeout: .milliseconds(config.idleTimeout)))
            try pipeline.addHandler(
                ByteToMessageHandler(FrameDecoder(maximumFrameBytes: WireLimits.standard.maximumFrameBytes)))
            try pipeline.addHandler(
                ConnectionHandler(
                    machine: ConnectionStateMachine(
                        daemonName: config.name, agentLimits: config.agentLimits, labelPolicy: labelPolicy,
                        labelGeneration: labelGeneration),
                    queue: queue,
                    registry: registry, logger: logger,
                    handshakeTimeout: .milliseconds(config.handshakeTimeout)))
        }
    }
}

/// The TLS context new connections get; replaced on reload, so renewed certificates apply to new connections while
/// established ones carry on.
public final class TLSContextBox: Sendable {
    private let context: Mutex<NIOSSLContext>

    public init(_ files: TLSFiles) throws {
        context = Mutex(try NIOSSLContext(configuration: TLSSetup.server(files)))
    }

    public var current: NIOSSLContext { context.withLock { $0 } }

    /// Loads the files again; on error the current context stays.
    public func reload(_ files: TLSFiles) throws {
        let fresh = try NIOSSLContext(configuration: TLSSetup.server(files))
        context.withLock { $0 = fresh }
    }
}
