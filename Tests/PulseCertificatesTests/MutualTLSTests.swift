import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import PulseCertificates

/// Real mutual TLS over loopback with the files `issue` wrote, configured the way the daemon and agent are: the
/// daemon requires a client certificate chained to ca.pem; the agent verifies the daemon's certificate and name.
@Suite("Mutual TLS with issued certificates", .timeLimit(.minutes(1)))
struct MutualTLSTests {
    @Test("an agent and the daemon complete the handshake and a byte is echoed")
    func handshakeAndEcho() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let server = try await EchoServer.start(identity: fleet.daemon, trusting: fleet.ca.certificatePath)
            let outcome = await exchange(
                port: server.port,
                serverHostname: Fleet.daemonName,
                trusting: fleet.ca.certificatePath,
                identity: fleet.agent
            )
            #expect(outcome == .echoed([0x2A]))
            #expect(server.errors.isEmpty)
            try await server.stop()
        }
    }

    @Test("a client whose certificate comes from a different CA is refused")
    func foreignClientRefused() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root + "/fleet")
            let intruder = try Fleet(root: root + "/intruder", caName: "Intruder CA")
            let server = try await EchoServer.start(identity: fleet.daemon, trusting: fleet.ca.certificatePath)
            // The intruder trusts the real CA, so only the server's check of the client certificate can stop it.
            let outcome = await exchange(
                port: server.port,
                serverHostname: Fleet.daemonName,
                trusting: fleet.ca.certificatePath,
                identity: intruder.agent
            )
            #expect(!outcome.isEcho, "\(outcome)")
            #expect(outcome.errors.contains { $0.contains("TLSV1_ALERT_UNKNOWN_CA") }, "\(outcome)")
            #expect(await server.waitForError(containing: "CERTIFICATE_VERIFY_FAILED"), "\(server.errors)")
            try await server.stop()
        }
    }

    @Test("a client without a certificate is refused")
    func anonymousClientRefused() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let server = try await EchoServer.start(identity: fleet.daemon, trusting: fleet.ca.certificatePath)
            let outcome = await exchange(
                port: server.port,
                serverHostname: Fleet.daemonName,
                trusting: fleet.ca.certificatePath,
                identity: nil
            )
            #expect(!outcome.isEcho, "\(outcome)")
            #expect(outcome.errors.contains { $0.contains("TLSV1_ALERT_CERTIFICATE_REQUIRED") }, "\(outcome)")
            #expect(await server.waitForError(containing: "PEER_DID_NOT_RETURN_A_CERTIFICATE"), "\(server.errors)")
            try await server.stop()
        }
    }

    @Test("an agent expecting another server name refuses the daemon")
    func wrongServerNameRefused() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            // No IP addresses here: swift-nio-ssl accepts a certificate whose IP SAN matches the connected address
            // whatever serverHostname says (see connectionByAddress), and this test connects to 127.0.0.1.
            let daemon = try fleet.ca.issue(role: .daemon, name: Fleet.daemonName, outputDirectory: root + "/named")
            let server = try await EchoServer.start(identity: daemon, trusting: fleet.ca.certificatePath)
            let outcome = await exchange(
                port: server.port,
                serverHostname: "other.test",
                trusting: fleet.ca.certificatePath,
                identity: fleet.agent
            )
            #expect(!outcome.isEcho, "\(outcome)")
            #expect(
                outcome.errors.contains { $0.contains("Couldn't find other.test in certificate from peer") },
                "\(outcome)"
            )
            try await server.stop()
        }
    }

    @Test("an IP address SAN identifies the daemon to an agent that connects by address")
    func connectionByAddress() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let server = try await EchoServer.start(identity: fleet.daemon, trusting: fleet.ca.certificatePath)
            let byAddress = await exchange(
                port: server.port,
                serverHostname: nil,
                trusting: fleet.ca.certificatePath,
                identity: fleet.agent
            )
            #expect(byAddress == .echoed([0x2A]))
            try await server.stop()

            let nameOnly = try fleet.ca.issue(role: .daemon, name: Fleet.daemonName, outputDirectory: root + "/named")
            let unnamed = try await EchoServer.start(identity: nameOnly, trusting: fleet.ca.certificatePath)
            let withoutAddress = await exchange(
                port: unnamed.port,
                serverHostname: nil,
                trusting: fleet.ca.certificatePath,
                identity: fleet.agent
            )
            #expect(!withoutAddress.isEcho, "\(withoutAddress)")
            #expect(withoutAddress.errors.contains { $0.contains("failedToValidateHostname") }, "\(withoutAddress)")
            try await unnamed.stop()
        }
    }

    @Test("an agent also accepts the daemon by one of its extra DNS names")
    func extraDNSName() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let server = try await EchoServer.start(identity: fleet.daemon, trusting: fleet.ca.certificatePath)
            let outcome = await exchange(
                port: server.port,
                serverHostname: "localhost",
                trusting: fleet.ca.certificatePath,
                identity: fleet.agent
            )
            #expect(outcome == .echoed([0x2A]))
            try await server.stop()
        }
    }

    @Test("roles are enforced: a daemon certificate cannot act as a client, nor an agent's as a server")
    func extendedKeyUsageEnforced() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let server = try await EchoServer.start(identity: fleet.daemon, trusting: fleet.ca.certificatePath)
            let daemonAsClient = await exchange(
                port: server.port,
                serverHostname: Fleet.daemonName,
                trusting: fleet.ca.certificatePath,
                identity: fleet.daemon
            )
            #expect(!daemonAsClient.isEcho, "\(daemonAsClient)")
            // BoringSSL reports a certificate with the wrong extended key usage as "unsupported certificate".
            #expect(
                daemonAsClient.errors.contains { $0.contains("SSLV3_ALERT_UNSUPPORTED_CERTIFICATE") },
                "\(daemonAsClient)")
            #expect(await server.waitForError(containing: "CERTIFICATE_VERIFY_FAILED"), "\(server.errors)")
            try await server.stop()

            let impostor = try await EchoServer.start(identity: fleet.agent, trusting: fleet.ca.certificatePath)
            let agentAsServer = await exchange(
                port: impostor.port,
                serverHostname: Fleet.agentName,
                trusting: fleet.ca.certificatePath,
                identity: fleet.agent
            )
            #expect(!agentAsServer.isEcho, "\(agentAsServer)")
            #expect(agentAsServer.errors.contains { $0.contains("CERTIFICATE_VERIFY_FAILED") }, "\(agentAsServer)")
            try await impostor.stop()
        }
    }
}
