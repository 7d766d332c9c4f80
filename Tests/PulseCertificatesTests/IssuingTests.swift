import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import PulseCertificates

/// An issuing CA for agents under the root: what `netpulse ca init` and `netpulse ca issuing` make, the chains its
/// certificates carry (checked by OpenSSL and by the daemon's own check), the roles it refuses, the root made before
/// it existed, and the daemon's side of renewal.
@Suite struct IssuingTests {
    /// The DER certificates of a PEM file, in order.
    func chain(_ path: String) throws -> [[UInt8]] {
        try PEMDocument.parseMultiple(pemString: contents(path)).map(\.derBytes)
    }

    func accepted(_ check: ClientCertificateCheck, _ chain: [[UInt8]]) async -> String? {
        if case .refused(let reason) = await check.check(chain) { return reason }
        return nil
    }

    @Test func anAgentCertificateFromTheIssuingCAChainsToTheRootAndNothingElseCanBeIssued() async throws {
        try await withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            #expect(ca.pathLength == 1)
            let issuing = try ca.createIssuing(
                directory: CertificateAuthority.defaultIssuingDirectory(besideRoot: root + "/ca"))
            #expect(issuing.directory == root + "/enrollment")
            // `netpulse ca init` and `ca issuing` ask first whether a directory has room, before making anything.
            try CertificateAuthority.checkRoomForIssuing(in: root + "/elsewhere", advice: "unused")
            let taken = expectCAError(.caAlreadyExists) {
                try CertificateAuthority.checkRoomForIssuing(in: issuing.directory, advice: "Give --out another")
            }
            #expect(taken?.message == "\(issuing.certificatePath) exists: a CA is there already. Give --out another.")
            #expect(!issuing.isRoot && issuing.pathLength == 0)
            #expect(try permissions(issuing.privateKeyPath) == 0o600)
            let text = try openssl("x509", "-in", issuing.certificatePath, "-noout", "-text")
            #expect(text.output.contains("CA:TRUE, pathlen:0"), "\(text)")
            #expect(text.output.contains("TLS Web Client Authentication"), "\(text)")
            #expect(!text.output.contains("Server Authentication"), "\(text)")

            let agent = try issuing.issue(role: .agent, name: "web-01", outputDirectory: root + "/certs")
            // The leaf, then the issuing CA: the daemon builds the path to the root it trusts.
            let presented = try chain(agent.certificatePath)
            #expect(presented.count == 2)
            #expect(presented[1] == (try chain(issuing.certificatePath))[0])
            let verified = try openssl(
                "verify", "-CAfile", ca.certificatePath, "-untrusted", issuing.certificatePath, "-purpose", "sslclient",
                agent.certificatePath)
            #expect(verified.succeeded, "\(verified)")
            let check = try ClientCertificateCheck.load(ca: ca.certificatePath, revoked: nil)
            #expect(await accepted(check, presented) == nil)
            // Without the issuing CA's certificate the path cannot be built.
            #expect(await accepted(check, [presented[0]]) != nil)

            // Its key can make agents' certificates and nothing else.
            _ = expectCAError(.roleNotIssued) {
                _ = try issuing.issue(role: .daemon, name: "collector", outputDirectory: root + "/certs")
            }
            _ = expectCAError(.roleNotIssued) {
                _ = try issuing.issue(role: .operator, name: "alice", outputDirectory: root + "/certs")
            }
            _ = expectCAError(.notCertificateAuthority) { _ = try issuing.createIssuing(directory: root + "/deeper") }
            // And it cannot make another CA below it that would pass: path length 0, checked by OpenSSL too.
            #expect(try CertificateAuthority.load(directory: issuing.directory).chain.isEmpty)
        }
    }

    @Test func aRootMadeBeforeIssuingCAsIsSignedAgainAndEveryOldCertificateStillHolds() async throws {
        try await withTemporaryDirectory { root in
            // A root as netpulse 0.2 made them: path length 0.
            let directory = root + "/ca"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let made = try openssl(
                "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                directory + "/ca-key.pem", "-out", directory + "/ca.pem", "-days", "3650", "-subj", "/CN=Old Fleet CA",
                "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0", "-addext",
                "keyUsage=critical,keyCertSign,cRLSign")
            #expect(made.succeeded, "\(made)")
            let old = try CertificateAuthority.load(directory: directory)
            #expect(old.pathLength == 0)
            let oldRoot = root + "/old-ca.pem"
            try FileManager.default.copyItem(atPath: old.certificatePath, toPath: oldRoot)
            let daemon = try old.issue(
                role: .daemon, name: "collector", ipAddresses: ["127.0.0.1"], outputDirectory: root + "/certs")
            _ = expectCAError(.notCertificateAuthority) { _ = try old.createIssuing(directory: root + "/enrollment") }

            let (renewed, replaced) = try old.allowingIssuingCA()
            #expect(replaced && renewed.pathLength == 1)
            #expect(renewed.certificate.publicKey == old.certificate.publicKey)
            #expect(renewed.certificate.subject == old.certificate.subject)
            #expect(renewed.notValidAfter == old.notValidAfter)
            #expect(try contents(directory + "/ca-pathlen0.pem") == (try contents(oldRoot)))
            #expect(try !renewed.allowingIssuingCA().replaced)

            let issuing = try renewed.createIssuing(directory: root + "/enrollment")
            let agent = try issuing.issue(role: .agent, name: "web-01", outputDirectory: root + "/certs")
            // The daemon checks agents with the new root; the old one forbids the level between.
            let check = try ClientCertificateCheck.load(ca: renewed.certificatePath, revoked: nil)
            #expect(await accepted(check, try chain(agent.certificatePath)) == nil)
            let stale = try ClientCertificateCheck.load(ca: oldRoot, revoked: nil)
            #expect(await accepted(stale, try chain(agent.certificatePath)) != nil)
            // Agents keep their old copy: the daemon's certificate holds under either.
            for anchor in [oldRoot, renewed.certificatePath] {
                let verified = try openssl(
                    "verify", "-CAfile", anchor, "-purpose", "sslserver", daemon.certificatePath)
                #expect(verified.succeeded, "\(verified)")
            }
        }
    }

    /// A DER request for `name` over `key`, made by swift-certificates as an agent's would be.
    func request(_ name: String, key: Certificate.PrivateKey) throws -> [UInt8] {
        let request = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName(name) }, privateKey: key,
            attributes: CertificateSigningRequest.Attributes())
        var serializer = DER.Serializer()
        try serializer.serialize(request)
        return serializer.serializedBytes
    }

    @Test func theDaemonRenewsOnlyAWellFormedRequestForTheConnectedAgentsOwnName() async throws {
        try await withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let issuing = try ca.createIssuing(directory: root + "/enrollment")
            let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
            let now = Date()
            let renewed = try issuing.renew(
                requestDER: try request("web-01", key: key), name: "web-01", validity: Validity(seconds: 180), now: now)
            #expect(renewed.count == 2)
            let leaf = try Certificate(derEncoded: renewed[0])
            #expect(leaf.publicKey == key.publicKey)
            #expect(CertificateRole.commonName(of: leaf) == "web-01" && CertificateRole(of: leaf) == .agent)
            // Three minutes, backdated by a tenth of that: most of its life is ahead.
            let start = now.timeIntervalSince1970.rounded(.down)
            #expect(leaf.notValidAfter.timeIntervalSince1970 == start + 180)
            #expect(leaf.notValidBefore.timeIntervalSince1970 == start - 18)
            let check = try ClientCertificateCheck.load(ca: ca.certificatePath, revoked: nil)
            #expect(await accepted(check, renewed) == nil)

            func refusal(_ body: () throws -> Void) -> String {
                do {
                    try body()
                    return ""
                } catch {
                    return "\(error)"
                }
            }
            let (otherName, good) = (try request("web-02", key: key), try request("web-01", key: key))
            let other = refusal { _ = try issuing.renew(requestDER: otherName, name: "web-01", validity: .days(90)) }
            #expect(other.contains(#"asks for the name "web-02", not "web-01""#), "\(other)")
            let p384 = try request("web-01", key: Certificate.PrivateKey(P384.Signing.PrivateKey()))
            let curve = refusal { _ = try issuing.renew(requestDER: p384, name: "web-01", validity: .days(90)) }
            #expect(curve.contains("not a P-256 key"), "\(curve)")
            var altered = good
            altered[altered.count - 5] ^= 0x01
            let signature = refusal {
                _ = try issuing.renew(requestDER: altered, name: "web-01", validity: .days(90))
            }
            #expect(
                signature.contains("signature does not verify") || signature.contains("cannot be parsed"),
                "\(signature)")
            let large = refusal {
                _ = try issuing.renew(
                    requestDER: [UInt8](repeating: 0x30, count: 5000), name: "web-01", validity: .days(90))
            }
            #expect(large.contains("more than 4096"), "\(large)")
            let garbage = refusal {
                _ = try issuing.renew(requestDER: [0x30, 0x03, 1, 2], name: "web-01", validity: .days(90))
            }
            #expect(garbage.contains("cannot be parsed"), "\(garbage)")
            // Longer than the issuing CA has left: it ends with the issuing CA.
            let capped = try issuing.renew(requestDER: good, name: "web-01", validity: .days(3650))
            #expect(try Certificate(derEncoded: capped[0]).notValidAfter == issuing.notValidAfter)
        }
    }
}
