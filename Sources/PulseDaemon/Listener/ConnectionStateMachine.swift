import PulseCore
import PulseSettings
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
        /// Refuse one batch by name (`REJECT`); the connection goes on. `limit` names the per-agent limit the batch
        /// went over, when that is why.
        case reject(Reject, limit: AgentLimits.Kind? = nil)
        /// Hand the batch to the writer; acknowledge when it is stored.
        case ingest(agent: AgentIdentity, batch: WireBatch, descriptors: [InterfaceDescriptor])
        /// Sign a new certificate for the agent `agent` over the key of `request` (still unchecked), and answer
        /// `RENEWED`.
        case renew(agent: String, request: [UInt8])
        /// A peer-sent `ERROR` or similar: just close.
        case close
    }

    public private(set) var state: State = .awaitingTLS
    public let daemonName: String
    public let limits: WireLimits
    /// A connection may describe at most this many interfaces across its streams, so a hostile (but
    /// certified) peer cannot grow the daemon's memory without bound.
    public let maximumDescriptors: Int
    /// What one agent may grow on this connection (`[limits]`).
    public let agentLimits: AgentLimits
    /// The agent's labels as the daemon uses them (the daemon's config may override what the agent sent).
    let labelPolicy: @Sendable (_ agent: String, _ sent: Labels) -> Labels
    /// Which configuration the labels policy follows: when it moves (a reload), the labels are taken again from what
    /// the agent sent, so the connection's next batch carries the new ones (`docs/windows.md`, "Scopes").
    let labelGeneration: @Sendable () -> Int
    /// What the agent sent in `LABELS`, and the generation its labels were taken at.
    private var sentLabels = Labels([])
    private var labelsTakenAt = 0
    private var described: [UInt64: [UInt32: InterfaceDescriptor]] = [:]
    /// The last sample of each interface on this connection, which the agent's sections are coded against: only of
    /// described interfaces (and, with the stream window, of the streams in it), so it is bounded like them.
    private var references: ReferenceTable? = ReferenceTable()
    private var describedCount = 0
    /// With ``Capabilities/streamWindow``: the streams whose descriptors and references are kept.
    private var window = StreamWindow()
    /// The interface names and streams this connection's batches may use: the first `agentLimits` of each.
    private var names = Set<InterfaceName>()
    private var streams = Set<UInt64>()

    /// Whether `member` may be used: it already is one of `set`, or `set` has room for it (then it is added). The
    /// first `limit` names and streams are the ones a connection keeps; any later one is refused, not swapped in.
    private static func admit<Member: Hashable>(_ member: Member, to set: inout Set<Member>, limit: Int) -> Bool {
        if set.contains(member) { return true }
        guard set.count < limit else { return false }
        set.insert(member)
        return true
    }
    /// Batches handed to the writer and not yet stored; the agent may have `limits.maximumInFlight` at a time.
    public private(set) var inFlight = 0
    /// What both sides support, once `WELCOME` is sent.
    public private(set) var capabilities: Capabilities = []
    /// Whether the daemon renews certificates (`[enrollment]`): only then does it offer ``Capabilities/renewal``.
    public let renews: Bool
    /// Where this connection's renewal stands: one at a time, and none after one was issued (the agent reconnects
    /// with the new certificate), so a peer cannot have the daemon sign in a loop; a refused one may be asked again
    /// (the daemon paces those, one renewal per agent a minute).
    private var renewal = Renewal.none
    enum Renewal: Sendable, Hashable { case none, asking, issued }

    public init(
        daemonName: String, limits: WireLimits = .standard, maximumDescriptors: Int = 16_384,
        agentLimits: AgentLimits = AgentLimits(),
        labelPolicy: @escaping @Sendable (_ agent: String, _ sent: Labels) -> Labels = { $1 },
        labelGeneration: @escaping @Sendable () -> Int = { 0 }, renews: Bool = false
    ) {
        self.renews = renews
        self.daemonName = daemonName
        self.limits = limits
        self.maximumDescriptors = maximumDescriptors
        self.agentLimits = agentLimits
        self.labelPolicy = labelPolicy
        self.labelGeneration = labelGeneration
    }

    /// The TLS handshake finished; `certificateName` is the common name of the verified client certificate.
    public mutating func tlsEstablished(certificateName: String?, operatorCertificate: Bool = false) -> Action {
        guard case .awaitingTLS = state else { return .none }
        guard !operatorCertificate else {
            state = .closed
            return .fail(
                ErrorFrame(
                    .identityMismatch,
                    "this is an operator's certificate, for the HTTP API: an agent sends with a certificate of its own (netpulse ca issue --agent NAME)"
                ))
        }
        guard let certificateName, !certificateName.isEmpty else {
            state = .closed
            return .fail(ErrorFrame(.identityMismatch, "the client certificate has no common name"))
        }
        state = .awaitingHello(certificateName: certificateName)
        return .none
    }

    /// A whole frame arrived (type byte and payload).
    public mutating func frameReceived(_ bytes: [UInt8]) -> Action {
        // Frames a closed connection's last read still held are not even decoded: they could only grow its state.
        guard state != .closed else { return .none }
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
            for (what, text) in [
                ("agent id", hello.agentID), ("host name", hello.hostname), ("agent version", hello.agentVersion),
            ] where !Self.isPrintable(text) {
                // NUL would break PostgreSQL's text columns, the rest logs and terminals.
                return fail(.malformedFrame, "the \(what) in HELLO has a control character")
            }
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
            labelsTakenAt = labelGeneration()
            let identity = AgentIdentity(
                name: hello.agentID, hostname: hello.hostname, version: hello.agentVersion,
                labels: labelPolicy(hello.agentID, Labels([])))
            state = .ready(identity)
            capabilities = hello.capabilities.intersection(renews ? .all : Capabilities.all.subtracting(.renewal))
            return .send(
                .welcome(
                    Welcome(version: version, daemonName: daemonName, capabilities: capabilities, limits: limits)))
        case (.awaitingHello, _):
            return fail(.unexpectedFrame, "the first frame must be HELLO")
        case (.ready, .describe(let describe)):
            for interface in describe.interfaces {
                if let why = interface.name.violation {
                    // A real kernel's names never have these, and agents leave out the few interfaces that do.
                    return fail(.malformedFrame, "\(why), which the protocol refuses")
                }
            }
            nameStream(describe.stream)
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
        case (.ready(var agent), .batch(let batch)):
            nameStream(batch.stream)
            let table = described[batch.stream] ?? [:]
            var descriptors = [InterfaceDescriptor]()
            descriptors.reserveCapacity(batch.sections.count)
            for section in batch.sections {
                guard let descriptor = table[section.descriptorID] else {
                    // Its reference was made while decoding: dropped, so undescribed ids cannot grow the table.
                    forgetUndescribed(batch, table)
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
            if let why = BatchRules.violation(batch) {
                return refuse(batch, .invalidBatch, why)
            }
            guard Self.admit(batch.stream, to: &streams, limit: agentLimits.streams) else {
                return refuse(
                    batch, .invalidBatch,
                    "batch \(batch.sequence) is of a stream beyond the \(agentLimits.streams) one connection may carry ([limits] streams_per_agent)",
                    limit: .streams)
            }
            for descriptor in descriptors {
                guard Self.admit(descriptor.name, to: &names, limit: agentLimits.interfaces) else {
                    return refuse(
                        batch, .invalidBatch,
                        "batch \(batch.sequence) names interface \(descriptor.name), beyond the \(agentLimits.interfaces) one agent may have ([limits] interfaces_per_agent)",
                        limit: .interfaces)
                }
            }
            // An agent that does not wait for acknowledgements would grow the ingest queue without bound.
            guard inFlight < limits.maximumInFlight else {
                return fail(
                    .overloaded, "more than \(limits.maximumInFlight) batches sent without waiting for acknowledgements"
                )
            }
            inFlight += 1
            let generation = labelGeneration()
            if generation != labelsTakenAt {
                labelsTakenAt = generation
                agent.labels = labelPolicy(agent.name, sentLabels)
                state = .ready(agent)
            }
            return .ingest(agent: agent, batch: batch, descriptors: descriptors)
        case (.ready, .keepalive):
            return .none
        case (.ready(let agent), .renew(let renew)):
            guard capabilities.contains(.renewal) else {
                return fail(.unexpectedFrame, "RENEW, but this daemon renews no certificates (it has no [enrollment])")
            }
            switch renewal {
            case .issued:
                return .send(
                    .renewed(.refused("one renewal per connection: reconnect with the certificate already issued")))
            case .asking:
                return .send(.renewed(.refused("a renewal of this connection is under way: wait for its answer")))
            case .none:
                renewal = .asking
                return .renew(agent: agent.name, request: renew.request)
            }
        case (.ready(var agent), .labels(let labels)):
            sentLabels = labels
            labelsTakenAt = labelGeneration()
            agent.labels = labelPolicy(agent.name, labels)
            state = .ready(agent)
            return .none
        case (_, .error):
            state = .closed
            return .close
        case (.ready, _):
            return fail(.unexpectedFrame, "agents send only LABELS, DESCRIBE, BATCH, KEEPALIVE, RENEW and ERROR")
        case (.closed, _):
            return .none
        }
    }

    /// The renewal this connection asked for was answered: issued, or refused (then it may be asked again).
    public mutating func renewalAnswered(issued: Bool) {
        guard renewal == .asking else { return }
        renewal = issued ? .issued : .none
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
    /// on, and the agent sets the batch aside), else the connection fails as before the frame existed. `limit`
    /// names the per-agent limit it went over, if that is why (those are logged once a minute, not per batch).
    private mutating func refuse(
        _ batch: WireBatch, _ code: ErrorCode, _ message: String, limit: AgentLimits.Kind? = nil
    ) -> Action {
        guard capabilities.contains(.reject) else { return fail(code, message) }
        return .reject(
            Reject(stream: batch.stream, sequence: batch.sequence, code: code, permanent: true, message: message),
            limit: limit)
    }

    /// Records that a frame named `stream`: with the stream window, the stream that leaves it is forgotten (its
    /// descriptors and references), as the agent forgets it at the same frame.
    private mutating func nameStream(_ stream: UInt64) {
        guard capabilities.contains(.streamWindow), let left = window.name(stream) else { return }
        describedCount -= described.removeValue(forKey: left)?.count ?? 0
        references?.forget(stream: left)
    }

    /// Drops the references the decoder made for sections of `batch` whose interface `table` does not describe.
    private mutating func forgetUndescribed(_ batch: WireBatch, _ table: [UInt32: InterfaceDescriptor]) {
        for section in batch.sections where table[section.descriptorID] == nil {
            references?.entries[ReferenceKey(stream: batch.stream, descriptorID: section.descriptorID)] = nil
        }
    }

    /// Whether `text` has no control character (C0, DEL, C1).
    static func isPrintable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
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

    /// How many coding references and interface descriptors the connection holds (what a peer can grow).
    public var keptReferences: Int { references?.entries.count ?? 0 }
    public var keptDescriptors: Int { describedCount }
}

extension WireError {
    var isLimit: Bool {
        if case .limitExceeded = self { return true }
        return false
    }
}
