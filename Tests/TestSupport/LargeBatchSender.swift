import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore
import Synchronization

/// One agent sending batches of 1,024 interfaces × 64 ticks over real mutual TLS, keeping up to 8 (a few hundred KB,
/// which the socket buffers hold, so a write never waits for a daemon that stopped reading)
/// unacknowledged, until it has sent `batches` or the daemon stops acknowledging for 5 s (it stopped reading).
/// Returns how many the daemon acknowledged.
public struct LargeBatchSender: Sendable {
    public let agent: String
    public let directory: String
    public let port: Int
    public let stream: UInt64

    /// `directory/ca` holds `ca.pem`, `AGENT.pem` and `AGENT-key.pem`.
    public init(agent: String, directory: String, port: Int, stream: UInt64) {
        self.agent = agent
        self.directory = directory
        self.port = port
        self.stream = stream
    }

    public func run(batches: Int) async throws -> Int {
        let interfaces = (0..<1_024).map {
            InterfaceDescriptor(
                id: UInt32($0), name: InterfaceName("veth\($0)"),
                epoch: CounterEpoch(bootID: BootID(high: stream, low: 1), ifindex: UInt32($0 + 2), width: .bits64))
        }
        let ticks = 64
        let start = Int64(Date().timeIntervalSince1970 * 1000) - Int64(batches * ticks) * 1_000 - 60_000
        // One batch is coded (in a debug build that takes a second), and each one sent is that batch with its own
        // sequence, order and first timestamp: the same counters at later ticks. What the daemon holds per batch
        // does not depend on the counters' values.
        var sections = [BatchSection]()
        for interface in interfaces {
            var values = [UInt64]()
            for tick in 0..<ticks {
                for counter in 0..<Counter.count {
                    values.append(UInt64(tick) * UInt64(1_000 + counter) + UInt64(interface.id))
                }
            }
            sections.append(BatchSection(descriptorID: interface.id, ticks: Array(0..<ticks), values: values))
        }
        // Physical NICs, as a real host's would be: each step counts toward the host and the fleet as well, the
        // most work a batch gives the store (interfaces of unknown kind count toward no scope).
        let links = interfaces.map { interface in
            LinkStateRecord(
                descriptorID: interface.id, tick: 0,
                state: LinkState(
                    speedMbps: 10_000, operState: .up, carrier: true, mtu: 1_500, kind: .physical, relation: []))
        }
        let template = WireCodec.encode(
            .batch(
                WireBatch(
                    stream: stream, sequence: 1, order: 1, timestamps: (0..<ticks).map { start + Int64($0) * 1_000 },
                    sections: sections, linkStates: links)))
        func batch(_ number: Int) throws -> [UInt8] {
            // length, type, stream | sequence, order, dropped, interval, heartbeat, tick count, first timestamp | rest
            var reader = WireReader(Array(template.dropFirst(4)))
            let head = try reader.readBytes(9)
            var fields = try (0..<7).map { _ in try reader.readVarint() }
            fields[0] = UInt64(number + 1)
            fields[1] = UInt64(number + 1)
            fields[6] = UInt64(start + Int64(number * ticks) * 1_000)
            var writer = WireWriter()
            writer.writeBytes(head)
            for field in fields { writer.writeVarint(field) }
            writer.writeBytes(try reader.readBytes(reader.remaining))
            let length = UInt32(writer.bytes.count)
            return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) } + writer.bytes
        }
        // Connected once the batch is coded: a handshake must not wait for the coding of eight agents' batches.
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .file(directory + "/ca/ca.pem")
        configuration.certificateChain = try NIOSSLCertificate.fromPEMFile("\(directory)/ca/\(agent).pem").map {
            .certificate($0)
        }
        configuration.privateKey = .privateKey(
            try NIOSSLPrivateKey(file: "\(directory)/ca/\(agent)-key.pem", format: .pem))
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(
            host: "127.0.0.1", port: port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    NIOSSLClientHandler(context: context, serverHostname: "netpulsed"))
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        let acknowledged = AckCount()
        try await channel.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    var received = [UInt8]()
                    for try await buffer in inbound {
                        received += Array(buffer.readableBytesView)
                        var index = 0
                        while index + 4 <= received.count {
                            let length = received[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
                            guard index + 4 + length <= received.count else { break }
                            if case .ack = try? WireCodec.decode(Array(received[(index + 4)..<(index + 4 + length)])) {
                                acknowledged.add()
                            }
                            index += 4 + length
                        }
                        received.removeFirst(index)
                    }
                }
                try await outbound.write(
                    ByteBuffer(
                        bytes: WireCodec.encode(.hello(Hello(agentID: agent, hostname: agent, agentVersion: "load")))
                            + WireCodec.encode(.labels(Labels([])))
                            + WireCodec.encode(.describe(Describe(stream: stream, interfaces: interfaces)))))
                var sent = 0
                var seen = 0
                var progressed = ContinuousClock.now
                // Until all are acknowledged, or none for 5 s: the daemon stopped reading from this connection.
                while true {
                    let now = acknowledged.value
                    if now != seen {
                        seen = now
                        progressed = .now
                    }
                    if now >= batches || ContinuousClock.now - progressed > .seconds(5) { break }
                    if sent < batches && sent - now < 8 {
                        try await outbound.write(ByteBuffer(bytes: try batch(sent)))
                        sent += 1
                    } else {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                tasks.cancelAll()
            }
        }
        return acknowledged.value
    }

    /// Acknowledgements counted by the reading task, read by the writing one.
    final class AckCount: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }
}
