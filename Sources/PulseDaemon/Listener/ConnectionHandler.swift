import Logging
import NIOCore
import NIOSSL
import NIOTLS
import PulseCertificates
import PulseCore
import PulseStore
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Glue between one agent connection and its ``ConnectionStateMachine``: feeds it frames and TLS and timer
/// events, and carries out its actions on the channel.
///
/// When the ingest queue is full it keeps the batch frame it could not hand over, undecoded, and reads nothing more
/// from the agent until the queue has room: the agent's further batches stay in its spool (and the kernel's socket buffers), not
/// in the daemon's memory. What one read already brought in waits here as the frames it came as, not decoded: a
/// batch is decoded (its samples, up to 65,536 of them, about 5 MB once decoded) only when the queue has room for it,
/// so what a connection holds while the queue is full is at most a read's worth of frames as they came over the wire.
///
/// Not `Sendable`: it lives on its channel's event loop.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = [UInt8]
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var machine: ConnectionStateMachine
    private let queue: IngestQueue
    /// Holds the issuing CA renewals are signed with (as loaded now).
    private let tls: TLSContextBox
    private let registry: ConnectionRegistry
    private var logger: Logger
    private let handshakeTimeout: TimeAmount
    private var handshakeTimer: Scheduled<Void>?
    private var tlsEstablished = false
    /// The agent, once this connection is in the registry.
    private var registered: AgentIdentity?
    /// When the agent's certificate expires (Unix seconds), from its handshake: for `/metrics`.
    private var certificateNotAfter: Int64?
    /// The agent's certificate, from its handshake: checked again before it is renewed.
    private var peerCertificate: Certificate?
    /// Frames not yet given to the state machine, oldest first: a batch waits here, undecoded, while the ingest
    /// queue is full, and the frames behind it wait with it; while any wait, nothing more is read. A batch is
    /// decoded only once the queue has promised it a place (``IngestQueue/reserve()``), so a connection holds at
    /// most what one read brought in, never a decoded batch.
    private var pending: [[UInt8]] = []
    /// A place in the ingest queue promised to the batch frame being handled.
    private var reservation = false
    private var readRequested = false
    private var waitingForRoom = false
    private var removed = false

    init(
        machine: ConnectionStateMachine, queue: IngestQueue, tls: TLSContextBox, registry: ConnectionRegistry,
        logger: Logger, handshakeTimeout: TimeAmount
    ) {
        self.machine = machine
        self.queue = queue
        self.tls = tls
        self.registry = registry
        self.logger = logger
        self.handshakeTimeout = handshakeTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if let remote = context.channel.remoteAddress { logger[metadataKey: "peer"] = "\(remote)" }
        let channel = context.channel
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let contextBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        handshakeTimer = context.eventLoop.scheduleTask(in: handshakeTimeout) {
            let handler = loopBound.value
            guard !handler.machine.isReady, channel.isActive else { return }
            handler.perform(
                handler.machine.timedOut("no TLS handshake and HELLO within \(handler.handshakeTimeout)"),
                context: contextBound.value)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
        // Frames not read yet were never acknowledged: the agent sends them again when it reconnects.
        pending.removeAll()
        handshakeTimer?.cancel()
        // By now the state machine may be `.closed` (an error, a timeout): what counts is whether it was added.
        // The registry frees the connection's slot when the channel closes (Listener).
        if let agent = registered { logger.info("agent \(agent.name) disconnected") }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case TLSUserEvent.handshakeCompleted(_):
            tlsEstablished = true
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
                .peerCertificate
            let der = certificate.flatMap { try? $0.toDERBytes() }
            let isOperator = der.flatMap(CertificateRole.init(derEncoded:)) == .operator
            certificateNotAfter = certificate.map { Int64($0.notValidAfter) }
            peerCertificate = der.flatMap { try? Certificate(derEncoded: $0) }
            perform(
                machine.tlsEstablished(
                    certificateName: certificate.flatMap(Self.commonName), operatorCertificate: isOperator),
                context: context)
        case IdleStateHandler.IdleStateEvent.read where pending.isEmpty:
            perform(machine.timedOut("no frame for longer than the idle timeout"), context: context)
        case IdleStateHandler.IdleStateEvent.read:
            break  // not reading on purpose: the ingest queue is full
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
        drain(context: context)
    }

    /// Gives the state machine the frames that wait, in order, while the ingest queue has room: a batch is decoded
    /// only then. When it has none, waits for it (``IngestQueue/whenRoom(_:)``); once everything is taken, reading
    /// resumes.
    private func drain(context: ChannelHandlerContext) {
        while let next = pending.first {
            // Only a batch waits for room (frames keep their order behind it): a HELLO or a keepalive goes on.
            if next.first == FrameType.batch.rawValue {
                guard queue.reserve() else {
                    waitForRoom(context: context)
                    return
                }
                reservation = true
            }
            received(pending.removeFirst(), context: context)
            // Refused, a duplicate, or not a batch to store: its place goes back.
            if reservation {
                reservation = false
                queue.release()
            }
            // A frame that failed the connection: what is left is not read.
            if !context.channel.isActive { pending.removeAll() }
        }
        if readRequested {
            readRequested = false
            context.read()
        }
    }

    private func waitForRoom(context: ChannelHandlerContext) {
        guard !waitingForRoom else { return }
        waitingForRoom = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        queue.whenRoom {
            loop.execute {
                let handler = handler.value
                handler.waitingForRoom = false
                guard !handler.removed else { return }
                handler.drain(context: boundContext.value)
            }
        }
    }

    private func received(_ frame: [UInt8], context: ChannelHandlerContext) {
        let wasReady = machine.isReady
        perform(machine.frameReceived(frame), context: context)
        if !wasReady, let agent = machine.agent {
            handshakeTimer?.cancel()
            logger[metadataKey: "agent"] = "\(agent.name)"
            logger.info("agent \(agent.name) connected (\(agent.hostname), version \(agent.version))")
            let limit = machine.agentLimits.connections
            let older = registry.add(
                context.channel, agent: agent.name, limit: limit, certificateNotAfter: certificateNotAfter)
            registered = agent
            if !older.isEmpty {
                let message =
                    "closing its oldest connection(s): more than \(limit) at once; the newest is kept (a link that died silently)"
                if let line = registry.limitRefusals.refused(agent: agent.name, .connections, message) {
                    logger.warning("\(line)")
                }
                let frame = WireCodec.encode(
                    .error(
                        ErrorFrame(
                            .overloaded,
                            "agent \(agent.name) has more than \(limit) connections ([limits] connections_per_agent); this older one is closed"
                        )))
                for channel in older {
                    channel.writeAndFlush(ByteBuffer(bytes: frame)).whenComplete { _ in channel.close(promise: nil) }
                }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let wire = error as? WireError {
            perform(machine.framingFailed(wire), context: context)
        } else if machine.isReady {
            logger.warning("connection failed: \(error)")
            context.close(promise: nil)
        } else {
            // Most often a refused client certificate or a port scan: worth a line, not a warning.
            logger.notice("TLS handshake failed: \(Self.handshakeFailure(error))")
            context.close(promise: nil)
        }
    }

    private func perform(_ action: ConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .send(let message):
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: WireCodec.encode(message))), promise: nil)
            if case .welcome = message, let pace = registry.currentPace, pace != .normal {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: WireCodec.encode(.pace(pace)))), promise: nil)
            }
        case .fail(let error, _) where !tlsEstablished:
            // No TLS session to carry an ERROR frame: just close.
            logger.notice("closing connection: \(error)")
            context.close(promise: nil)
        case .fail(let error, let rejecting):
            if let rejecting { refuse(rejecting, on: context.channel) }
            logger.warning("closing connection: \(error)")
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: WireCodec.encode(.error(error))))).whenComplete {
                _ in
                channel.close(promise: nil)
            }
        case .reject(let reject, nil):
            refuse(reject, on: context.channel)
        case .reject(let reject, let limit?):
            // Over a per-agent limit: the refusal is counted and logged once a minute, not once per batch.
            registry.rejectedBatches.add(1, ordering: .relaxed)
            if let line = registry.limitRefusals.refused(agent: machine.agent?.name ?? "?", limit, reject.message) {
                logger.warning("\(line)")
            }
            context.channel.writeAndFlush(ByteBuffer(bytes: WireCodec.encode(.reject(reject))), promise: nil)
        case .close:
            context.close(promise: nil)
        case .renew(let agent, let request):
            renew(agent: agent, request: request, on: context.channel)
        case .ingest(let agent, let batch, let descriptors):
            let channel = context.channel
            let logger = self.logger
            let stream = batch.stream
            let sequence = batch.sequence
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            if batch.droppedBefore > 0 {
                logger.warning(
                    "agent \(agent.name) reports \(batch.droppedBefore) batch(es) lost from its spool (full, or its disk failing)"
                )
            }
            let takesRejects = machine.capabilities.contains(.reject)
            let registry = self.registry
            let completion: @Sendable (Result<IngestOutcome, any Error>) -> Void = { result in
                channel.eventLoop.execute { handler.value.machine.batchCompleted() }
                switch result {
                case .success(let outcome):
                    let ack = Ack(stream: stream, sequence: sequence, duplicate: outcome == .duplicate)
                    channel.writeAndFlush(ByteBuffer(bytes: WireCodec.encode(.ack(ack))), promise: nil)
                case .failure(let error)
                where takesRejects && !(error is ErrorFrame):
                    // The store refused this batch alone (the ingest service commits a failed group again in
                    // halves): refused by name, for good when the batch itself breaks a rule; the connection goes on.
                    let reject: Reject
                    if case StoreError.invalidBatch(let why) = error {
                        reject = Reject(
                            stream: stream, sequence: sequence, code: .invalidBatch, permanent: true, message: why)
                    } else {
                        reject = Reject(
                            stream: stream, sequence: sequence, code: .storageFailure, permanent: false,
                            message: "the daemon cannot store it now: \(error)")
                    }
                    Self.refuse(reject, on: channel, registry: registry, logger: logger)
                case .failure(let error):
                    let frame = error as? ErrorFrame ?? ErrorFrame(.storageFailure, "\(error)")
                    logger.error("batch \(sequence) not stored, closing so the agent retries: \(frame)")
                    channel.writeAndFlush(ByteBuffer(bytes: WireCodec.encode(.error(frame)))).whenComplete { _ in
                        channel.close(promise: nil)
                    }
                }
            }
            // The place reserved before its frame was decoded (``drain(context:)``); a batch is only ever handed over
            // from a batch frame, so there is one, and the offer cannot be refused.
            let reserved = reservation
            reservation = false
            if !queue.offer(
                IngestBatch(agent: agent, batch: batch, descriptors: descriptors), reserved: reserved,
                completion: completion)
            {
                completion(.failure(ErrorFrame(.overloaded, "the ingest queue is full")))
            }
        }
    }

    /// Signs the agent's new certificate off the event loop (parsing and checking the request, an ECDSA signature)
    /// and answers `RENEWED`; the connection goes on, and the agent reconnects with the new certificate.
    private func renew(agent: String, request: [UInt8], on channel: any Channel) {
        let renewal = tls.renewal
        let logger = self.logger
        // The connection's certificate, as it stands now: not past its end (a connection outlives its certificate),
        // and not revoked by a list put in place since the last reload (it is read again here, so a stolen key
        // cannot be renewed between a revocation and the reload that applies it).
        var refusal: String?
        if let leaf = peerCertificate, leaf.notValidAfter < Date() {
            refusal = "the certificate of this connection expired on \(DateText.format(leaf.notValidAfter))"
        }
        if refusal == nil, let leaf = peerCertificate, let path = tls.check.revokedPath {
            do {
                if let entry = try RevocationList.load(path: path).entry(for: leaf) {
                    refusal = "the certificate of this connection is revoked: \(entry.description)"
                }
            } catch {
                refusal = "the revocation list cannot be read: \(error)"
            }
        }
        if refusal == nil, !tls.mayRenew(agent) {
            refusal = "renewed less than a minute ago: ask again with the certificate it gave"
        }
        if let refusal {
            logger.warning("refused to renew the certificate of agent \(agent): \(refusal)")
            machine.renewalAnswered(issued: false)
            channel.writeAndFlush(ByteBuffer(bytes: WireCodec.encode(.renewed(.refused(refusal)))), promise: nil)
            return
        }
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        Task {
            let answer: Renewed
            switch renewal?.renew(agent: agent, request: request) {
            case .success(let chain):
                answer = .issued(chain)
                if let leaf = try? Certificate(derEncoded: chain[0]) {
                    logger.notice(
                        "renewed the certificate of agent \(agent): serial \(RevocationList.serialText(leaf.serialNumber)), valid until \(DateText.format(leaf.notValidAfter))"
                    )
                }
            case .failure(let refusal):
                answer = .refused(refusal.description)
                logger.warning("refused to renew the certificate of agent \(agent): \(refusal)")
            case nil:
                answer = .refused("this daemon no longer renews certificates (its [enrollment] was removed)")
                logger.warning("refused to renew the certificate of agent \(agent): no [enrollment] any more")
            }
            let issued = if case .issued = answer { true } else { false }
            channel.eventLoop.execute { handler.value.machine.renewalAnswered(issued: issued) }
            channel.writeAndFlush(ByteBuffer(bytes: WireCodec.encode(.renewed(answer))), promise: nil)
        }
    }

    private func refuse(_ reject: Reject, on channel: any Channel) {
        Self.refuse(reject, on: channel, registry: registry, logger: logger)
    }

    /// Sends a `REJECT`, logs it and counts it (for the status line).
    private static func refuse(_ reject: Reject, on channel: any Channel, registry: ConnectionRegistry, logger: Logger)
    {
        if reject.permanent {
            registry.rejectedBatches.add(1, ordering: .relaxed)
            logger.warning("\(reject); the agent sets it aside and goes on")
        } else {
            logger.error("\(reject); the agent keeps it and sends it again")
        }
        channel.writeAndFlush(ByteBuffer(bytes: WireCodec.encode(.reject(reject))), promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if pending.isEmpty {
            context.read()
        } else {
            readRequested = true
        }
    }

    /// Why a TLS handshake failed, in an operator's words, with BoringSSL's reason code (what to search for); the
    /// library's whole error (with its source file and line) for reasons not known here.
    static func handshakeFailure(_ error: any Error) -> String {
        let text = "\(error)"
        let reasons: [(code: String, meaning: String)] = [
            ("PEER_DID_NOT_RETURN_A_CERTIFICATE", "the client sent no certificate"),
            (
                "CERTIFICATE_VERIFY_FAILED",
                "the client's certificate was refused (another CA's, expired, not a client's, or revoked: the \"refused … connection(s)\" line says which)"
            ),
            ("UNSUPPORTED_PROTOCOL", "the client offered only TLS versions older than 1.2"),
            ("NO_SHARED_CIPHER", "the client offered no cipher suite the daemon accepts"),
            ("WRONG_VERSION_NUMBER", "the client did not speak TLS"),
            ("HTTP_REQUEST", "the client sent plain HTTP"),
        ]
        guard let reason = reasons.first(where: { text.contains($0.code) }) else { return text }
        return "\(reason.meaning) (\(reason.code))"
    }

    /// The last common name of a certificate's subject.
    static func commonName(_ certificate: NIOSSLCertificate) -> String? {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
            return nil
        }
        var name: String?
        for rdn in parsed.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                name = String(attribute.value)
            }
        }
        return name
    }
}
