import Foundation
import TestSupport
import Testing

@testable import PulseAgent

/// The agent's key and certificate request (`netpulse-agent request`), made with the BoringSSL in the agent and
/// read back by OpenSSL: a P-256 key the owner alone reads, a request signed by it naming the agent, the key kept
/// when a request is made again.
@Suite struct CertificateRequestTests {
    func openssl(_ arguments: String...) throws -> (status: Int32, output: String) {
        try Command.run(["openssl"] + arguments)
    }

    @Test func theRequestIsSignedByANewKeyAndNamesTheAgent() throws {
        let directory = temporaryDirectory()
        let key = directory + "/keys/agent-key.pem"
        let written = try CertificateRequest.write(name: "web-01", keyPath: key, requestPath: directory + "/web-01.csr")
        #expect(written.keyCreated)
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let verified = try openssl("req", "-verify", "-noout", "-subject", "-in", directory + "/web-01.csr")
        #expect(verified.status == 0 && verified.output.contains("CN = web-01"), "\(verified.output)")
        let parsed = try openssl("pkey", "-in", key, "-noout", "-text")
        #expect(parsed.status == 0 && parsed.output.contains("prime256v1"), "\(parsed.output)")
        // The request's key is the one on disk.
        let fromKey = try openssl("pkey", "-in", key, "-pubout")
        let fromRequest = try openssl("req", "-in", directory + "/web-01.csr", "-noout", "-pubkey")
        #expect(fromKey.status == 0 && fromKey.output == fromRequest.output)

        // Made again: the same key, a new request for it.
        let again = try CertificateRequest.write(name: "web-01", keyPath: key, requestPath: directory + "/again.csr")
        #expect(!again.keyCreated)
        #expect(try openssl("req", "-in", directory + "/again.csr", "-noout", "-pubkey").output == fromKey.output)
    }

    @Test func aKeyOfAnotherKindIsNotUsed() throws {
        let directory = temporaryDirectory()
        let key = directory + "/rsa-key.pem"
        #expect(
            try openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key).status == 0)
        #expect(throws: CertificateRequest.Failure.self) {
            try CertificateRequest.write(name: "web-01", keyPath: key, requestPath: directory + "/web-01.csr")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/web-01.csr"))
    }
}
