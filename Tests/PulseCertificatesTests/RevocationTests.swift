import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import PulseCertificates

/// `netpulse ca revoke`'s list and the daemon's check of client certificates at the handshake
/// (``ClientCertificateCheck``): what it accepts and refuses, and why it says so.
@Suite struct RevocationTests {
    /// The chain a client holding `issued` presents: its certificate alone, as DER.
    func der(_ issued: IssuedCertificate) throws -> [[UInt8]] {
        let base64 = try contents(issued.certificatePath).split(separator: "\n").filter { !$0.hasPrefix("-----") }
            .joined()
        return [Array(try #require(Data(base64Encoded: base64)))]
    }

    func check(_ fleet: Fleet, revoked: String? = nil) throws -> ClientCertificateCheck {
        try ClientCertificateCheck.load(ca: fleet.ca.certificatePath, revoked: revoked)
    }

    @Test func serialsAreWrittenOneWayWhicheverWayTheyAreGiven() {
        #expect(RevocationList.normalisedSerial("4F:1C:00:A2") == "4f1c00a2")
        #expect(RevocationList.normalisedSerial("004f1c00a2") == "4f1c00a2")
        #expect(RevocationList.normalisedSerial("f1c00a2") == "0f1c00a2")
        #expect(RevocationList.normalisedSerial("web-01") == nil)
        #expect(RevocationList.normalisedSerial("00") == nil)
        #expect(RevocationList.normalisedSerial(String(repeating: "ab", count: 21)) == nil)
    }

    @Test func theListReadsBackWhatItWroteAndNamesTheLineItCannotRead() throws {
        var list = RevocationList()
        let first = list.add(.init(serial: "4f1c", name: "web-01", revokedAt: "2026-11-29T03:50:00Z"))
        let again = list.add(.init(serial: "4f1c", name: "other", revokedAt: nil))
        #expect(first && !again, "a serial once")
        list.add(.init(serial: "a2", name: nil, revokedAt: nil))
        #expect(try RevocationList.parse(list.text, path: "revoked.txt") == list)

        let text = "# comment\n\n4F:1C  web-01\nweb-02  2026-11-29\n"
        let error = expectCAError(.invalidRevocationList) { _ = try RevocationList.parse(text, path: "/x/revoked.txt") }
        #expect(error?.message.hasPrefix("/x/revoked.txt:4: \"web-02\" is not a serial number in hex") == true)
    }

    @Test func revokingByNameBySerialOrByFileAddsTheSameEntryOnce() throws {
        try withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let list = root + "/ca/revoked.txt"
            let (entry, added) = try RevocationList.revoke(
                .nameOrSerial(Fleet.agentName, directory: root + "/certs"), in: list)
            #expect(added && entry.name == Fleet.agentName)
            // The serial as openssl prints it names the same certificate.
            let printed = try openssl("x509", "-noout", "-serial", "-in", fleet.agent.certificatePath)
            let serial = try #require(printed.output.split(separator: "=").last).trimmingCharacters(
                in: .whitespacesAndNewlines)
            #expect(RevocationList.normalisedSerial(serial) == entry.serial)
            #expect(try !RevocationList.revoke(.nameOrSerial(serial, directory: root + "/ca"), in: list).added)
            #expect(try !RevocationList.revoke(.certificate(path: fleet.agent.certificatePath), in: list).added)
            #expect(try RevocationList.load(path: list).entries.count == 1)
            // Neither a certificate there nor a serial: nothing is written.
            let error = expectCAError(.unknownCertificate) {
                _ = try RevocationList.revoke(.nameOrSerial("web-99", directory: root + "/certs"), in: list)
            }
            #expect(error?.message.contains("no web-99.pem there") == true)
            #expect(try RevocationList.load(path: list).entries.count == 1)
        }
    }

    @Test func theCheckAcceptsAgentsAndOperatorsOfTheFleetAndNothingElse() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let check = try check(fleet)
            if case .refused(let reason) = await check.check(try der(fleet.agent)) { Issue.record("\(reason)") }
            let operator_ = try fleet.ca.issue(role: .operator, name: "alice", outputDirectory: root + "/certs")
            if case .refused(let reason) = await check.check(try der(operator_)) { Issue.record("\(reason)") }

            // The daemon's certificate is no client's.
            guard case .refused(let server) = await check.check(try der(fleet.daemon)) else {
                Issue.record("a server certificate was accepted as a client's")
                return
            }
            #expect(server.contains("lacks clientAuth"), "\(server)")
            // Another CA's agent.
            let other = try Fleet(root: root + "/other", caName: "Other CA")
            guard case .refused(let stranger) = await check.check(try der(other.agent)) else {
                Issue.record("another CA's agent was accepted")
                return
            }
            #expect(stranger.contains("agent-01"), "\(stranger)")
            // Expired: issued for a day, two days ago.
            let old = try fleet.ca.issue(
                role: .agent, name: "old", dnsNames: [], ipAddresses: [], validity: .days(1),
                outputDirectory: root + "/certs", overwrite: false, now: Date().addingTimeInterval(-2 * 86_400))
            guard case .refused = await check.check(try der(old)) else {
                Issue.record("an expired certificate was accepted")
                return
            }
            #expect(await check.check([]) == .refused("the client presented no certificate"))
        }
    }

    @Test func aRevokedCertificateIsRefusedNamingItAndTheList() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let second = try fleet.ca.issue(role: .agent, name: "agent-02", outputDirectory: root + "/certs")
            let list = root + "/revoked.txt"
            let (entry, _) = try RevocationList.revoke(.certificate(path: fleet.agent.certificatePath), in: list)
            let check = try check(fleet, revoked: list)
            guard case .refused(let reason) = await check.check(try der(fleet.agent)) else {
                Issue.record("a revoked certificate was accepted")
                return
            }
            #expect(reason.contains("was revoked on "), "\(reason)")
            #expect(reason.contains("agent-01") && reason.contains(entry.serial) && reason.contains(list), "\(reason)")
            // The others of the fleet are not.
            if case .refused(let reason) = await check.check(try der(second)) { Issue.record("\(reason)") }
            // A list that names a missing file is an error at load, naming it.
            let missing = expectCAError(.missingFile) {
                _ = try ClientCertificateCheck.load(ca: fleet.ca.certificatePath, revoked: root + "/nope.txt")
            }
            #expect(missing?.message.contains("/nope.txt") == true)
        }
    }

    /// `netpulse ca revoke --name`: every certificate issued to a name until then, the ones the daemon renewed
    /// (whose serials no file on the CA's host holds) included; one issued after is accepted.
    @Test func revokingANameRefusesItsEveryEarlierCertificateAndNoLaterOne() async throws {
        try await withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let issuing = try ca.createIssuing(directory: root + "/enrollment")
            let start = Date()
            let enrolled = try ca.issue(
                role: .agent, name: "web-01", dnsNames: [], ipAddresses: [], validity: .days(365),
                outputDirectory: root + "/certs", overwrite: false, now: start.addingTimeInterval(-86_400 * 30))
            let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
            let request = try CertificateSigningRequest(
                version: .v1, subject: try DistinguishedName { CommonName("web-01") }, privateKey: key,
                attributes: CertificateSigningRequest.Attributes())
            var serializer = DER.Serializer()
            try serializer.serialize(request)
            // Renewed a minute before the revocation, by the daemon.
            let renewed = try issuing.renew(
                requestDER: serializer.serializedBytes, name: "web-01", validity: .days(90),
                now: start.addingTimeInterval(-60))
            let other = try ca.issue(role: .agent, name: "db-01", outputDirectory: root + "/certs")

            let path = root + "/revoked.txt"
            let (entry, added) = try RevocationList.revoke(.everyCertificate(name: "web-01"), in: path, now: start)
            #expect(
                added && entry.serial == "*" && entry.description.hasPrefix("every certificate of web-01 issued before")
            )
            #expect(try !RevocationList.revoke(.everyCertificate(name: "web-01"), in: path, now: start).added)
            #expect(try contents(path).contains("*  web-01  "))
            let check = try ClientCertificateCheck.load(ca: ca.certificatePath, revoked: path)
            for chain in [try der(enrolled), renewed] {
                guard case .refused(let reason) = await check.check(chain) else {
                    Issue.record("a certificate of web-01 issued before its revocation was accepted")
                    continue
                }
                #expect(reason.contains("was revoked with every certificate of its name issued before"), "\(reason)")
            }
            guard case .accepted = await check.check(try der(other)) else {
                Issue.record("another agent's certificate was refused")
                return
            }
            // Enrolled again a few seconds after: accepted, though backdated by an hour.
            let again = try ca.issue(
                role: .agent, name: "web-01", dnsNames: [], ipAddresses: [], validity: .days(365),
                outputDirectory: root + "/again", overwrite: false, now: start.addingTimeInterval(5))
            #expect(again.certificate.notValidBefore < start)
            guard case .accepted = await check.check(try der(again)) else {
                Issue.record("a certificate issued after the revocation was refused")
                return
            }
            // The line reads back; one without its time is refused with its line number.
            #expect(try RevocationList.load(path: path).entries.count == 1)
            let bad = expectCAError(.invalidRevocationList) {
                _ = try RevocationList.parse("*  web-01\n", path: "/x/revoked.txt")
            }
            #expect(
                bad?.message.hasPrefix("/x/revoked.txt:1: a '*' line names the agent") == true,
                "\(String(describing: bad))")
        }
    }
}
