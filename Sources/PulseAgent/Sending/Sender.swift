import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore
import Synchronization

/// Delivers spooled batches to the daemon: connects over mutual TLS (failing over between endpoints, backing off
/// with jitter), says `HELLO`, then streams the spool with up to `maximumInFlight` batches unacknowledged, within
/// the upload budget: batches made while connected first, the backlog (oldest first) behind them. A batch leaves the spool only when the daemon acknowledges it; after any failure the
/// next connection replays everything still spooled.
public struct Sender: Sendable {
    let settings: AgentSettings
    let pipeline: AgentPipeline
    let group: any EventLoopGroup
    let logger: Logger
    /// Dates the daemon's acknowledgements.
    let clock: WallClock
    let faults: FaultPoints
    let heartbeat: LoopHeartbeat
    /// Keepalive when nothing was sent for this long; the daemon's idle timeout is longer.
    let keepaliveInterval: Duration = .seconds(20)
    let handshakeTimeout: Duration = .seconds(10)
    /// How long one frame may take to go out before the sending loop counts as stalled.
    static let writeAllowance: Int64 = 60_000
    /// When the agent last asked for a renewal, across connections.
    let renewals = RenewalPacing()

    public init(
        settings: AgentSettings, pipeline: AgentPipeline, group: any EventLoopGroup, clock: WallClock,
        faults: FaultPoints, logger: Logger, heartbeat: LoopHeartbeat = LoopHeartbeat("sending")
    ) {
        self.settings = settings
        self.pipeline = pipeline
        self.group = group
        self.clock = clock
        self.faults = faults
        self.logger = logger
        self.heartbeat = heartbeat
    }

    /// Runs until its task is cancelled. Settings are read afresh for every connection attempt, so a reload
    /// changes endpoints, certificates, budget and back-off for the next connection.
    public func run() async {
        var config = settings.config
        var backoff = Backoff(
            initial: .milliseconds(config.backoffInitial), maximum: .milliseconds(config.backoffMaximum))
        let budget = UploadBudget(TokenBucket(rate: config.uploadBudget))
        var preferred = 0
        var lastFailure: String?
        while !Task.isCancelled {
            var established = false
            let current = settings.current
            if current.config != config {
                config = current.config
                backoff = Backoff(
                    initial: .milliseconds(config.backoffInitial), maximum: .milliseconds(config.backoffMaximum))
                budget.bucket.withLock { $0 = TokenBucket(rate: config.uploadBudget) }
            }
            var progressed = false
            var reconnectAtOnce = false
            for offset in 0..<config.endpoints.count {
                let index = (preferred + offset) % config.endpoints.count
                let endpoint = config.endpoints[index]
                let acknowledgedBefore = await pipeline.acknowledged
                var notStored = false
                var reached = false
                do {
                    try await session(endpoint, current, budget: budget, reached: { reached = true }) {
                        established = true
                        preferred = index
                        lastFailure = nil
                    }
                } catch {
                    if Task.isCancelled { break }
                    if case SessionError.notStored = error { notStored = true }
                    if case SessionError.renewed = error { reconnectAtOnce = true }
                    if case SessionError.credentialsChanged = error { reconnectAtOnce = true }
                    // A renewed certificate the daemon refuses is set aside after a second try (a connection turned
                    // away for another reason, a daemon at its connection limit, does not count).
                    if reached, !established, current.credentials.source == .pending, Self.refusesCertificate(error),
                        settings.pendingFailed()
                    {
                        logger.error(
                            "the daemon did not accept the renewed certificate (\(error)); set aside as \(Credentials.directory(config))/refused.pem, connecting with the previous one"
                        )
                    }
                    let reason = "\(error)"
                    if case SessionError.renewed = error {
                        logger.notice("reconnecting to \(endpoint) with the renewed certificate")
                    } else if case SessionError.credentialsChanged = error {
                        logger.notice("reconnecting to \(endpoint) with the new certificate")
                    } else if established {
                        logger.warning("disconnected from \(endpoint): \(reason)")
                    } else if lastFailure != reason {
                        logger.warning("cannot connect to \(endpoint): \(reason)")
                    }
                    lastFailure = reason
                }
                await pipeline.sessionEnded()
                // Only a session that got batches acknowledged resets the back-off: a daemon that welcomes and
                // then refuses (a full disk, a batch it rejects) must not be redialled in a tight loop.
                // A batch the daemon could not store for now is sent again only after the back-off, however many
                // others it acknowledged first.
                progressed = await pipeline.acknowledged > acknowledgedBefore && !notStored
                if established || Task.isCancelled { break }
            }
            if Task.isCancelled { break }
            if progressed || reconnectAtOnce {
                backoff.reset()
            } else {
                let delay = backoff.next()
                heartbeat.beat(within: delay.milliseconds)
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    break
                }
            }
        }
        heartbeat.finish()
    }

    /// TCP_USER_TIMEOUT (linux/tcp.h: 18), which NIO has no name for.
    static let userTimeout = ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: 18))

    private func connect(_ endpoint: Endpoint, _ current: AgentSettings.Current) async throws -> NIOAsyncChannel<
        [UInt8], ByteBuffer
    > {
        let context = current.tlsContext
        let serverName = current.config.serverName
        heartbeat.beat(within: current.config.connectTimeout + handshakeTimeout.milliseconds)
        // SwiftNIO's connect does not answer cancellation: it would wait out `connect_timeout` (up to five minutes)
        // against a daemon host that drops packets, and hold the stop that long. Cancelling closes every channel the
        // attempt has made (and any it makes later), so the connect fails at once.
        let attempts = ConnectAttempts()
        return try await withTaskCancellationHandler {
            try await ClientBootstrap(group: group)
                .connectTimeout(.milliseconds(current.config.connectTimeout))
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                // A daemon host that vanishes without a reset is noticed within a minute, not after the kernel's
                // 15 minutes of retransmissions: keepalives while idle, and TCP_USER_TIMEOUT for unacknowledged data.
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelOption(Self.userTimeout, value: 60_000)
                .connect(host: endpoint.host, port: endpoint.port) { channel in
                    guard attempts.add(channel) else {
                        return channel.eventLoop.makeFailedFuture(CancellationError())
                    }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: context, serverHostname: serverName))
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(
                                FrameDecoder(maximumFrameBytes: WireLimits.standard.maximumFrameBytes)))
                        return try NIOAsyncChannel<[UInt8], ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } onCancel: {
            attempts.cancel()
        }
    }

    /// One connection from `HELLO` to failure. Calls `reached` once connected, `established` once the daemon has
    /// welcomed us.
    private func session(
        _ endpoint: Endpoint, _ current: AgentSettings.Current, budget: UploadBudget, reached: () -> Void,
        established: () -> Void
    ) async throws {
        let channel = try await connect(endpoint, current)
        reached()
        let config = current.config
        let welcomed = AtomicFlag()
        let credentialsChanged = AtomicFlag()
        let renewal = RenewalAttempt()
        let handshakeTimeout = self.handshakeTimeout
        try await channel.executeThenClose { inbound, outbound in
            let hello = Hello(
                agentID: config.agentID, hostname: AgentConfig.hostname(), agentVersion: NetpulseVersion.string)
            try await outbound.write(ByteBuffer(bytes: WireCodec.encode(.hello(hello))))
            try await withThrowingTaskGroup(of: Void.self) { group in
                let raw = channel.channel
                group.addTask {
                    try await Task.sleep(for: handshakeTimeout)
                    if !welcomed.isSet { raw.close(promise: nil) }
                }
                var welcome: Welcome?
                for try await bytes in inbound {
                    let message = try WireCodec.decode(bytes)
                    guard welcome != nil else {
                        guard case .welcome(let first) = message else {
                            if case .error(let error) = message { throw SessionError.refused(error) }
                            throw SessionError.protocolViolation("expected WELCOME")
                        }
                        welcome = first
                        welcomed.set()
                        try await outbound.write(ByteBuffer(bytes: WireCodec.encode(.labels(config.labels))))
                        established()
                        if current.credentials.source == .pending, try settings.confirmPending() {
                            logger.notice(
                                "the daemon accepted the renewed certificate (valid until \(CertificateExpiryWatch.utc(current.credentials.notAfter))); it replaces the previous one"
                            )
                        }
                        await pipeline.sessionStarted(first.daemonName)
                        let backlog = await pipeline.spooledBatches
                        logger.notice(
                            "connected to \(first.daemonName) at \(endpoint) (protocol \(first.version))\(backlog > 1 ? ", replaying \(backlog) spooled batches" : "")"
                        )
                        let limits = first.limits
                        let windowed = first.capabilities.contains(.streamWindow)
                        let epochStarts = first.capabilities.contains(.epochStart)
                        group.addTask {
                            try await self.writeLoop(
                                outbound, limits: limits, windowed: windowed, epochStarts: epochStarts, budget: budget)
                        }
                        let generation = settings.current.credentialsGeneration
                        group.addTask {
                            try await self.watchCredentials(from: generation)
                            credentialsChanged.set()
                            raw.close(promise: nil)
                        }
                        if first.capabilities.contains(.renewal), config.renewAfter > 0 {
                            let due = settings.current.credentials.renewalDue(
                                share: config.renewAfter, spreadBy: config.agentID)
                            group.addTask { try await self.renewals(from: due, outbound, renewal) }
                        }
                        continue
                    }
                    switch message {
                    case .ack(let ack):
                        await pipeline.acknowledge(ack, at: clock.now())
                    case .pace(let pace):
                        await pipeline.setPace(pace)
                        if pace == .normal {
                            logger.notice("daemon lifted backpressure: back to normal pace")
                        } else {
                            logger.notice(
                                "daemon asks to slow down: sampling ×\(pace.sampleFactor), batching ×\(pace.batchFactor)"
                            )
                        }
                    case .keepalive:
                        break
                    case .reject(let reject):
                        await pipeline.reject(reject)
                        // Not stored for now: the batch stays first in the spool; a new connection, after the
                        // back-off, sends it again before anything behind it.
                        if !reject.permanent { throw SessionError.notStored(reject) }
                    case .error(let error):
                        throw SessionError.refused(error)
                    case .renewed(.issued(let chain)):
                        guard let key = renewal.take() else {
                            throw SessionError.protocolViolation("RENEWED without a RENEW")
                        }
                        do {
                            let (text, _, notAfter) = try CertificateRequest.renewedFile(
                                keyPEM: key, chain: chain, name: config.agentID)
                            try settings.adoptRenewed(text)
                            logger.notice(
                                "the daemon renewed the certificate, now valid until \(CertificateExpiryWatch.utc(notAfter)); reconnecting with it"
                            )
                        } catch {
                            logger.error("the renewed certificate cannot be used: \(error); keeping the current one")
                            renewal.answered(retryAt: Self.renewalRetry(settings.current.credentials, now: clock.now()))
                            continue
                        }
                        throw SessionError.renewed
                    case .renewed(.refused(let why)):
                        _ = renewal.take()
                        let retry = Self.renewalRetry(settings.current.credentials, now: clock.now())
                        logger.warning(
                            "the daemon refused to renew the certificate: \(why); asking again in \(Units.formatAge(retry - clock.now()))"
                        )
                        renewal.answered(retryAt: retry)
                    default:
                        throw SessionError.protocolViolation("unexpected frame from the daemon")
                    }
                }
                if credentialsChanged.isSet { throw SessionError.credentialsChanged }
                throw welcome == nil && !welcomed.isSet
                    ? SessionError.protocolViolation("no WELCOME within \(handshakeTimeout)")
                    : SessionError.closedByDaemon
            }
        }
    }

    /// Asks for a new certificate once `due` has come, and again each time the daemon refuses, at the time the
    /// session's reading sets (``RenewalAttempt/answered(retryAt:)``); ends when one is issued (the session then
    /// ends too) or the session does. One task for the connection, however many refusals.
    private func renewals(
        from due: Int64, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, _ attempt: RenewalAttempt
    ) async throws {
        var due = due
        while !Task.isCancelled {
            try await renew(at: due, outbound, attempt)
            guard let retry = await attempt.answer() else { return }
            due = retry
        }
    }

    /// Whether a connection failed because the daemon refused the certificate (a TLS alert naming it).
    static func refusesCertificate(_ error: any Error) -> Bool {
        "\(error)".uppercased().contains("CERTIFICATE")
    }

    /// Asks the daemon for a new certificate once `due` (Unix milliseconds) has come: a new key made here, and a
    /// request for it, which the daemon answers with `RENEWED` (``session``).
    private func renew(
        at due: Int64, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, _ attempt: RenewalAttempt
    ) async throws {
        // A minute at least between two requests, whatever the certificates say: a certificate that is due again at
        // once (a renewal the daemon makes too short, a file put back) is asked for at a walk, not in a loop.
        let wait = max(due - clock.now(), renewals.wait(now: clock.now()))
        if wait > 0 { try await Task.sleep(for: .milliseconds(wait)) }
        renewals.asked(now: clock.now())
        let credentials = settings.current.credentials
        let made: (keyPEM: String, requestDER: [UInt8])
        do {
            made = try CertificateRequest.renewal(name: settings.config.agentID)
        } catch {
            logger.error("cannot make a key to renew the certificate: \(error)")
            return
        }
        attempt.hold(made.keyPEM)
        logger.notice(
            "asking the daemon to renew the certificate (valid until \(CertificateExpiryWatch.utc(credentials.notAfter)))"
        )
        // The answer is read by the session.
        try await outbound.write(ByteBuffer(bytes: WireCodec.encode(.renew(Renew(request: made.requestDER)))))
    }

    /// When to ask again after a refusal: a tenth of the time left, between a minute and an hour, so a certificate
    /// about to lapse is asked for often and a young one is not.
    static func renewalRetry(_ credentials: Credentials, now: Int64) -> Int64 {
        let left = credentials.notAfter * 1000 - now
        return now + min(3_600_000, max(60_000, left / 10))
    }

    /// Returns when the credentials change (a reload brought a new certificate, or a renewal was set aside); the
    /// session then ends, so the daemon sees the agent with the new one at once rather than at the next reconnect.
    private func watchCredentials(from generation: Int) async throws {
        while settings.current.credentialsGeneration == generation {
            try await Task.sleep(for: .seconds(2))
        }
    }

    /// Sends spooled batches in order, each preceded by the `DESCRIBE` it needs unless already sent on this
    /// connection, keeping at most `limits.maximumInFlight` unacknowledged.
    ///
    /// - Parameter windowed: both sides keep only the last few streams' descriptors and references
    ///   (``StreamWindow``): a stream that leaves the window is forgotten here at the same frame as by the daemon, so
    ///   its next batch is described again and coded from keyframes.
    /// - Parameter epochStarts: the daemon takes the epochs' start times in `DESCRIBE`; without it they are left
    ///   out, and the frame is laid out as an older daemon reads it.
    private func writeLoop(
        _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, limits: WireLimits, windowed: Bool, epochStarts: Bool,
        budget: UploadBudget
    ) async throws {
        // Batches made from now on go out before the backlog (AgentPipeline.entryToSend); each part in ordinal order.
        let liveFrom = await pipeline.nextOrdinal
        var liveSentUpTo: UInt64 = 0
        var backlogSentUpTo: UInt64 = 0
        func sent(_ entry: Spool.Entry) {
            if entry.ordinal >= liveFrom { liveSentUpTo = entry.ordinal } else { backlogSentUpTo = entry.ordinal }
        }
        var described = Set<DescriptorKey>()
        var references: ReferenceTable? = ReferenceTable()
        var streams = StreamWindow()
        func name(_ stream: UInt64) {
            guard windowed, let left = streams.name(stream) else { return }
            described = described.filter { $0.stream != left }
            references?.forget(stream: left)
        }
        var lastSend = ContinuousClock.now
        let window = max(1, min(limits.maximumInFlight, 256))
        while !Task.isCancelled {
            heartbeat.beat(within: keepaliveInterval.milliseconds + Self.writeAllowance)
            faults.stallIfRequested(.sending)
            guard await pipeline.inFlight < window,
                let entry = await pipeline.entryToSend(
                    liveFrom: liveFrom, liveSentUpTo: liveSentUpTo, backlogSentUpTo: backlogSentUpTo)
            else {
                if ContinuousClock.now - lastSend >= keepaliveInterval {
                    try await outbound.write(ByteBuffer(bytes: WireCodec.encode(.keepalive)))
                    lastSend = .now
                }
                await pipeline.waitForChange(timeout: keepaliveInterval / 2)
                continue
            }
            // The spool holds self-contained batches; on the wire each is re-coded against what this connection
            // already carried, so steady streams do not repeat absolute counters.
            let describe: Describe
            let batch: WireBatch
            do {
                (describe, batch) = try Spool.decode(try await pipeline.read(entry))
            } catch {
                // The entry vanished (dropped because the spool was full) or is unreadable: skip it.
                logger.warning("skipping spool entry \(entry.ordinal): \(error)")
                sent(entry)
                continue
            }
            var toSend = [UInt8]()
            let keys = describe.interfaces.map { DescriptorKey(stream: describe.stream, id: $0.id) }
            if !keys.allSatisfy({ described.contains($0) }) {
                var describe = describe
                if !epochStarts {
                    for index in describe.interfaces.indices { describe.interfaces[index].began = nil }
                }
                toSend = WireCodec.encode(.describe(describe))
                name(describe.stream)
                described.formUnion(keys)
            }
            toSend += WireCodec.encode(.batch(batch), references: &references)
            name(batch.stream)
            while true {
                let delay = budget.bucket.withLock { $0.delay(for: toSend.count) }
                if delay == .zero { break }
                try await Task.sleep(for: delay)
            }
            budget.bucket.withLock { $0.consume(toSend.count) }
            await pipeline.sent()
            try await outbound.write(ByteBuffer(bytes: toSend))
            lastSend = .now
            sent(entry)
        }
    }
}

/// The channels one connect has opened (Happy Eyeballs may open several), closed if the connect is cancelled.
final class ConnectAttempts: Sendable {
    private let state = Mutex<(channels: [any Channel], cancelled: Bool)>(([], false))

    /// Records `channel`; false (and the channel closed) when the connect was already cancelled.
    func add(_ channel: any Channel) -> Bool {
        let cancelled = state.withLock { state in
            if !state.cancelled { state.channels.append(channel) }
            return state.cancelled
        }
        if cancelled { channel.close(promise: nil) }
        return !cancelled
    }

    func cancel() {
        let channels = state.withLock { state in
            state.cancelled = true
            return state.channels
        }
        for channel in channels { channel.close(promise: nil) }
    }
}

/// The token bucket shared by every connection of the agent, so reconnecting does not reset the budget.
final class UploadBudget: Sendable {
    let bucket: Mutex<TokenBucket>
    init(_ bucket: TokenBucket) { self.bucket = Mutex(bucket) }
}

struct DescriptorKey: Hashable {
    var stream: UInt64
    var id: UInt32
}

/// Why a connection to the daemon ended.
public enum SessionError: Error, CustomStringConvertible {
    case closedByDaemon
    case refused(ErrorFrame)
    case notStored(Reject)
    case protocolViolation(String)
    /// A renewed certificate arrived: the next connection uses it.
    case renewed
    /// The certificate or key changed (a reload): the next connection uses the new ones.
    case credentialsChanged

    public var description: String {
        switch self {
        case .closedByDaemon: "the daemon closed the connection"
        case .refused(let error): "the daemon refused: \(error)"
        case .notStored(let reject): "the daemon could not store \(reject)"
        case .protocolViolation(let why): "protocol violation: \(why)"
        case .renewed: "reconnecting with the renewed certificate"
        case .credentialsChanged: "reconnecting with the new certificate"
        }
    }
}

/// When the agent last asked the daemon for a certificate (Unix milliseconds).
final class RenewalPacing: Sendable {
    static let spacing: Int64 = 60_000
    private let last = Mutex<Int64?>(nil)

    /// How long to wait before asking again (0: now).
    func wait(now: Int64) -> Int64 { last.withLock { $0.map { max(0, $0 + Self.spacing - now) } ?? 0 } }

    func asked(now: Int64) { last.withLock { $0 = now } }
}

/// One connection's renewal: the key made for it, kept until the daemon's answer, and that answer handed from the
/// session's reading to the renewal task (``Sender/renewals(from:_:_:)``).
final class RenewalAttempt: Sendable {
    private struct State {
        var key: String?
        /// An answer not yet waited for: nil inside when issued, else when to ask again.
        var answer: Int64??
        var waiter: CheckedContinuation<Int64?, Never>?
        var cancelled = false
    }
    private let state = Mutex(State())

    func hold(_ pem: String) { state.withLock { $0.key = pem } }

    func take() -> String? {
        state.withLock { state in
            defer { state.key = nil }
            return state.key
        }
    }

    /// The daemon refused (or the certificate could not be used): ask again at `retryAt`; nil: one was issued.
    func answered(retryAt: Int64?) {
        let waiter = state.withLock { state -> CheckedContinuation<Int64?, Never>? in
            guard let waiter = state.waiter else {
                state.answer = .some(retryAt)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: retryAt)
    }

    /// Waits for the answer to the request sent: when to ask again, or nil (issued, or the session ended).
    func answer() async -> Int64? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
                let ready = state.withLock { state -> Int64?? in
                    if state.cancelled { return .some(nil) }
                    if let answer = state.answer {
                        state.answer = nil
                        return .some(answer)
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Int64?, Never>? in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
