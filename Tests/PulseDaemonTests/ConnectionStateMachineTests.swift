import PulseCore
import PulseStore
import Testing

@testable import PulseDaemon

@Suite struct ConnectionStateMachineTests {
    let descriptor = InterfaceDescriptor(
        id: 1, name: "eth0", epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: 2, width: .bits64))

    func body(_ message: WireMessage) -> [UInt8] { Array(WireCodec.encode(message).dropFirst(4)) }

    func ready() -> ConnectionStateMachine {
        var machine = ConnectionStateMachine(daemonName: "netpulsed")
        _ = machine.tlsEstablished(certificateName: "web-01")
        _ = machine.frameReceived(
            body(.hello(Hello(agentID: "web-01", hostname: "web-01.example", agentVersion: "0.1.0"))))
        return machine
    }

    func batch(_ sequence: UInt64, descriptor id: UInt32 = 1) -> WireBatch {
        WireBatch(
            stream: 7, sequence: sequence, timestamps: [1_000],
            sections: [BatchSection(descriptorID: id, ticks: [0], values: CounterValues().values)])
    }

    @Test func helloThenDescribeThenBatchIsIngested() {
        var machine = ConnectionStateMachine(daemonName: "netpulsed")
        #expect(machine.tlsEstablished(certificateName: "web-01") == .none)
        let welcome = machine.frameReceived(
            body(.hello(Hello(agentID: "web-01", hostname: "h", agentVersion: "0.1.0"))))
        guard case .send(.welcome(let sent)) = welcome else {
            Issue.record("expected WELCOME, got \(welcome)")
            return
        }
        #expect(sent.version == 2 && sent.daemonName == "netpulsed")
        #expect(machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor])))) == .none)
        #expect(
            machine.frameReceived(body(.batch(batch(1))))
                == .ingest(
                    agent: AgentIdentity(name: "web-01", hostname: "h", version: "0.1.0"), batch: batch(1),
                    descriptors: [descriptor]))
        #expect(machine.frameReceived(body(.keepalive)) == .none)
    }

    @Test func agentIdMustMatchItsCertificate() {
        var machine = ConnectionStateMachine(daemonName: "netpulsed")
        _ = machine.tlsEstablished(certificateName: "web-01")
        let action = machine.frameReceived(body(.hello(Hello(agentID: "db-01", hostname: "h", agentVersion: "0.1.0"))))
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error.code == .identityMismatch)
        #expect(machine.state == .closed)
    }

    @Test func versionsWithoutOverlapAreRefused() {
        var machine = ConnectionStateMachine(daemonName: "netpulsed")
        _ = machine.tlsEstablished(certificateName: "a")
        let hello = Hello(minimumVersion: 7, maximumVersion: 9, agentID: "a", hostname: "h", agentVersion: "9")
        guard case .fail(let error) = machine.frameReceived(body(.hello(hello))) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .unsupportedVersion)

        // An agent of protocol 1 (netpulse 0.1) is told what to do.
        var old = ConnectionStateMachine(daemonName: "netpulsed")
        _ = old.tlsEstablished(certificateName: "a")
        let legacy = Hello(
            minimumVersion: 1, maximumVersion: 1, agentID: "a", hostname: "web-01", agentVersion: "0.1.0")
        guard case .fail(let refused) = old.frameReceived(body(.hello(legacy))) else {
            Issue.record("a version 1 agent was accepted")
            return
        }
        #expect(refused.code == .unsupportedVersion)
        #expect(refused.message.contains("upgrade netpulse-agent 0.1.0 on web-01"))
    }

    /// Labels pass through the daemon's policy: the config overrides them and billing keys come only from it.
    @Test func labelsFollowTheDaemonsPolicy() throws {
        let config = try DaemonConfig.parse(
            ConfigDocument(
                text: "[billing]\ngroup_by = [\"customer\"]\n[labels.web-01]\nsite = \"fra1\"\n", file: "d.toml"))
        var machine = ConnectionStateMachine(
            daemonName: "d", labelPolicy: { config.effectiveLabels(agent: $0, sent: $1) })
        _ = machine.tlsEstablished(certificateName: "web-01")
        _ = machine.frameReceived(body(.hello(Hello(agentID: "web-01", hostname: "h", agentVersion: "0.2.0"))))
        let sent = Labels([("site", "ams1"), ("role", "edge"), ("customer", "acme")])
        #expect(machine.frameReceived(body(.labels(sent))) == .none)
        #expect(machine.agent?.labels == Labels([("role", "edge"), ("site", "fra1")]))
    }

    @Test func framesOutOfOrderAreRefused() {
        var beforeTLS = ConnectionStateMachine(daemonName: "d")
        guard case .fail(let early) = beforeTLS.frameReceived(body(.keepalive)) else {
            Issue.record("accepted"); return
        }
        #expect(early.code == .unexpectedFrame)

        var beforeHello = ConnectionStateMachine(daemonName: "d")
        _ = beforeHello.tlsEstablished(certificateName: "a")
        guard case .fail(let noHello) = beforeHello.frameReceived(body(.batch(batch(1)))) else {
            Issue.record("accepted"); return
        }
        #expect(noHello.code == .unexpectedFrame)

        var undescribed = ready()
        guard case .fail(let unknown) = undescribed.frameReceived(body(.batch(batch(1, descriptor: 9)))) else {
            Issue.record("accepted"); return
        }
        #expect(unknown.code == .unknownInterface)

        var wrongDirection = ready()
        guard case .fail(let wrong) = wrongDirection.frameReceived(body(.ack(Ack(stream: 1, sequence: 1)))) else {
            Issue.record("accepted"); return
        }
        #expect(wrong.code == .unexpectedFrame)
    }

    @Test func malformedAndOversizedInputFails() {
        var garbage = ready()
        guard case .fail(let malformed) = garbage.frameReceived([0x04, 0xFF, 0xFF]) else {
            Issue.record("accepted"); return
        }
        #expect(malformed.code == .malformedFrame)

        var framing = ready()
        guard case .fail(let large) = framing.framingFailed(.limitExceeded("frame of 99999999 bytes")) else {
            Issue.record("accepted"); return
        }
        #expect(large.code == .frameTooLarge)

        var noName = ConnectionStateMachine(daemonName: "d")
        guard case .fail(let anonymous) = noName.tlsEstablished(certificateName: nil) else {
            Issue.record("accepted"); return
        }
        #expect(anonymous.code == .identityMismatch)
    }

    @Test func anAgentThatDoesNotWaitForAcknowledgementsIsStopped() {
        var machine = ready()
        _ = machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor]))))
        for sequence in 1...UInt64(WireLimits.standard.maximumInFlight) {
            guard case .ingest = machine.frameReceived(body(.batch(batch(sequence)))) else {
                Issue.record("batch \(sequence) refused")
                return
            }
        }
        machine.batchCompleted()
        guard case .ingest = machine.frameReceived(body(.batch(batch(100)))) else {
            Issue.record("a batch within the window was refused")
            return
        }
        guard case .fail(let error) = machine.frameReceived(body(.batch(batch(101)))) else {
            Issue.record("accepted beyond the in-flight window")
            return
        }
        #expect(error.code == .overloaded)
    }

    @Test func describeFloodIsBounded() {
        var machine = ConnectionStateMachine(daemonName: "d", maximumDescriptors: 10)
        _ = machine.tlsEstablished(certificateName: "a")
        _ = machine.frameReceived(body(.hello(Hello(agentID: "a", hostname: "h", agentVersion: "1"))))
        let many = (0..<11).map { InterfaceDescriptor(id: UInt32($0), name: "x", epoch: descriptor.epoch) }
        guard case .fail(let error) = machine.frameReceived(body(.describe(Describe(stream: 1, interfaces: many))))
        else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .frameTooLarge)
    }
}
