import Foundation
import Testing

extension EndToEnd {
    /// An agent enrolled as an operator would, with the real binaries: `netpulse-agent request` makes its key and a
    /// request where its config says, `netpulse ca sign` signs the request (the key never goes to the CA), and the
    /// agent then delivers with the certificate it got back.
    @Suite(.serialized) struct EnrollmentTests {
        @Test(.timeLimit(.minutes(2)))
        func anAgentEnrolledByRequestAndSignatureDelivers() throws {
            let fleet = try Fleet(agents: [])
            defer { fleet.shutdown() }
            let ca = fleet.directory + "/ca"
            let config = try fleet.writeAgentConfig("web-01", include: #"["lo"]"#)
            let requested = try run([Build.agent, "request", "--config", config])
            #expect(requested.contains("made a key: \(ca)/web-01-key.pem"), "\(requested)")
            #expect(requested.contains("wrote a request for agent 'web-01': \(ca)/web-01.csr"), "\(requested)")
            let signed = try run([Build.cli, "ca", "sign", "--dir", ca, ca])
            #expect(signed.contains("signed agent certificate 'web-01': \(ca)/web-01.pem"), "\(signed)")
            // Signed once: the directory has nothing more to sign.
            #expect(try run([Build.cli, "ca", "sign", "--dir", ca, ca]).contains("nothing to sign"))

            try fleet.startDaemon()
            let agent = try fleet.startAgent("web-01", config: config)
            try eventually("the enrolled agent's points arrive") { try fleet.samples("web-01", "lo").count >= 3 }
            #expect(agent.isRunning)

            // A request filed under another agent's name is refused, and nothing is written.
            try FileManager.default.copyItem(atPath: "\(ca)/web-01.csr", toPath: "\(fleet.directory)/db-01.csr")
            let refused = try run(
                ["sh", "-c", "\(Build.cli) ca sign --dir \(ca) \(fleet.directory)/db-01.csr 2>&1; echo exit $?"],
                allowFailure: true)
            #expect(refused.hasSuffix("exit 1\n"), "\(refused)")
            #expect(refused.contains(#"it asks for the name "web-01", not "db-01""#), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: "\(fleet.directory)/db-01.pem"))
        }
    }
}
