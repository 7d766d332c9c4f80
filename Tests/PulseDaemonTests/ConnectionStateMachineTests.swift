import PulseCore
import PulseStore
import Testing

@testable import PulseDaemon
@testable import PulseSettings

@Suite struct ConnectionStateMachineTests {
    let descriptor = InterfaceDescriptor(
        id: 1, name: "eth0", epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: 2, width: .bits64))

    func body(_ message: WireMessage) -> [UInt8] { Array(WireCodec.encode(message).dropFirst(4)) }

    func ready(capabilities: Capabilities = .all) -> ConnectionStateMachine {
        var machine = ConnectionStateMachine(daemonName: "netpulsed")
        _ = machine.tlsEstablished(certificateName: "web-01")
        _ = machine.frameReceived(
            body(
                .hello(
                    Hello(
                        agentID: "web-01", hostname: "web-01.example", agentVersion: "0.1.0",
                        capabilities: capabilities))))
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
        guard case .fail(let error, _) = action else {
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
        guard case .fail(let error, _) = machine.frameReceived(body(.hello(hello))) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .unsupportedVersion)

        // An agent of protocol 1 (netpulse 0.1) is told what to do.
        var old = ConnectionStateMachine(daemonName: "netpulsed")
        _ = old.tlsEstablished(certificateName: "a")
        let legacy = Hello(
            minimumVersion: 1, maximumVersion: 1, agentID: "a", hostname: "web-01", agentVersion: "0.1.0")
        guard case .fail(let refused, _) = old.frameReceived(body(.hello(legacy))) else {
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
        // No `[labels] from_agents`: the agent sets none of its labels itself.
        #expect(machine.agent?.labels == Labels([("site", "fra1")]))
    }

    /// A reload that gives the agent other labels reaches a connection made before it: its next batch carries the
    /// labels the new configuration gives what the agent sent (docs/windows.md, "Scopes"), so the store never sees
    /// the old ones again and does not move the agent back.
    @Test func aReloadGivesTheNextBatchTheNewLabels() throws {
        func config(_ site: String) throws -> DaemonConfig {
            try DaemonConfig.parse(
                ConfigDocument(
                    text: "[labels]\nfrom_agents = [\"role\"]\n[labels.web-01]\nsite = \"\(site)\"\n", file: "d.toml"))
        }
        let current = CurrentConfig(try config("fra1"))
        var machine = ConnectionStateMachine(
            daemonName: "d", labelPolicy: { current.value.effectiveLabels(agent: $0, sent: $1) },
            labelGeneration: { current.generation })
        _ = machine.tlsEstablished(certificateName: "web-01")
        _ = machine.frameReceived(body(.hello(Hello(agentID: "web-01", hostname: "h", agentVersion: "0.2.0"))))
        _ = machine.frameReceived(body(.labels(Labels([("role", "edge")]))))
        _ = machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor]))))
        func labels(of action: ConnectionStateMachine.Action) -> Labels? {
            guard case .ingest(let agent, _, _) = action else { return nil }
            return agent.labels
        }
        #expect(
            labels(of: machine.frameReceived(body(.batch(batch(1))))) == Labels([("role", "edge"), ("site", "fra1")]))
        machine.batchCompleted()
        current.replace(try config("ams1"))
        #expect(
            labels(of: machine.frameReceived(body(.batch(batch(2))))) == Labels([("role", "edge"), ("site", "ams1")]))
        #expect(machine.agent?.labels == Labels([("role", "edge"), ("site", "ams1")]))
    }

    @Test func framesOutOfOrderAreRefused() {
        var beforeTLS = ConnectionStateMachine(daemonName: "d")
        guard case .fail(let early, _) = beforeTLS.frameReceived(body(.keepalive)) else {
            Issue.record("accepted"); return
        }
        #expect(early.code == .unexpectedFrame)

        var beforeHello = ConnectionStateMachine(daemonName: "d")
        _ = beforeHello.tlsEstablished(certificateName: "a")
        guard case .fail(let noHello, _) = beforeHello.frameReceived(body(.batch(batch(1)))) else {
            Issue.record("accepted"); return
        }
        #expect(noHello.code == .unexpectedFrame)

        var undescribed = ready(capabilities: [.pace, .linkState])
        guard case .fail(let unknown, _) = undescribed.frameReceived(body(.batch(batch(1, descriptor: 9)))) else {
            Issue.record("accepted"); return
        }
        #expect(unknown.code == .unknownInterface)

        var wrongDirection = ready()
        guard case .fail(let wrong, _) = wrongDirection.frameReceived(body(.ack(Ack(stream: 1, sequence: 1)))) else {
            Issue.record("accepted"); return
        }
        #expect(wrong.code == .unexpectedFrame)
    }

    @Test func malformedAndOversizedInputFails() {
        var garbage = ready()
        guard case .fail(let malformed, _) = garbage.frameReceived([0x04, 0xFF, 0xFF]) else {
            Issue.record("accepted"); return
        }
        #expect(malformed.code == .malformedFrame)

        var framing = ready()
        guard case .fail(let large, _) = framing.framingFailed(.limitExceeded("frame of 99999999 bytes")) else {
            Issue.record("accepted"); return
        }
        #expect(large.code == .frameTooLarge)

        var noName = ConnectionStateMachine(daemonName: "d")
        guard case .fail(let anonymous, _) = noName.tlsEstablished(certificateName: nil) else {
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
        guard case .fail(let error, _) = machine.frameReceived(body(.batch(batch(101)))) else {
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
        guard case .fail(let error, _) = machine.frameReceived(body(.describe(Describe(stream: 1, interfaces: many))))
        else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .frameTooLarge)
    }

    /// An agent that takes `REJECT` has a batch the daemon will never store refused by name, and its connection goes
    /// on (before, the connection failed and the agent sent the same batch again on every reconnect).
    @Test func aBatchTheDaemonWillNeverStoreIsRejectedByNameAndTheConnectionGoesOn() {
        var machine = ready()
        #expect(machine.capabilities.contains(.reject))
        _ = machine.frameReceived(body(.describe(Describe(stream: 7, interfaces: [descriptor]))))

        let undescribed = machine.frameReceived(body(.batch(batch(1, descriptor: 9))))
        guard case .reject(let unknown, _) = undescribed else {
            Issue.record("expected REJECT, got \(undescribed)"); return
        }
        #expect(unknown.stream == 7 && unknown.sequence == 1 && unknown.code == .unknownInterface && unknown.permanent)

        var tooLate = batch(2)
        tooLate.order = UInt64(Int64.max) + 5
        guard case .reject(let order, _) = machine.frameReceived(body(.batch(tooLate))) else {
            Issue.record("an order above 2⁶³ − 1 was not rejected"); return
        }
        #expect(order.sequence == 2 && order.code == .invalidBatch && order.permanent)
        #expect(machine.inFlight == 0)

        // The connection goes on: the next batch is ingested.
        guard case .ingest = machine.frameReceived(body(.batch(batch(3)))) else {
            Issue.record("the connection did not go on after a REJECT"); return
        }

        // A batch that cannot be decoded is refused by name, and the connection closes (its coding references are in
        // doubt).
        var broken = Array(body(.batch(batch(4))))
        broken.append(0x00)  // a trailing byte
        guard case .fail(let error, let rejecting?) = machine.frameReceived(broken) else {
            Issue.record("a malformed batch was not refused by name"); return
        }
        #expect(error.code == .malformedFrame)
        #expect(rejecting.stream == 7 && rejecting.sequence == 4 && rejecting.permanent)
        #expect(!machine.isReady)
    }

    /// Renewal is offered only by a daemon that renews (`[enrollment]`), and a connection may ask once.
    @Test func renewalIsOfferedOnlyWithEnrollmentAndAskedOncePerConnection() {
        let request = Renew(request: Array(repeating: 0x30, count: 64))
        var plain = ready()
        #expect(!plain.capabilities.contains(.renewal))
        guard case .fail(let error, _) = plain.frameReceived(body(.renew(request))) else {
            Issue.record("RENEW on a daemon without [enrollment] must fail the connection")
            return
        }
        #expect(error.code == .unexpectedFrame && error.message.contains("[enrollment]"), "\(error)")

        var machine = ConnectionStateMachine(daemonName: "netpulsed", renews: true)
        _ = machine.tlsEstablished(certificateName: "web-01")
        guard
            case .send(.welcome(let welcome)) = machine.frameReceived(
                body(.hello(Hello(agentID: "web-01", hostname: "h", agentVersion: "0.3.0"))))
        else {
            Issue.record("expected WELCOME")
            return
        }
        #expect(welcome.capabilities.contains(.renewal))
        #expect(machine.frameReceived(body(.renew(request))) == .renew(agent: "web-01", request: request.request))
        // One at a time: another while the first is answered is refused, and the connection goes on.
        guard case .send(.renewed(.refused(let busy))) = machine.frameReceived(body(.renew(request))) else {
            Issue.record("a RENEW while one is under way must be refused")
            return
        }
        #expect(busy.contains("under way"))
        // Refused (the daemon's pacing, say): it may be asked again on the same connection.
        machine.renewalAnswered(issued: false)
        #expect(machine.frameReceived(body(.renew(request))) == .renew(agent: "web-01", request: request.request))
        // Issued: none more on this connection, which the agent leaves for one with the new certificate.
        machine.renewalAnswered(issued: true)
        guard case .send(.renewed(.refused(let why))) = machine.frameReceived(body(.renew(request))) else {
            Issue.record("a RENEW after one was issued on the connection must be refused")
            return
        }
        #expect(why.contains("one renewal per connection"))
        #expect(machine.isReady)

        // An agent that did not offer renewal may not use it either.
        var old = ConnectionStateMachine(daemonName: "netpulsed", renews: true)
        _ = old.tlsEstablished(certificateName: "web-01")
        _ = old.frameReceived(
            body(.hello(Hello(agentID: "web-01", hostname: "h", agentVersion: "0.2.0", capabilities: [.pace]))))
        guard case .fail = old.frameReceived(body(.renew(request))) else {
            Issue.record("RENEW without the capability must fail the connection")
            return
        }
    }
}
