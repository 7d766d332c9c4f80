import Foundation
import Testing

@testable import PulseCertificates

@Suite("Creating and loading the CA")
struct CertificateAuthorityTests {
    @Test("create writes ca.pem and a 0600 PKCS#8 key into a new 0700 directory, and load reads them back")
    func createThenLoad() throws {
        try withTemporaryDirectory { root in
            let directory = root + "/etc/netpulse/ca"
            let created = try CertificateAuthority.create(directory: directory, commonName: "Test Fleet CA")

            #expect(created.certificatePath == directory + "/ca.pem")
            #expect(created.privateKeyPath == directory + "/ca-key.pem")
            #expect(try listing(directory) == ["ca-key.pem", "ca.pem"])
            #expect(try permissions(directory) == 0o700)
            #expect(try permissions(root + "/etc/netpulse") == 0o755 & ~processUmask())
            #expect(try permissions(created.privateKeyPath) == 0o600)
            #expect(try permissions(created.certificatePath) == 0o644)
            #expect(try contents(created.privateKeyPath).hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            #expect(try contents(created.certificatePath).hasPrefix("-----BEGIN CERTIFICATE-----\n"))
            for path in [created.certificatePath, created.privateKeyPath] {
                let text = try contents(path)
                #expect(text.hasSuffix("-----\n") && !text.hasSuffix("\n\n"), "\(path) should end in one newline")
            }

            let loaded = try CertificateAuthority.load(directory: directory)
            #expect(loaded.fingerprint == created.fingerprint)
            #expect(loaded.commonName == "Test Fleet CA")
            #expect(loaded.notValidAfter == created.notValidAfter)
            #expect(loaded.warnings.isEmpty)

            let fingerprint = try openssl("x509", "-in", created.certificatePath, "-noout", "-fingerprint", "-sha256")
            #expect(fingerprint.output.contains(created.fingerprint), "\(fingerprint)")
        }
    }

    @Test(
        "the CA certificate is a P-256 CA with pathlen 1 (room for an issuing CA), critical key usage, a key identifier and a 16-byte serial"
    )
    func caCertificateContents() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root, commonName: "Test Fleet CA")
            let text = try openssl("x509", "-in", ca.certificatePath, "-noout", "-text")
            #expect(text.succeeded, "\(text)")
            for expected in [
                "Issuer: CN = Test Fleet CA",
                "Subject: CN = Test Fleet CA",
                "Signature Algorithm: ecdsa-with-SHA256",
                "ASN1 OID: prime256v1",
                "X509v3 Basic Constraints: critical\n                CA:TRUE, pathlen:1",
                "X509v3 Key Usage: critical\n                Certificate Sign, CRL Sign",
                "X509v3 Subject Key Identifier",
            ] {
                #expect(text.output.contains(expected), "missing \(expected) in \(text.output)")
            }

            let serial = try openssl("x509", "-in", ca.certificatePath, "-noout", "-serial").output
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let hex = serial.dropFirst("serial=".count)
            #expect(hex.count == 32, "\(serial)")
            #expect(hex.first.map { "4567".contains($0) } == true, "serial must be positive with its top bits 01")

            let days = ca.notValidAfter.timeIntervalSinceNow / 86_400
            #expect((3649...3650).contains(days))

            let key = try openssl("pkey", "-in", ca.privateKeyPath, "-noout", "-text")
            #expect(key.output.contains("NIST CURVE: P-256"), "\(key)")
        }
    }

    @Test("create refuses to replace an existing CA, even when only one of its files is there")
    func createRefusesToOverwrite() throws {
        try withTemporaryDirectory { root in
            let first = try CertificateAuthority.create(directory: root)
            let error = expectCAError(.caAlreadyExists) { _ = try CertificateAuthority.create(directory: root) }
            #expect(error?.path == root + "/ca.pem")
            #expect(error?.message.contains("Refusing to overwrite it") == true)
            #expect(try CertificateAuthority.load(directory: root).fingerprint == first.fingerprint)

            let keyOnly = root + "/key-only"
            try FileManager.default.createDirectory(atPath: keyOnly, withIntermediateDirectories: false)
            try "not really a key".write(toFile: keyOnly + "/ca-key.pem", atomically: false, encoding: .utf8)
            let keyError = expectCAError(.caAlreadyExists) { _ = try CertificateAuthority.create(directory: keyOnly) }
            #expect(keyError?.path == keyOnly + "/ca-key.pem")
            #expect(try contents(keyOnly + "/ca-key.pem") == "not really a key")
            #expect(try listing(keyOnly) == ["ca-key.pem"])
        }
    }

    @Test("create rejects a validity outside 1...36500 days and bad CA names, writing nothing")
    func createValidatesArguments() throws {
        try withTemporaryDirectory { root in
            let directory = root + "/ca"
            _ = expectCAError(.invalidValidity) {
                _ = try CertificateAuthority.create(directory: directory, validityDays: 0)
            }
            _ = expectCAError(.invalidValidity) {
                _ = try CertificateAuthority.create(directory: directory, validityDays: 36_501)
            }
            for name in ["", " padded", String(repeating: "x", count: 65), "line\nbreak"] {
                _ = expectCAError(.invalidName) {
                    _ = try CertificateAuthority.create(directory: directory, commonName: name)
                }
            }
            #expect(!FileManager.default.fileExists(atPath: directory))
        }
    }

    @Test("load says which file is missing and what to do")
    func loadMissingFiles() throws {
        try withTemporaryDirectory { root in
            let nowhere = root + "/nowhere"
            let missing = expectCAError(.missingFile) { _ = try CertificateAuthority.load(directory: nowhere) }
            #expect(missing?.path == nowhere + "/ca.pem")
            #expect(missing?.message.contains("netpulse ca init") == true)

            let ca = try CertificateAuthority.create(directory: root + "/ca")
            try FileManager.default.removeItem(atPath: ca.privateKeyPath)
            let missingKey = expectCAError(.missingFile) { _ = try CertificateAuthority.load(directory: root + "/ca") }
            #expect(missingKey?.path == ca.privateKeyPath)
            #expect(missingKey?.message.contains("Restore ca-key.pem") == true)
        }
    }

    @Test("load rejects files that are not PEM, hold the wrong block, or are directories")
    func loadGarbage() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root)
            let goodCertificate = try contents(ca.certificatePath)
            let goodKey = try contents(ca.privateKeyPath)

            try "hello, I am not a certificate\n".write(toFile: ca.certificatePath, atomically: true, encoding: .utf8)
            let garbage = expectCAError(.invalidPEM) { _ = try CertificateAuthority.load(directory: root) }
            #expect(garbage?.path == ca.certificatePath)
            #expect(garbage?.message.contains("BEGIN CERTIFICATE") == true)

            let brokenBase64 = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"
            try brokenBase64.write(toFile: ca.certificatePath, atomically: true, encoding: .utf8)
            _ = expectCAError(.invalidPEM) { _ = try CertificateAuthority.load(directory: root) }

            try goodKey.write(toFile: ca.certificatePath, atomically: true, encoding: .utf8)
            let keyAsCertificate = expectCAError(.invalidPEM) { _ = try CertificateAuthority.load(directory: root) }
            #expect(keyAsCertificate?.message.contains("'PRIVATE KEY' block, not a certificate") == true)

            try (goodCertificate + goodCertificate).write(toFile: ca.certificatePath, atomically: true, encoding: .utf8)
            let twoCertificates = expectCAError(.invalidPEM) { _ = try CertificateAuthority.load(directory: root) }
            #expect(
                twoCertificates?.message.contains("holds 2 certificates, where a root CA's file holds its own alone")
                    == true)

            try goodCertificate.write(toFile: ca.certificatePath, atomically: true, encoding: .utf8)
            try goodCertificate.write(toFile: ca.privateKeyPath, atomically: true, encoding: .utf8)
            let certificateAsKey = expectCAError(.invalidPEM) { _ = try CertificateAuthority.load(directory: root) }
            #expect(certificateAsKey?.path == ca.privateKeyPath)

            try FileManager.default.removeItem(atPath: ca.privateKeyPath)
            try FileManager.default.createDirectory(atPath: ca.privateKeyPath, withIntermediateDirectories: false)
            let directory = expectCAError(.unreadableFile) { _ = try CertificateAuthority.load(directory: root) }
            #expect(
                directory?.message == "Cannot read \(ca.privateKeyPath): it is a directory. "
                    + "Check the path and that this user may read it.")
        }
    }

    @Test("load refuses a key that belongs to another CA")
    func loadMismatchedKey() throws {
        try withTemporaryDirectory { root in
            let first = try CertificateAuthority.create(directory: root + "/first")
            let second = try CertificateAuthority.create(directory: root + "/second")
            try FileManager.default.removeItem(atPath: first.privateKeyPath)
            try FileManager.default.copyItem(atPath: second.privateKeyPath, toPath: first.privateKeyPath)
            let error = expectCAError(.keyMismatch) { _ = try CertificateAuthority.load(directory: root + "/first") }
            #expect(error?.message.contains("public keys differ") == true)
        }
    }

    @Test("load refuses a leaf certificate posing as the CA")
    func loadLeafAsCA() throws {
        try withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let fake = root + "/fake-ca"
            try FileManager.default.createDirectory(atPath: fake, withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: fleet.agent.certificatePath, toPath: fake + "/ca.pem")
            try FileManager.default.copyItem(atPath: fleet.agent.keyPath, toPath: fake + "/ca-key.pem")
            let error = expectCAError(.notCertificateAuthority) { _ = try CertificateAuthority.load(directory: fake) }
            #expect(error?.message.contains("does not say CA:TRUE") == true)
        }
    }

    @Test("load warns about a CA key that others can read, and about a CA close to expiry")
    func loadWarnings() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root, validityDays: 30)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: ca.privateKeyPath)
            let loaded = try CertificateAuthority.load(directory: root)
            #expect(loaded.warnings.count == 2, "\(loaded.warnings)")
            #expect(loaded.warnings.first?.contains("(mode 0644); run `chmod 600 \(ca.privateKeyPath)`") == true)
            #expect(loaded.warnings.last?.contains("The CA expires on") == true)
        }
    }

    @Test("an expired CA still loads, but issues nothing")
    func expiredCA() throws {
        try withTemporaryDirectory { root in
            let longAgo = Date(timeIntervalSinceNow: -10 * 86_400)
            _ = try CertificateAuthority.create(
                directory: root + "/ca", commonName: "Old CA", validityDays: 5, now: longAgo)
            let ca = try CertificateAuthority.load(directory: root + "/ca")
            #expect(ca.warnings.contains { $0.contains("The CA expired on") })
            let error = expectCAError(.caExpired) {
                _ = try ca.issue(role: .agent, name: "agent-01", outputDirectory: root + "/certs")
            }
            #expect(error?.message.contains("netpulse ca init") == true)
            #expect(!FileManager.default.fileExists(atPath: root + "/certs"))
        }
    }

    @Test("a CA made by hand with openssl (SEC1 key) loads and issues certificates that verify")
    func handMadeCA() throws {
        try withTemporaryDirectory { root in
            let key = root + "/ca-key.pem"
            let generate = try openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
            #expect(generate.succeeded, "\(generate)")
            #expect(try contents(key).hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
            let request = try openssl(
                "req", "-x509", "-new", "-key", key, "-subj", "/CN=Hand Made CA", "-days", "30",
                "-addext", "basicConstraints=critical,CA:TRUE", "-out", root + "/ca.pem"
            )
            #expect(request.succeeded, "\(request)")

            let ca = try CertificateAuthority.load(directory: root)
            #expect(ca.commonName == "Hand Made CA")
            let agent = try ca.issue(
                role: .agent, name: "agent-01", validity: .days(7), outputDirectory: root + "/certs")
            let verify = try openssl("verify", "-CAfile", ca.certificatePath, agent.certificatePath)
            #expect(verify.succeeded, "\(verify)")
        }
    }
}
