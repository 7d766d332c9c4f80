import Foundation
import Testing
import X509

@testable import PulseCertificates

/// `netpulse ca renew`: the daemon's certificate renewed in place, from a timer, once two thirds of its life have
/// passed, with a new key, the same names and lifetime, and the key's group kept.
@Suite struct RenewTests {
    @Test func aCertificateIsRenewedInPlaceOnlyOnceDueWithANewKeyAndTheSameNames() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let issuedAt = Date()
            let daemon = try ca.issue(
                role: .daemon, name: "collector", dnsNames: ["collector.example.com"],
                ipAddresses: ["10.0.0.5", "::1"],
                validity: Validity(seconds: 180), outputDirectory: root + "/etc", overwrite: false,
                keyGroup: KeyGroup(name: "root", id: 0),
                files: nil, now: issuedAt)
            let before = try contents(daemon.certificatePath)
            let oldKey = try contents(daemon.keyPath)

            // A minute in, of three: not due, and nothing is touched.
            guard
                case .notDue(let due, let expires) = try ca.renew(
                    certificateAt: daemon.certificatePath, now: issuedAt.addingTimeInterval(60))
            else {
                Issue.record("renewed a certificate a third of the way through its life")
                return
            }
            #expect(expires == daemon.certificate.notValidAfter)
            // Two thirds of its life from its backdated start (18 s before it was issued).
            #expect(abs(due.timeIntervalSince(daemon.certificate.notValidBefore) - 198 * 0.67) < 1)
            #expect(try contents(daemon.certificatePath) == before)

            // Past two thirds: a new key, the same role, names and lifetime, the key's group kept.
            guard
                case .renewed(let renewed) = try ca.renew(
                    certificateAt: daemon.certificatePath, now: issuedAt.addingTimeInterval(150))
            else {
                Issue.record("did not renew a certificate past two thirds of its life")
                return
            }
            #expect(renewed.certificatePath == daemon.certificatePath && renewed.keyPath == daemon.keyPath)
            #expect(try contents(daemon.keyPath) != oldKey)
            #expect(renewed.certificate.publicKey != daemon.certificate.publicKey)
            #expect(renewed.role == .daemon && renewed.name == "collector")
            #expect(renewed.dnsNames == ["collector", "collector.example.com"])
            #expect(renewed.ipAddresses == ["10.0.0.5", "::1"])
            #expect(
                renewed.certificate.notValidAfter.timeIntervalSince(renewed.certificate.notValidBefore)
                    == daemon.certificate.notValidAfter.timeIntervalSince(daemon.certificate.notValidBefore))
            #expect(try permissions(daemon.keyPath) == 0o640)
            let text = try openssl("x509", "-in", daemon.certificatePath, "-noout", "-ext", "subjectAltName")
            #expect(
                text.output.contains(
                    "DNS:collector, DNS:collector.example.com, IP Address:10.0.0.5, IP Address:0:0:0:0:0:0:0:1"),
                "\(text)")
            // Issued "150 s from now": checked at that time.
            let verified = try openssl(
                "verify", "-attime", "\(Int(issuedAt.timeIntervalSince1970) + 150)", "-CAfile", ca.certificatePath,
                "-purpose", "sslserver", daemon.certificatePath)
            #expect(verified.succeeded, "\(verified)")
        }
    }

    @Test func aCertificateFromAnotherCAIsNotRenewedAndLifetimesAreReadBack() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let other = try CertificateAuthority.create(directory: root + "/other")
            let foreign = try other.issue(role: .daemon, name: "collector", outputDirectory: root + "/etc")
            let refused = expectCAError(.invalidPEM) {
                _ = try ca.renew(certificateAt: foreign.certificatePath, force: true)
            }
            #expect(refused?.message.contains("was not issued by the CA in \(root)/ca") == true)
            // The validity a lifetime was issued for, whatever the backdating: a year, a day, three minutes.
            for validity in [Validity.days(365), .days(1), Validity(seconds: 180)] {
                let (start, end) = try ca.dates(validity, now: Date())
                #expect(CertificateAuthority.validity(ofLifetime: end.timeIntervalSince(start)) == validity)
            }
        }
    }
}
