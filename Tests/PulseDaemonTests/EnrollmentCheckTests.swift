import Foundation
import PulseCertificates
import PulseSettings
import Testing
import X509

@testable import PulseDaemon

/// `[enrollment]` is checked when it is loaded, not when the first agent renews: an issuing CA the daemon would
/// refuse its own certificates from stops the start, and a directory without one means no renewal.
@Suite struct EnrollmentCheckTests {
    func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "netpulse-enrollment-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    func roots(_ path: String) throws -> [Certificate] {
        try ClientCertificateCheck.load(ca: path, revoked: nil).roots
    }

    @Test func anIssuingCAUnderTheTrustedRootIsUsedAndAnyOtherStopsTheStart() throws {
        try withDirectory { directory in
            let root = try CertificateAuthority.create(directory: directory + "/ca")
            _ = try root.createIssuing(directory: directory + "/enrollment")
            let renewal = try AgentRenewal.load(
                EnrollmentSettings(directory: directory + "/enrollment", validity: 3_600_000),
                roots: try roots(root.certificatePath))
            #expect(renewal?.validity == Validity(seconds: 3600))
            #expect(renewal?.warnings == [])

            // No CA in the directory: no renewal, and no error.
            #expect(
                try AgentRenewal.load(
                    EnrollmentSettings(directory: directory + "/none"), roots: roots(root.certificatePath))
                    == nil)

            // Another fleet's issuing CA: every certificate it made would be refused at the handshake.
            let other = try CertificateAuthority.create(directory: directory + "/other")
            _ = try other.createIssuing(directory: directory + "/other-enrollment")
            let foreign = #expect(throws: DaemonError.self) {
                _ = try AgentRenewal.load(
                    EnrollmentSettings(directory: directory + "/other-enrollment"),
                    roots: try roots(root.certificatePath))
            }
            #expect(foreign?.description.contains("not signed by the fleet's root in [tls] ca") == true)

            // The root as it was before `netpulse ca issuing` signed it again: path length 0.
            let made = try Process.run(
                URL(fileURLWithPath: "/usr/bin/openssl"),
                arguments: [
                    "req", "-x509", "-new", "-key", root.privateKeyPath, "-out", directory + "/old-root.pem", "-days",
                    "3650", "-subj", "/CN=\(root.commonName)", "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0",
                    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
            made.waitUntilExit()
            let stale = #expect(throws: DaemonError.self) {
                _ = try AgentRenewal.load(
                    EnrollmentSettings(directory: directory + "/enrollment"),
                    roots: try roots(directory + "/old-root.pem"))
            }
            #expect(
                stale?.description.contains("allows no CA below it (path length 0)") == true,
                "\(String(describing: stale))")

            // A validity the issuing CA cannot give any more is said at load.
            let long = try AgentRenewal.load(
                EnrollmentSettings(directory: directory + "/enrollment", validity: 3650 * 86_400_000),
                roots: try roots(root.certificatePath))
            #expect(long?.warnings.first?.contains("renewed certificates end with it") == true)
        }
    }
}
