import Foundation
import Testing

@testable import PulseCertificates

/// `netpulse ca sign`: requests made by OpenSSL on "the agent's host" (the agent's own maker is tested in
/// PulseAgentTests and end to end), signed into agent certificates for the key that made them, and the requests it
/// must refuse.
@Suite struct EnrollmentTests {
    /// A P-256 key and a request naming `name` at `directory/file`, made by `openssl req`.
    func request(_ name: String, in directory: String, file: String? = nil) throws -> (request: String, key: String) {
        let (request, key) = ("\(directory)/\(file ?? name).csr", "\(directory)/\(file ?? name)-key.pem")
        let made = try openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
            "-subj", "/CN=\(name)", "-out", request)
        #expect(made.succeeded, "\(made)")
        return (request, key)
    }

    @Test func aRequestIsSignedIntoACertificateForTheKeyThatMadeIt() async throws {
        try await withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            let (path, key) = try request("web-01", in: root)
            let signed = try fleet.ca.sign(requestAt: path)
            #expect(signed.certificatePath == root + "/web-01.pem")
            #expect(CertificateRole(of: signed.certificate) == .agent)
            #expect(CertificateRole.commonName(of: signed.certificate) == "web-01")
            let chain = try openssl("verify", "-CAfile", fleet.ca.certificatePath, signed.certificatePath)
            #expect(chain.succeeded, "\(chain)")
            // The certificate is for the host's key: the two public keys are one.
            let fromKey = try openssl("pkey", "-in", key, "-pubout")
            let fromCertificate = try openssl("x509", "-in", signed.certificatePath, "-noout", "-pubkey")
            #expect(fromKey.succeeded && fromKey.output == fromCertificate.output, "\(fromKey) \(fromCertificate)")
            // And the daemon takes it.
            let base64 = try contents(signed.certificatePath).split(separator: "\n")
                .filter { !$0.hasPrefix("-----") }.joined()
            let check = try ClientCertificateCheck.load(ca: fleet.ca.certificatePath, revoked: nil)
            if case .refused(let reason) = await check.check([Array(try #require(Data(base64Encoded: base64)))]) {
                Issue.record("\(reason)")
            }
            // Nothing is signed twice unless asked.
            _ = expectCAError(.fileExists) { _ = try fleet.ca.sign(requestAt: path) }
            #expect(try fleet.ca.sign(requestAt: path, overwrite: true).name == "web-01")
        }
    }

    @Test func aRequestForAnotherNameOrAlteredIsNotSigned() throws {
        try withTemporaryDirectory { root in
            let fleet = try Fleet(root: root)
            // Filed as web-02's, it names web-01.
            let (misfiled, _) = try request("web-01", in: root, file: "web-02")
            let other = expectCAError(.invalidRequest) { _ = try fleet.ca.sign(requestAt: misfiled) }
            #expect(
                other?.message.contains(#"it asks for the name "web-01", not "web-02""#) == true,
                "\(String(describing: other))")
            let named = expectCAError(.invalidRequest) { _ = try fleet.ca.sign(requestAt: misfiled, name: "db-01") }
            #expect(named?.message.contains(#"not "db-01""#) == true)
            #expect(try fleet.ca.sign(requestAt: misfiled, name: "web-01").name == "web-01")

            // Two common names: which agent would it be?
            let two = try openssl(
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                root + "/two-key.pem", "-subj", "/CN=two/CN=three", "-out", root + "/two.csr")
            #expect(two.succeeded, "\(two)")
            let ambiguous = expectCAError(.invalidRequest) { _ = try fleet.ca.sign(requestAt: root + "/two.csr") }
            #expect(ambiguous?.message.contains("it names 2") == true, "\(String(describing: ambiguous))")

            // The request's name changed after its key signed it: the signature no longer holds.
            let (original, _) = try request("db-01", in: root)
            let der = try openssl("req", "-in", original, "-outform", "DER", "-out", root + "/db-01.der")
            #expect(der.succeeded)
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: root + "/db-01.der")))
            let name = Array("db-01".utf8)
            let at = try #require(
                (0...(bytes.count - name.count)).first { Array(bytes[$0..<($0 + name.count)]) == name })
            bytes[at] = UInt8(ascii: "x")  // "xb-01"
            let pem =
                "-----BEGIN CERTIFICATE REQUEST-----\n"
                + Data(bytes).base64EncodedString(options: .lineLength64Characters)
                + "\n-----END CERTIFICATE REQUEST-----\n"
            try pem.write(toFile: root + "/xb-01.csr", atomically: true, encoding: .utf8)
            let altered = expectCAError(.invalidRequest) { _ = try fleet.ca.sign(requestAt: root + "/xb-01.csr") }
            #expect(
                altered?.message.contains("its signature does not verify") == true, "\(String(describing: altered))")
            #expect(!FileManager.default.fileExists(atPath: root + "/xb-01.pem"))

            // Not a request at all.
            let key = expectCAError(.invalidRequest) { _ = try fleet.ca.sign(requestAt: root + "/db-01-key.pem") }
            #expect(key?.message.contains("not a PEM certificate request") == true)
        }
    }

    /// `netpulse ca sign DIR`: the requests it signs are those without a certificate beside them (or in the output
    /// directory), all of them when asked to sign again, in name order.
    @Test func aDirectoryOffersTheRequestsNotSignedYet() throws {
        try withTemporaryDirectory { root in
            let out = root + "/out"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            for file in ["web-02.csr", "web-01.csr", "db-01.csr", "db-01.pem", "notes.txt", "web-02-key.pem"] {
                try "".write(toFile: "\(root)/\(file)", atomically: true, encoding: .utf8)
            }
            try "".write(toFile: out + "/web-01.pem", atomically: true, encoding: .utf8)
            #expect(Enrollment.pendingRequests(in: root) == ["\(root)/web-01.csr", "\(root)/web-02.csr"])
            #expect(
                Enrollment.pendingRequests(in: root, outputDirectory: out) == [
                    "\(root)/db-01.csr", "\(root)/web-02.csr",
                ])
            #expect(Enrollment.pendingRequests(in: root, overwrite: true).count == 3)
            #expect(Enrollment.pendingRequests(in: root + "/missing").isEmpty)
        }
    }

    /// `--days` or `--validity` (a duration in whole seconds), never both; a year without either.
    @Test func aValidityIsDaysOrADuration() throws {
        #expect(try Validity.chosen(days: nil, duration: nil) == .days(365))
        #expect(try Validity.chosen(days: 30, duration: nil) == .days(30))
        #expect(try Validity.chosen(days: nil, duration: "12h") == Validity(seconds: 43_200))
        #expect(try Validity.chosen(days: nil, duration: "3m") == Validity(seconds: 180))
        for text in ["1500ms", "0s", "soon", "-1d"] {
            let error = expectCAError(.invalidValidity) { _ = try Validity.chosen(days: nil, duration: text) }
            #expect(error?.message.contains("not a duration in whole seconds") == true, "\(text)")
        }
        let both = expectCAError(.invalidValidity) { _ = try Validity.chosen(days: 1, duration: "1d") }
        #expect(both?.message == "give --days or --validity, not both")
    }
}
