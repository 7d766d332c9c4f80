import Foundation
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// The daemon refuses peers without a valid certificate and bad frames, and keeps serving everyone else.
    @Suite(.serialized) struct RefusalTests {
        @Test(.timeLimit(.minutes(2)))
        func agentsWithoutAValidCertificateAreRefused() async throws {
            let fleet = try Fleet(agents: ["agent-1", "impostor-cert"])
            try fleet.startDaemon()
            let good = try fleet.startAgent(
                "agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))

            // A certificate from another CA.
            let rogueCA = fleet.directory + "/rogue"
            try run([Build.cli, "ca", "init", "--dir", rogueCA, "--no-issuing"])
            try run([Build.cli, "ca", "issue", "--dir", rogueCA, "--agent", "rogue", "--out", fleet.directory + "/ca"])
            let rogue = try fleet.startAgent("rogue", config: try fleet.writeAgentConfig("rogue", include: #"["lo"]"#))
            // A valid certificate, but for another name than the agent claims.
            let impostor = try fleet.startAgent(
                "impostor",
                config: try fleet.writeAgentConfig("impostor", include: #"["lo"]"#, certificate: "impostor-cert"))

            try eventually("the good agent's points arrive") { try fleet.samples("agent-1", "lo").count >= 5 }
            try eventually("rogue refused") { rogue.output.contains("cannot connect") }
            try eventually("impostor refused") { impostor.output.contains("identity-mismatch") }
            #expect(fleet.daemon!.output.contains("TLS handshake failed"))

            // No certificate at all.
            let anonymous = try await RawClient.exchange(
                port: fleet.port, ca: fleet.directory + "/ca/ca.pem", certificate: nil, key: nil,
                send: [WireCodec.encode(.hello(Hello(agentID: "anonymous", hostname: "x", agentVersion: "0")))])
            #expect(anonymous.closed)
            #expect(!anonymous.messages.contains { if case .welcome = $0 { true } else { false } })

            #expect(try fleet.storedAgents().map(\.name) == ["agent-1"])
            #expect(good.isRunning && fleet.daemon!.isRunning)
        }

        @Test(.timeLimit(.minutes(2)))
        func malformedAndOversizedFramesAreRejectedWithoutHarmingOthers() async throws {
            let fleet = try Fleet(agents: ["agent-1", "prober"])
            try fleet.startDaemon()
            try fleet.startAgent("agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 3 }

            let ca = fleet.directory + "/ca/ca.pem"
            let certificate = fleet.directory + "/ca/prober.pem"
            let key = fleet.directory + "/ca/prober-key.pem"
            let hello = WireCodec.encode(
                .hello(Hello(agentID: "prober", hostname: "x", agentVersion: "0", capabilities: [.pace, .linkState])))

            func errorCode(_ chunks: [[UInt8]]) async throws -> ErrorCode? {
                let outcome = try await RawClient.exchange(
                    port: fleet.port, ca: ca, certificate: certificate, key: key, send: chunks)
                #expect(outcome.closed, "the daemon must close the connection")
                return outcome.messages.compactMap { if case .error(let error) = $0 { error.code } else { nil } }.first
            }

            // A batch frame whose body is garbage.
            #expect(try await errorCode([hello, [0, 0, 0, 6, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]) == .malformedFrame)
            // A frame announcing 2 GiB: refused from its length prefix alone.
            #expect(try await errorCode([hello, [0x7F, 0xFF, 0xFF, 0xFF, 0x04]]) == .frameTooLarge)
            // Garbage instead of HELLO.
            #expect(try await errorCode([[0, 0, 0, 3, 0x09, 0x01, 0x02]]) == .malformedFrame)
            // A batch for an interface never described.
            let batch = WireBatch(
                stream: 1, sequence: 1, timestamps: [1_000],
                sections: [BatchSection(descriptorID: 5, ticks: [0], values: CounterValues().values)])
            #expect(try await errorCode([hello, WireCodec.encode(.batch(batch))]) == .unknownInterface)
            // The same batch from a client that takes REJECT: that batch is refused by name, the connection stays.
            let rejecting = try await RawClient.exchange(
                port: fleet.port, ca: ca, certificate: certificate, key: key,
                send: [
                    WireCodec.encode(.hello(Hello(agentID: "prober", hostname: "x", agentVersion: "0"))),
                    WireCodec.encode(.batch(batch)),
                ], timeout: .seconds(2))
            #expect(!rejecting.closed, "a REJECT does not close the connection")
            #expect(
                rejecting.messages.contains {
                    if case .reject(let reject) = $0 {
                        reject.stream == 1 && reject.sequence == 1 && reject.code == .unknownInterface
                            && reject.permanent
                    } else {
                        false
                    }
                })

            // The good agent is still served: new points keep arriving after the attacks.
            let before = try fleet.samples("agent-1", "lo").count
            try eventually("more points after the attacks") { try fleet.samples("agent-1", "lo").count >= before + 5 }
            #expect(fleet.daemon!.isRunning)
        }
    }
}
