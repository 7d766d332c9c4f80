import PulseCore
import PulseStore

/// The daemon's side of one agent connection as a pure value: frames in, actions out. No sockets, so every
/// protocol rule is tested directly.
public struct ConnectionStateMachine: Sendable {
    public enum State: Sendable, Hashable {
        /// TLS not finished: we do not know who the peer is.
        case awaitingTLS
        /// TLS done; waiting for `HELLO` from the agent whose certificate names `certificateName`.
        case awaitingHello(certificateName: String)
        case ready(AgentIdentity)
        case closed
    }

    public enum Action: Sendable, Hashable {
        case none
        case send(WireMessage)
        /// Send an `ERROR` frame, then close; first a `REJECT` of the batch that could not be decoded, when the agent
        /// takes them (the connection's coding references are in doubt after a failed decode, so it closes too).
        case fail(ErrorFrame, rejecting: Reject? = nil)
        /// Refuse one batch by name (`REJECT`); the connection goes on.
        case reject(Reject)
        /// Hand the batch to the writer; acknowledge when it is stored.
        case ingest(agent: AgentIdentity, batch: WireBatch, descriptors: [InterfaceDescriptor])
        /// A peer-sent `ERROR` or similar: just close.
        case close
    }

    public private(set) var state: State = .awaitingTLS
    public let daemonName: String
    public let limits: WireLimits
    /// A connection may describe at most this many interfaces across its streams, so a hostile (but
    /// certified) peer cannot grow the daemon's memory without bound.
    public let maximumDescriptors: Int
    /// The agent's labels as the daemon uses them (the daemon's config may override what the agent sent).
    let labelPolicy: @Sendable (_ agent: String, _ sent: Labels) -> Labels
    private var described: [UInt64: [UInt32: InterfaceDescriptor]] = [:]
    /// The last sample of each interface on this connection, which the agent's sections are coded against.
    private var references: ReferenceTable? = ReferenceTable()
    private var describedCount = 0
    /// Batches handed to the writer and not yet stored; the agent may have `limits.maximumInFlight` at a time.
    public private(set) var inFlight = 0
    /// What both sides support, once `WELCOME` is sent.
    public private(set) var capabilities: Capabilities = []

    public init(
        daemonName: String, limits: WireLimits = .standard, maximumDescriptors: Int = 16_384,
        labelPolicy: @escaping @Sendable (_ agent: String, _ sent: Labels) -> Labels = { $1 }
    ) {
        self.daemonName = daemonName
        self.limits = limits
        self.maximumDescriptors = maximumDescriptors
        self.labelPolicy = labelPolicy
    }

    /// The TLS handshake finished; `certificateName` is the common name of the verified client certificate.
    public mutating func tlsEstablished(certificateName: String?) -> Action {
        guard case .awaitingTLS = state else { return .none }
        guard let certificateName, !certificateName.isEmpty else {
            state = .closed
            return .fail(ErrorFrame(.identityMismatch, "the client certificate has no common name"))
        }
        state = .awaitingHello(certificateName: certificateName)
        return .none
    }

    /// A whole frame arrived (type byte and payload).
    public mutating func frameReceived(_ bytes: [UInt8]) -> Action {
        let message: WireMessage
        do {
            message = try WireCodec.decode(bytes, limits: limits, references: &references)
        } catch {
            let code: ErrorCode = error.isLimit ? .frameTooLarge : .malformedFrame
            // A batch that cannot be decoded would be sent again, unchanged, on every connection: refused for good,
            // so the agent sets it aside and the batches behind it are delivered.
            if isReady, capabilities.contains(.reject), let name = WireCodec.batchName(bytes) {
                state = .closed
                return .fail(
                    ErrorFrame(code, "batch \(name.sequence) could not be decoded: \(error)"),
                    rejecting: Reject(
                        stream: name.stream, sequence: name.sequence, code: code, permanent: true,
                        message: "\(error)"))
            }
            return fail(code, "\(error)")
        }
        switch (state, message) {
        case (.awaitingTLS, _):
            return fail(.unexpectedFrame, "frame before the TLS handshake completed")
        case (.awaitingHello(let certificateName), .hello(let hello)):
            guard hello.agentID == certificateName else {
                return fail(
                    .identityMismatch,
                    "agent id '\(hello.agentID)' does not match its certificate's name '\(certificateName)'; set [agent] id to the certificate name or issue a certificate for '\(hello.agentID)'"
                )
            }
            let version = min(hello.maximumVersion, ProtocolVersion.maximum)
            guard version >= max(hello.minimumVersion, ProtocolVersion.minimum) else {
                let advice =
                    hello.maximumVersion < ProtocolVersion.minimum
                    ? "upgrade netpulse-agent \(hello.agentVersion) on \(hello.hostname) to this daemon's version (its spool is kept and converted)"
                    : "upgrade netpulsed to the agent's version"
                return fail(
                    .unsupportedVersion,
                    "agent speaks protocol versions \(hello.minimumVersion)…\(hello.maximumVersion), daemon \(ProtocolVersion.minimum)…\(ProtocolVersion.maximum): \(advice)"
                )
            }
            let identity = AgentIdentity(
                name: hello.agentID, hostname: hello.hostname, version: hello.agentVersion,
                labels: labelPolicy(hello.agentID, Labels([])))
            state = .ready(identity)
            capabilities = hello.capabilities.intersection(.all)
            return .send(
                .welcome(
                    Welcome(version: version, daemonName: daemonName, capabilities: capabilities, limits: limits)))
        case (.awaitingHello, _):
            return fail(.unexpectedFrame, "the first frame must be HELLO")
        case (.ready, .describe(let describe)):
            var table = described[describe.stream] ?? [:]
            for interface in describe.interfaces where table[interface.id] != interface {
                if table[interface.id] == nil { describedCount += 1 }
                table[interface.id] = interface
            }
            guard describedCount <= maximumDescriptors else {
                return fail(.frameTooLarge, "more than \(maximumDescriptors) interfaces described on one connection")
            }
            described[describe.stream] = table
            return .none
        case (.ready(let agent), .batch(let batch)):
            let table = described[batch.stream] ?? [:]
            var descriptors = [InterfaceDescriptor]()
            descriptors.reserveCapacity(batch.sections.count)
            for section in batch.sections {
                guard let descriptor = table[section.descriptorID] else {
                    return refuse(
                        batch, .unknownInterface,
                        "batch \(batch.sequence) uses interface \(section.descriptorID) of stream \(Hex.string(batch.stream, width: 16)), which was not described on this connection"
                    )
                }
                descriptors.append(descriptor)
            }
            for record in batch.linkStates where table[record.descriptorID] == nil {
                return refuse(
                    batch, .unknownInterface,
                    "batch \(batch.sequence) has a link state for undescribed interface \(record.descriptorID)")
            }
            guard batch.order < UInt64(Int64.max) else {
                return refuse(
                    batch, .invalidBatch, "batch \(batch.sequence) has order \(batch.order), above 2⁶³ − 1")
            }
            // An agent that does not wait for acknowledgements would grow the ingest queue without bound.
            guard inFlight < limits.maximumInFlight else {
                return fail(
                    .overloaded, "more than \(limits.maximumInFlight) batches sent without waiting for acknowledgements"
                )
            }
            inFlight += 1
            return .ingest(agent: agent, batch: batch, descriptors: descriptors)
        case (.ready, .keepalive):
            return .none
        case (.ready(var agent), .labels(let labels)):
            agent.labels = labelPolicy(agent.name, labels)
            state = .ready(agent)
            return .none
        case (_, .error):
            state = .closed
            return .close
        case (.ready, _):
            return fail(.unexpectedFrame, "agents send only LABELS, DESCRIBE, BATCH, KEEPALIVE and ERROR")
        case (.closed, _):
            return .none
        }
    }

    /// A batch this connection handed over has been stored (or failed to be).
    public mutating func batchCompleted() {
        inFlight = max(0, inFlight - 1)
    }

    /// The frame decoder rejected the byte stream (for example a length above the limit).
    public mutating func framingFailed(_ error: WireError) -> Action {
        fail(error.isLimit ? .frameTooLarge : .malformedFrame, "\(error)")
    }

    /// The handshake or idle timer fired.
    public mutating func timedOut(_ what: String) -> Action {
        fail(.timeout, what)
    }

    /// A batch that breaks a rule of the daemon's: refused by name when the agent takes `REJECT` (the connection goes
    /// on, and the agent sets the batch aside), else the connection fails as before the frame existed.
    private mutating func refuse(_ batch: WireBatch, _ code: ErrorCode, _ message: String) -> Action {
        guard capabilities.contains(.reject) else { return fail(code, message) }
        return .reject(
            Reject(stream: batch.stream, sequence: batch.sequence, code: code, permanent: true, message: message))
    }

    private mutating func fail(_ code: ErrorCode, _ message: String) -> Action {
        state = .closed
        return .fail(ErrorFrame(code, message))
    }

    public var agent: AgentIdentity? {
        if case .ready(let agent) = state { return agent }
        return nil
    }

    public var isReady: Bool { agent != nil }
}

extension WireError {
    var isLimit: Bool {
        if case .limitExceeded = self { return true }
        return false
    }
}
