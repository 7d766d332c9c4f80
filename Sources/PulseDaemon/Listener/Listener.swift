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
                        labelGeneration: labelGeneration, renews: tls.renewal != nil),
                    queue: queue, tls: tls,
                    registry: registry, logger: logger,
                    handshakeTimeout: .milliseconds(config.handshakeTimeout)))
        }
    }
}

/// The TLS context new connections get, the check of their client certificates (``ClientCertificateCheck``:
/// chained to the CA, made for clients, not revoked) and the issuing CA agents renew with (``AgentRenewal``); all
/// replaced on reload, so renewed certificates, a new revocation list and a new issuing CA apply to new connections
/// while established ones carry on.
public final class TLSContextBox: Sendable {
    typealias State = (context: NIOSSLContext, check: ClientCertificateCheck, renewal: AgentRenewal?)
    private let state: Mutex<State>

    public init(_ files: TLSFiles, revoked: String? = nil, enrollment: EnrollmentSettings = EnrollmentSettings())
        throws
    {
        state = Mutex(try Self.load(files, revoked: revoked, enrollment: enrollment))
    }

    public var current: NIOSSLContext { state.withLock { $0.context } }

    /// The check new connections' client certificates get.
    public var check: ClientCertificateCheck { state.withLock { $0.check } }

    /// The issuing CA agents' certificates are renewed with; nil: none are.
    var renewal: AgentRenewal? { state.withLock { $0.renewal } }

    /// When each agent was last renewed, within the last ``renewalSpacing``: an agent gets at most one certificate a
    /// minute however often it reconnects, so neither a faulty agent nor a hostile one with a valid certificate can
    /// keep the daemon signing. Entries older than that are dropped as others are added, so the map holds at most
    /// the agents renewed in the last minute.
    private let recentRenewals = Mutex<[String: ContinuousClock.Instant]>([:])
    static let renewalSpacing = Duration.seconds(60)

    /// Whether `agent` may be renewed now (and, if so, records that it is).
    func mayRenew(_ agent: String, now: ContinuousClock.Instant = .now) -> Bool {
        recentRenewals.withLock { recent in
            if let last = recent[agent], now - last < Self.renewalSpacing { return false }
            recent = recent.filter { now - $0.value < Self.renewalSpacing }
            recent[agent] = now
            return true
        }
    }

    /// What the operator should hear about the files just loaded (an issuing CA that expires soon).
    public var warnings: [String] { renewal?.warnings ?? [] }

    /// One line on renewal, for the start and each reload.
    public func renewalLine(_ settings: EnrollmentSettings) -> String {
        guard let renewal else {
            return
                "agents' certificates are not renewed: no issuing CA in \(settings.directory) ([enrollment] directory; netpulse ca issuing makes one)"
        }
        return
            "renewing agents' certificates for \(renewal.validity) with the issuing CA '\(renewal.authority.commonName)' in \(settings.directory)"
    }

    /// Loads the files again; on error the current context and check stay.
    public func reload(
        _ files: TLSFiles, revoked: String? = nil, enrollment: EnrollmentSettings = EnrollmentSettings()
    ) throws {
        let fresh = try Self.load(files, revoked: revoked, enrollment: enrollment)
        state.withLock { $0 = fresh }
    }

    private static func load(
        _ files: TLSFiles, revoked: String?, enrollment: EnrollmentSettings
    ) throws -> State {
        let context = try NIOSSLContext(configuration: TLSSetup.server(files))
        let check: ClientCertificateCheck
        do {
            check = try ClientCertificateCheck.load(ca: files.ca, revoked: revoked)
        } catch {
            throw DaemonError("[tls]: \(error)")
        }
        return (context, check, try AgentRenewal.load(enrollment, roots: check.roots))
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
