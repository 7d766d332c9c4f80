import PulseCore
import PulseStore
import Testing

@testable import PulseDaemon
@testable import PulseSettings

/// What a certified but hostile (or broken) agent can send on one connection, refused before anything is
/// journaled, and bounded in what it makes the connection keep.
@Suite struct HostileFrameTests {
    func body(_ message: WireMessage) -> [UInt8] { Array(WireCodec.encode(message).dropFirst(4)) }

    func descriptor(_ id: UInt32, _ name: InterfaceName = "eth0") -> InterfaceDescriptor {
        InterfaceDescriptor(
            id: id, name: name, epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: id, width: .bits64))
    }

    func ready(
        capabilities: Capabilities = .all, hostname: String = "web-01.example", limits: AgentLimits = AgentLimits()
    ) -> (ConnectionStateMachine, ConnectionStateMachine.Action) {
        var machine = ConnectionStateMachine(daemonName: "netpulsed", agentLimits: limits)
        _ = machine.tlsEstablished(certificateName: "web-01")
        let action = machine.frameReceived(
            body(
                .hello(
                    Hello(agentID: "web-01", hostname: hostname, agentVersion: "0.3.0", capabilities: capabilities)))
        )
        return (machine, action)
    }

    func batch(stream: UInt64 = 7, _ sequence: UInt64, ids: [UInt32], timestamp: Int64 = 1_000) -> WireBatch {
        WireBatch(
            stream: stream, sequence: sequence, timestamps: [timestamp],
            sections: ids.map { BatchSection(descriptorID: $0, ticks: [0], values: CounterValues().values) })
    }

    func rejected(_ action: ConnectionStateMachine.Action) -> (Reject, AgentLimits.Kind?)? {
        if case .reject(let reject, let limit) = action { return (reject, limit) }
        return nil
    }

    /// Batches naming interfaces never described are refused, and leave no coding reference behind: before, each
    /// (stream, id) a batch named stayed in the connection's table for as long as it lived.
    @Test func undescribedInterfacesLeaveNoReferences() {
        var (machine, _) = ready()
        _ = machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor(1)]))))
        for sequence in 1...2_000 {
            let ids = (0..<8).map { UInt32(1_000 + sequence * 8 + $0) }
            let action = machine.frameReceived(body(.batch(batch(UInt64(sequence), ids: ids))))
            #expect(rejected(action)?.0.code == .unknownInterface)
        }
        #expect(machine.keptReferences == 0)
        _ = machine.frameReceived(body(.batch(batch(2_001, ids: [1]))))
        #expect(machine.keptReferences == 1)
    }

    /// With the stream window both sides keep the state of the last four streams only: an agent replaying many
    /// runs' spools on one connection does not make the daemon keep every run's descriptors and references.
    @Test func theStreamWindowForgetsTheLeastRecentlyNamedStream() {
        var (machine, _) = ready()
        for stream in UInt64(1)...20 {
            _ = machine.frameReceived(
                body(.describe(Describe(stream: stream, interfaces: (1...50).map { descriptor($0) }))))
            _ = machine.frameReceived(body(.batch(batch(stream: stream, 1, ids: Array(1...50)))))
            machine.batchCompleted()
        }
        #expect(machine.keptDescriptors == 4 * 50 && machine.keptReferences == 4 * 50)
        // A forgotten stream must be described again.
        let action = machine.frameReceived(body(.batch(batch(stream: 1, 2, ids: [1]))))
        #expect(rejected(action)?.0.code == .unknownInterface)
        // An agent without the capability keeps its descriptors (bounded by the per-connection maximum).
        var (old, _) = ready(capabilities: [.pace, .linkState, .reject])
        for stream in UInt64(1)...20 {
            _ = old.frameReceived(body(.describe(Describe(stream: stream, interfaces: [descriptor(1)]))))
        }
        #expect(old.keptDescriptors == 20)
    }

    /// A timestamp after 9999-12-31 (the crash loop's 2⁶²) and a drop count past 2⁴⁰ are refused by name before the
    /// batch is journaled; the connection goes on.
    @Test func batchesBeyondTheProtocolsBoundsAreRefusedByName() {
        var (machine, _) = ready()
        _ = machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor(1)]))))
        let far = machine.frameReceived(body(.batch(batch(1, ids: [1], timestamp: (1 << 62) - 1))))
        #expect(rejected(far)?.0.code == .invalidBatch && rejected(far)?.0.permanent == true)
        var dropped = batch(2, ids: [1])
        dropped.droppedBefore = UInt64.max
        #expect(rejected(machine.frameReceived(body(.batch(dropped))))?.0.code == .invalidBatch)
        guard case .ingest = machine.frameReceived(body(.batch(batch(3, ids: [1])))) else {
            Issue.record("the connection did not go on")
            return
        }
    }

    /// Names the protocol refuses (a '/', a control byte) end the connection with a reason; names that are not
    /// UTF-8 are fine.
    @Test func describingARefusedNameFailsTheConnection() {
        for name in [InterfaceName("a/b"), InterfaceName(bytes: [0x65, 0x00]), "red\u{1B}[31m", "line\nbreak"] {
            var (machine, _) = ready()
            let action = machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor(1, name)]))))
            guard case .fail(let error, _) = action else {
                Issue.record("\(name) was accepted")
                continue
            }
            #expect(error.code == .malformedFrame && error.message.contains("\\x") != error.message.contains("'/'"))
        }
        var (machine, _) = ready()
        let notUTF8 = InterfaceName(bytes: [0x6E, 0xFF, 0xFE])
        #expect(
            machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor(1, notUTF8)])))) == .none)
    }

    /// A host name with a NUL (it broke PostgreSQL's text columns and made every group commit retry in halves) or
    /// another control character is refused at `HELLO`.
    @Test func aHostNameWithAControlCharacterIsRefused() {
        for hostname in ["web\u{0}01", "web\u{1B}[2J", "web\u{85}"] {
            let (machine, action) = ready(hostname: hostname)
            guard case .fail(let error, _) = action else {
                Issue.record("\(hostname.debugDescription) was accepted")
                continue
            }
            #expect(error.code == .malformedFrame && machine.state == .closed)
        }
    }

    /// Over the interface and stream limits of one agent a batch is refused by name, tagged with the limit (so it
    /// is logged once a minute, not per batch).
    @Test func interfacesAndStreamsBeyondTheLimitsAreRefused() {
        var (machine, _) = ready(limits: AgentLimits(interfaces: 3, streams: 2))
        _ = machine.frameReceived(
            body(.describe(Describe(stream: 7, interfaces: (1...5).map { descriptor($0, InterfaceName("if\($0)")) }))))
        guard case .ingest = machine.frameReceived(body(.batch(batch(1, ids: [1, 2, 3])))) else {
            Issue.record("three interfaces were refused")
            return
        }
        machine.batchCompleted()
        let four = machine.frameReceived(body(.batch(batch(2, ids: [4]))))
        #expect(rejected(four)?.1 == .interfaces)
        for stream in UInt64(8)...9 {
            _ = machine.frameReceived(body(.describe(Describe(stream: stream, interfaces: [descriptor(1, "if1")]))))
        }
        guard case .ingest = machine.frameReceived(body(.batch(batch(stream: 8, 1, ids: [1])))) else {
            Issue.record("the second stream was refused")
            return
        }
        #expect(rejected(machine.frameReceived(body(.batch(batch(stream: 9, 1, ids: [1])))))?.1 == .streams)
    }
}
