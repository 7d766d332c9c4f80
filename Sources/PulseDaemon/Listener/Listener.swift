import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCertificates
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
    /// Lines about refused client certificates: each said at once, within a bound.
    let refusals = RefusalLines()
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
            try pipeline.addHandler(
                tls.serverHandler { [refusals, logger] reason in
                    if let line = refusals.line("refused a client certificate at the handshake: \(reason)") {
                        logger.warning("\(line)")
                    }
                })
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

/// The TLS context new connections get and the check of their client certificates (``ClientCertificateCheck``:
/// chained to the CA, made for clients, not revoked); both replaced on reload, so renewed certificates and a new
/// revocation list apply to new connections while established ones carry on.
public final class TLSContextBox: Sendable {
    private let state: Mutex<(context: NIOSSLContext, check: ClientCertificateCheck)>

    public init(_ files: TLSFiles, revoked: String? = nil) throws {
        state = Mutex(try Self.load(files, revoked: revoked))
    }

    public var current: NIOSSLContext { state.withLock { $0.context } }

    /// The check new connections' client certificates get.
    public var check: ClientCertificateCheck { state.withLock { $0.check } }

    /// Loads the files again; on error the current context and check stay.
    public func reload(_ files: TLSFiles, revoked: String? = nil) throws {
        let fresh = try Self.load(files, revoked: revoked)
        state.withLock { $0 = fresh }
    }

    private static func load(
        _ files: TLSFiles, revoked: String?
    ) throws -> (context: NIOSSLContext, check: ClientCertificateCheck) {
        let context = try NIOSSLContext(configuration: TLSSetup.server(files))
        do {
            return (context, try ClientCertificateCheck.load(ca: files.ca, revoked: revoked))
        } catch {
            throw DaemonError("[tls]: \(error)")
        }
    }

    /// A server handler whose client certificates get ``check`` (as loaded now); a refusal is logged through
    /// `refused` (one line naming the certificate and why) and fails the handshake.
    func serverHandler(refused: @escaping @Sendable (String) -> Void) -> NIOSSLServerHandler {
        let (context, check) = state.withLock { ($0.context, $0.check) }
        return NIOSSLServerHandler(context: context) { certificates, promise in
            let chain = certificates.compactMap { try? $0.toDERBytes() }
            promise.completeWithTask {
                switch await check.check(chain) {
                case .accepted: return .certificateVerified
                case .refused(let reason):
                    refused(reason)
                    return .failed
                }
            }
        }
    }
}

/// Lines about refused client certificates, each logged when it happens (what was refused and why is what an
/// operator needs, at once), but at most ``perMinute`` a minute: a client that keeps presenting bad certificates
/// (each handshake a line) is summed up in the next line after the quiet.
final class RefusalLines: Sendable {
    static let perMinute = 10
    private let state = Mutex<(since: ContinuousClock.Instant, lines: Int, held: Int)>((.now, 0, 0))

    /// `text` to log now, with the lines held back before it counted; nil: held back.
    func line(_ text: String, now: ContinuousClock.Instant = .now) -> String? {
        state.withLock { state in
            if now - state.since >= .seconds(60) {
                state.since = now
                state.lines = 0
            }
            guard state.lines < Self.perMinute else {
                state.held += 1
                return nil
            }
            state.lines += 1
            defer { state.held = 0 }
            return state.held > 0 ? "\(text) (and \(state.held) more refused since, not logged)" : text
        }
    }
}
