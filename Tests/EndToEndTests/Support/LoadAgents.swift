import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore

@testable import OracleSupport

/// Agents simulated over real mutual TLS, for fault tests under load: each sends its batches of a generated oracle
/// case to the real daemon as fast as acknowledgements allow (within the daemon's in-flight window) and keeps every
/// batch until it is acknowledged. When a connection breaks (the daemon was killed) the agent dials again after a
/// back-off and sends every unacknowledged batch again, oldest first, as the real agent replays its spool; the
/// daemon recognises the ones it already stored by (stream, sequence).
///
/// Each agent has its own certificate (issued by the test with the real CLI) and its own counters, so the daemon
/// does the work of a fleet rather than of one agent repeated.
final class LoadAgents: Sendable {
    struct Tally {
        var acknowledged = 0
        var duplicates = 0
        var connections = 0
        /// REJECT and ERROR frames, in words: a test expects none.
        var refusals = [String]()
    }

    let agents: [LoadAgent]
    let total: Int
    private let tally = NIOLockedValueBox(Tally())

    /// The case's batches, grouped by agent in each agent's sending order (its sequence numbers). Certificates are
    /// `ca/<agent>.pem` and `ca/<agent>-key.pem` under `caDirectory`.
    init(_ oracleCase: OracleCase, caDirectory: String, port: Int) throws {
        var byAgent = [String: [(batch: WireBatch, descriptors: [InterfaceDescriptor])]]()
        for made in oracleCase.wireBatches { byAgent[made.agent, default: []].append((made.batch, made.descriptors)) }
        let labels = oracleCase.labelsByAgent
        let group = MultiThreadedEventLoopGroup.singleton
        var agents = [LoadAgent]()
        for (name, made) in byAgent.sorted(by: { $0.key < $1.key }) {
            // The real agent's TLS settings.
            let configuration = try TLSSetup.client(
                TLSFiles(
                    ca: caDirectory + "/ca.pem", certificate: caDirectory + "/\(name).pem",
                    key: caDirectory + "/\(name)-key.pem"))
            agents.append(
                LoadAgent(
                    name: name, labels: labels[name]!, made: made.sorted { $0.batch.sequence < $1.batch.sequence },
                    context: try NIOSSLContext(configuration: configuration), eventLoop: group.next(), port: port))
        }
        self.agents = agents
        total = agents.reduce(0) { $0 + $1.batches.count }
        for agent in agents { agent.tally = tally }
    }

    func start() { for agent in agents { agent.eventLoop.execute { agent.connect() } } }

    func stop() {
        for agent in agents {
            try? agent.eventLoop.submit {
                agent.stopped = true
                agent.channel?.close(promise: nil)
            }.wait()
        }
    }

    var progress: Tally { tally.withLockedValue { $0 } }
}

/// One simulated agent. Its state is touched only on its event loop.
final class LoadAgent: @unchecked Sendable {
    let name: String
    let labels: Labels
    let stream: UInt64
    /// Every interface epoch the agent's batches use, with the id it has for the whole stream.
    let descriptors: [InterfaceDescriptor]
    let batches: [WireBatch]
    let context: NIOSSLContext
    let eventLoop: any EventLoop
    let port: Int
    fileprivate var tally: NIOLockedValueBox<LoadAgents.Tally>!

    var stopped = false
    var channel: (any Channel)?
    private var acknowledged: [Bool]
    private var firstUnacknowledged = 0
    private var indexOfSequence = [UInt64: Int]()
    /// The connection batches go out on: the one last welcomed, until it ends. A connection that ended may still
    /// deliver frames it had buffered (its ACKs count, they are the daemon's word) but never sends again.
    private var current: ObjectIdentifier?
    /// On the current connection: the next batch to consider, those sent and not acknowledged, and the window.
    private var next = 0
    private var inFlight = Set<UInt64>()
    private var window = 1
    private var references: ReferenceTable?

    /// `made`: the batches, each with its sections' descriptors (a section's id is its position in its batch, as
    /// the case makes them); the ids are renumbered so that each epoch of an interface has one id for the stream,
    /// as the protocol requires.
    init(
        name: String, labels: Labels, made: [(batch: WireBatch, descriptors: [InterfaceDescriptor])],
        context: NIOSSLContext, eventLoop: any EventLoop, port: Int
    ) {
        var ids = [InterfaceDescriptor: UInt32]()
        var descriptors = [InterfaceDescriptor]()
        var batches = [WireBatch]()
        for (batch, sectionDescriptors) in made {
            var renumbered = [UInt32: UInt32]()
            for (position, descriptor) in sectionDescriptors.enumerated() {
                let key = InterfaceDescriptor(id: 0, name: descriptor.name, epoch: descriptor.epoch)
                let id =
                    ids[key]
                    ?? {
                        let id = UInt32(descriptors.count)
                        ids[key] = id
                        descriptors.append(
                            InterfaceDescriptor(
                                id: id, name: descriptor.name, epoch: descriptor.epoch, began: descriptor.began))
                        return id
                    }()
                renumbered[UInt32(position)] = id
            }
            var wire = batch
            wire.sections = batch.sections.map {
                BatchSection(descriptorID: renumbered[$0.descriptorID]!, ticks: $0.ticks, values: $0.values)
            }
            wire.linkStates = batch.linkStates.map {
                LinkStateRecord(descriptorID: renumbered[$0.descriptorID]!, tick: $0.tick, state: $0.state)
            }
            batches.append(wire)
        }
        self.name = name
        self.labels = labels
        stream = batches.first?.stream ?? 0
        self.descriptors = descriptors
        self.batches = batches
        self.context = context
        self.eventLoop = eventLoop
        self.port = port
        acknowledged = [Bool](repeating: false, count: batches.count)
        for (index, batch) in batches.enumerated() { indexOfSequence[batch.sequence] = index }
    }

    var done: Bool { firstUnacknowledged == batches.count }

    /// Where the agent is, for a test that finds it stuck.
    var state: String {
        "\(name): \(firstUnacknowledged) of \(batches.count) acknowledged in order, \(inFlight.count) in flight, "
            + (current == nil ? "not connected" : "connected")
    }

    /// Dials the daemon. Every attempt ends in exactly one redial (a failed connect, or the end of the connection)
    /// until everything is acknowledged, so an agent has at most one connection at a time.
    func connect() {
        guard !stopped, !done else { return }
        let agent = self
        ClientBootstrap(group: eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(2))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: agent.context, serverHostname: "netpulsed"))
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(FrameDecoder(maximumFrameBytes: 1 << 20)))
                    try channel.pipeline.syncOperations.addHandler(LoadConnection(agent: agent))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .whenComplete { result in
                switch result {
                case .success(let channel): agent.channel = channel
                case .failure: agent.redial()
                }
            }
    }

    /// A connection ended: if it was the current one, whatever it had in flight is sent again on the next.
    func connectionEnded(_ channel: any Channel) {
        if current == ObjectIdentifier(channel) {
            current = nil
            inFlight.removeAll()
        }
        redial()
    }

    private func redial() {
        guard !stopped, !done else { return }
        eventLoop.scheduleTask(in: .milliseconds(150)) { self.connect() }
    }

    func welcomed(_ welcome: Welcome, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        tally.withLockedValue { $0.connections += 1 }
        current = ObjectIdentifier(context.channel)
        window = max(1, welcome.limits.maximumInFlight)
        references = ReferenceTable()
        inFlight.removeAll()
        next = firstUnacknowledged
        write(.labels(labels), context)
        for start in stride(from: 0, to: descriptors.count, by: 1_000) {
            let part = Array(descriptors[start..<min(start + 1_000, descriptors.count)])
            write(.describe(Describe(stream: stream, interfaces: part)), context)
        }
        fill(context)
    }

    func acknowledge(_ sequence: UInt64, duplicate: Bool, context: ChannelHandlerContext) {
        guard let index = indexOfSequence[sequence] else { return }
        if !acknowledged[index] {
            acknowledged[index] = true
            tally.withLockedValue {
                $0.acknowledged += 1
                if duplicate { $0.duplicates += 1 }
            }
            while firstUnacknowledged < batches.count && acknowledged[firstUnacknowledged] { firstUnacknowledged += 1 }
        }
        guard current == ObjectIdentifier(context.channel) else { return }
        inFlight.remove(sequence)
        if done {
            context.close(promise: nil)
        } else {
            fill(context)
        }
    }

    func refused(_ what: String) {
        tally.withLockedValue { $0.refusals.append("\(name): \(what)") }
    }

    private func fill(_ context: ChannelHandlerContext) {
        var wrote = false
        while inFlight.count < window && next < batches.count {
            let batch = batches[next]
            next += 1
            if acknowledged[next - 1] { continue }
            inFlight.insert(batch.sequence)
            context.write(
                NIOAny(ByteBuffer(bytes: WireCodec.encode(.batch(batch), references: &references))), promise: nil)
            wrote = true
        }
        if wrote { context.flush() }
    }

    private func write(_ message: WireMessage, _ context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: WireCodec.encode(message))), promise: nil)
    }
}

/// One connection of a ``LoadAgent``: HELLO, then WELCOME, LABELS, DESCRIBE and batches; ACKs move the agent on.
private final class LoadConnection: ChannelInboundHandler {
    typealias InboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    let agent: LoadAgent

    init(agent: LoadAgent) { self.agent = agent }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(
            wrapOutboundOut(
                ByteBuffer(
                    bytes: WireCodec.encode(
                        .hello(Hello(agentID: agent.name, hostname: agent.name, agentVersion: "load")))
                )),
            promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard let message = try? WireCodec.decode(frame) else {
            agent.refused("undecodable frame from the daemon")
            context.close(promise: nil)
            return
        }
        switch message {
        case .welcome(let welcome): agent.welcomed(welcome, context: context)
        case .ack(let ack): agent.acknowledge(ack.sequence, duplicate: ack.duplicate, context: context)
        case .reject(let reject):
            agent.refused("REJECT \(reject)")
            context.close(promise: nil)
        case .error(let error):
            agent.refused("ERROR \(error)")
            context.close(promise: nil)
        default: break  // PACE: the load is what the test offers; the daemon's TCP backpressure still holds it.
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        agent.connectionEnded(context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
