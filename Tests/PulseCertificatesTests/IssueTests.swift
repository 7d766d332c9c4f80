import Foundation
import Testing

@testable import PulseCertificates

@Suite("Issuing agent and daemon certificates")
struct IssueTests {
    @Test("an agent certificate verifies against ca.pem as a TLS client only, with its name as CN and only SAN")
    func agentCertificate() throws {
        try withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let agent = fleet.agent
            let caFile = fleet.ca.certificatePath

            #expect(agent.certificatePath == root + "/certs/agent-01.pem")
            #expect(agent.keyPath == root + "/certs/agent-01-key.pem")
            #expect(agent.dnsNames == ["agent-01"])
            #expect(agent.ipAddresses.isEmpty)
            #expect(try permissions(agent.keyPath) == 0o600)
            #expect(try permissions(agent.certificatePath) == 0o644)
            #expect(try contents(agent.keyPath).hasPrefix("-----BEGIN PRIVATE KEY-----\n"))

            let verify = try openssl("verify", "-CAfile", caFile, agent.certificatePath)
            #expect(verify.succeeded && verify.output.contains("agent-01.pem: OK"), "\(verify)")
            let asClient = try openssl("verify", "-CAfile", caFile, "-purpose", "sslclient", agent.certificatePath)
            #expect(asClient.succeeded, "\(asClient)")
            let asServer = try openssl("verify", "-CAfile", caFile, "-purpose", "sslserver", agent.certificatePath)
            #expect(!asServer.succeeded, "an agent certificate must not pass as a server: \(asServer)")

            let extensions = try openssl(
                "x509", "-in", agent.certificatePath, "-noout", "-ext", "extendedKeyUsage,subjectAltName"
            )
            #expect(extensions.output.contains("X509v3 Extended Key Usage: \n    TLS Web Client Authentication\n"))
            #expect(extensions.output.contains("X509v3 Subject Alternative Name: \n    DNS:agent-01\n"))
            #expect(!extensions.output.contains("Server"), "\(extensions)")

            try expectCommonLeafProperties(agent, ca: fleet.ca, commonName: "agent-01")
        }
    }

    @Test("a daemon certificate is a TLS server for its name, extra DNS names and IPv4 and IPv6 addresses")
    func daemonCertificate() throws {
        try withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let daemon = try fleet.ca.issue(
                role: .daemon,
                name: "collector-1",
                dnsNames: ["collector.example.com", "COLLECTOR-1", "collector.example.com"],
                ipAddresses: ["127.0.0.1", "::1", "0:0::1", "192.0.2.7"],
                validity: .days(90),
                outputDirectory: root + "/daemon"
            )
            #expect(daemon.dnsNames == ["collector-1", "collector.example.com"])
            #expect(daemon.ipAddresses == ["127.0.0.1", "::1", "192.0.2.7"])
            #expect(try permissions(daemon.keyPath) == 0o600)
            #expect((89.9...90.1).contains(daemon.notValidAfter.timeIntervalSinceNow / 86_400))

            let caFile = fleet.ca.certificatePath
            for (flag, value) in [
                ("-verify_hostname", "collector-1"), ("-verify_hostname", "collector.example.com"),
                ("-verify_ip", "127.0.0.1"), ("-verify_ip", "::1"),
            ] {
                let verify = try openssl(
                    "verify", "-CAfile", caFile, "-purpose", "sslserver", flag, value, daemon.certificatePath
                )
                #expect(verify.succeeded, "\(flag) \(value): \(verify)")
            }
            let wrongName = try openssl(
                "verify", "-CAfile", caFile, "-verify_hostname", "other.example.com", daemon.certificatePath
            )
            #expect(!wrongName.succeeded, "\(wrongName)")
            let asClient = try openssl("verify", "-CAfile", caFile, "-purpose", "sslclient", daemon.certificatePath)
            #expect(!asClient.succeeded, "a daemon certificate must not pass as a client: \(asClient)")

            let extensions = try openssl(
                "x509", "-in", daemon.certificatePath, "-noout", "-ext", "extendedKeyUsage,subjectAltName"
            )
            #expect(extensions.output.contains("X509v3 Extended Key Usage: \n    TLS Web Server Authentication\n"))
            #expect(
                extensions.output.contains(
                    "DNS:collector-1, DNS:collector.example.com, IP Address:127.0.0.1, "
                        + "IP Address:0:0:0:0:0:0:0:1, IP Address:192.0.2.7\n"
                ),
                "\(extensions)"
            )
            #expect(!extensions.output.contains("Client"), "\(extensions)")

            try expectCommonLeafProperties(daemon, ca: fleet.ca, commonName: "collector-1")
        }
    }

    @Test("existing certificate files are kept unless overwriting is allowed; then both are replaced, no temp left")
    func overwrite() throws {
        try withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let certs = root + "/certs"
            let before = try contents(fleet.agent.keyPath)

            let error = expectCAError(.fileExists) {
                _ = try fleet.ca.issue(role: .agent, name: Fleet.agentName, outputDirectory: certs)
            }
            #expect(error?.path == fleet.agent.certificatePath)
            #expect(error?.message.contains("already exists. Refusing to overwrite it") == true)
            #expect(try contents(fleet.agent.keyPath) == before)

            let reissued = try fleet.ca.issue(
                role: .agent, name: Fleet.agentName, outputDirectory: certs, overwrite: true)
            #expect(reissued.serialNumber != fleet.agent.serialNumber)
            #expect(try contents(reissued.keyPath) != before)
            #expect(try permissions(reissued.keyPath) == 0o600)
            #expect(
                try listing(certs) == [
                    "agent-01-key.pem", "agent-01.pem", "netpulsed.test-key.pem", "netpulsed.test.pem",
                ]
            )
            let verify = try openssl("verify", "-CAfile", fleet.ca.certificatePath, reissued.certificatePath)
            #expect(verify.succeeded, "\(verify)")
        }
    }

    @Test("a write that fails says where and why, and leaves no temporary file behind")
    func failedWriteCleansUp() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let certs = root + "/certs"
            try FileManager.default.createDirectory(atPath: certs + "/d.pem", withIntermediateDirectories: true)
            let error = expectCAError(.writeFailed) {
                _ = try ca.issue(role: .daemon, name: "d", outputDirectory: certs, overwrite: true)
            }
            #expect(
                error?.message == """
                    Cannot write \(certs)/d.pem: is a directory. Check free space and that this user may write to \
                    the directory; no partial file was left behind.
                    """
            )
            let left = try listing(certs)
            #expect(left.allSatisfy { !$0.hasPrefix(".") }, "\(left)")
        }
    }

    @Test("a certificate named like the CA cannot replace the CA's own files, even with overwrite")
    func cannotOverwriteCAFiles() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root)
            for overwrite in [false, true] {
                let error = expectCAError(.wouldOverwriteCA) {
                    _ = try ca.issue(role: .daemon, name: "ca", outputDirectory: root, overwrite: overwrite)
                }
                #expect(error?.path == root + "/ca.pem")
            }
            #expect(try CertificateAuthority.load(directory: root).fingerprint == ca.fingerprint)
        }
    }

    @Test("agent certificates take no extra names; certificates cannot outlive the CA or have silly validity")
    func issueArgumentErrors() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca", validityDays: 30)
            let certs = root + "/certs"
            _ = expectCAError(.extraNamesForAgent) {
                _ = try ca.issue(role: .agent, name: "a", dnsNames: ["b"], outputDirectory: certs)
            }
            _ = expectCAError(.extraNamesForAgent) {
                _ = try ca.issue(role: .agent, name: "a", ipAddresses: ["10.0.0.1"], outputDirectory: certs)
            }
            let outlives = expectCAError(.invalidValidity) {
                _ = try ca.issue(role: .agent, name: "a", validity: .days(365), outputDirectory: certs)
            }
            #expect(outlives?.message.contains("after the CA that signs it") == true)
            // 30 days when issued within the CA's first second, 29 after that.
            let advice = outlives?.message ?? ""
            #expect(advice.contains("Choose at most 29 days") || advice.contains("Choose at most 30 days"), "\(advice)")
            _ = expectCAError(.invalidValidity) {
                _ = try ca.issue(role: .agent, name: "a", validity: .days(0), outputDirectory: certs)
            }
            #expect(!FileManager.default.fileExists(atPath: certs))

            let fits = try ca.issue(role: .agent, name: "a", validity: .days(29), outputDirectory: certs)
            #expect(fits.notValidAfter <= ca.notValidAfter)
        }
    }

    @Test("an issued certificate can be made by a CA that was loaded from disk")
    func issueFromLoadedCA() throws {
        try withTemporaryDirectory { root in
            _ = try CertificateAuthority.create(directory: root + "/ca")
            let ca = try CertificateAuthority.load(directory: root + "/ca")
            let daemon = try ca.issue(role: .daemon, name: "d", outputDirectory: root + "/out")
            let verify = try openssl("verify", "-CAfile", ca.certificatePath, daemon.certificatePath)
            #expect(verify.succeeded, "\(verify)")
        }
    }

    /// Checks what agent and daemon certificates share: subject, issuer, critical CA:FALSE and digitalSignature,
    /// key identifiers that link to the CA, a P-256 key that matches the certificate, and the leaf alone in the file.
    private func expectCommonLeafProperties(
        _ issued: IssuedCertificate,
        ca: CertificateAuthority,
        commonName: String
    ) throws {
        let text = try openssl("x509", "-in", issued.certificatePath, "-noout", "-text").output
        for expected in [
            "Subject: CN = \(commonName)\n",
            "Issuer: CN = Test Fleet CA\n",
            "X509v3 Basic Constraints: critical\n                CA:FALSE",
            "X509v3 Key Usage: critical\n                Digital Signature\n",
            "X509v3 Subject Key Identifier",
            "ASN1 OID: prime256v1",
        ] {
            #expect(text.contains(expected), "missing \(expected) in \(text)")
        }
        let caText = try openssl("x509", "-in", ca.certificatePath, "-noout", "-ext", "subjectKeyIdentifier").output
        let caKeyIdentifier = caText.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"
        let authorityKeyIdentifier = try openssl(
            "x509", "-in", issued.certificatePath, "-noout", "-ext", "authorityKeyIdentifier"
        ).output
        #expect(authorityKeyIdentifier.contains(caKeyIdentifier), "\(authorityKeyIdentifier) vs \(caKeyIdentifier)")

        let certificatePublicKey = try openssl("x509", "-in", issued.certificatePath, "-noout", "-pubkey").output
        let keyPublicKey = try openssl("pkey", "-in", issued.keyPath, "-pubout").output
        #expect(certificatePublicKey == keyPublicKey)

        let pem = try contents(issued.certificatePath)
        #expect(pem.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 2, "NAME.pem holds the leaf alone")
        #expect(issued.serialNumber.count == 16 * 3 - 1)
    }
}
