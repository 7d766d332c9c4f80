import Foundation
import Testing

@testable import PulseCertificates

@Suite("Names and addresses given to issue")
struct NameValidationTests {
    @Test(
        "hostile or malformed names are rejected before anything is written",
        arguments: [
            ("../evil", "it contains '/'"),
            ("", "it is empty"),
            ("a<b&c", "it contains '<'"),
            ("evil/../../x", "it contains '/'"),
            ("..", "it has an empty label"),
            (".", "it has an empty label"),
            (".hidden", "it has an empty label"),
            ("a..b", "it has an empty label"),
            ("trailing.", "it has an empty label"),
            ("-flag", "a label starts or ends with '-'"),
            ("web-", "a label starts or ends with '-'"),
            ("with space", "it contains a space"),
            ("tab\tname", "it contains a control character"),
            ("new\nline", "it contains a control character"),
            ("naïve", "it contains a non-ASCII character"),
            ("under_score", "it contains '_'"),
            ("*.example.com", "it contains '*'"),
            (String(repeating: "a", count: 65), "it is longer than 64 characters"),
            ("127.0.0.1", "it is an IP address"),
            ("::1", "it contains ':'"),
        ]
    )
    func hostileNames(name: String, reason: String) throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let output = root + "/out"
            for role in CertificateRole.allCases {
                let error = expectCAError(.invalidName) {
                    _ = try ca.issue(role: role, name: name, outputDirectory: output)
                }
                #expect(error?.message.hasPrefix("Invalid name \(name.debugDescription): \(reason)") == true)
                #expect(error?.message.contains("letters, digits, '-' and '.'") == true)
            }
            #expect(!FileManager.default.fileExists(atPath: output))
            #expect(try listing(root) == ["ca"])
            #expect(try listing(root + "/ca") == ["ca-key.pem", "ca.pem"])
        }
    }

    @Test("the exact message for a name that tries to leave the output directory")
    func traversalMessage() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let error = expectCAError(.invalidName) {
                _ = try ca.issue(role: .agent, name: "../evil", outputDirectory: root + "/out")
            }
            #expect(
                error?.message
                    == """
                    Invalid name "../evil": it contains '/', which is not allowed. A name is 1-64 characters: \
                    letters, digits, '-' and '.', in dot-separated labels that start and end with a letter or digit \
                    (for example web-01 or collector.example.com).
                    """
            )
        }
    }

    @Test(
        "ordinary host names are accepted",
        arguments: ["agent-01", "db1.example.com", "A1", "x", String(repeating: "a", count: 63)])
    func acceptedNames(name: String) throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let issued = try ca.issue(role: .agent, name: name, outputDirectory: root + "/out")
            #expect(issued.certificatePath == root + "/out/\(name).pem")
            #expect(try listing(root + "/out") == ["\(name)-key.pem", "\(name).pem"].sorted())
        }
    }

    @Test("a 64-character name of two labels is the longest accepted")
    func longestName() throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let name = String(repeating: "a", count: 32) + "." + String(repeating: "b", count: 31)
            #expect(name.count == 64)
            _ = try ca.issue(role: .agent, name: name, outputDirectory: root + "/out")
        }
    }

    @Test(
        "malformed IP addresses are rejected with a clear message",
        arguments: [
            "256.0.0.1", "1.2.3", "10.0.0.0/8", "127.0.0.1:443", "::g", "fe80::1%eth0", "localhost", "", " 1.2.3.4",
        ]
    )
    func invalidAddresses(address: String) throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let error = expectCAError(.invalidIPAddress) {
                _ = try ca.issue(role: .daemon, name: "d", ipAddresses: [address], outputDirectory: root + "/out")
            }
            #expect(
                error?.message
                    == """
                    Invalid IP address \(address.debugDescription): expected an IPv4 address such as 127.0.0.1 or an \
                    IPv6 address such as ::1, without a port, prefix length or zone (%eth0).
                    """
            )
            #expect(!FileManager.default.fileExists(atPath: root + "/out"))
        }
    }

    @Test(
        "extra DNS names for a daemon follow the DNS rules", arguments: ["*.example.com", "bad_name", "-x", "a..b", ""])
    func invalidDNSNames(dnsName: String) throws {
        try withTemporaryDirectory { root in
            let ca = try CertificateAuthority.create(directory: root + "/ca")
            let error = expectCAError(.invalidName) {
                _ = try ca.issue(role: .daemon, name: "d", dnsNames: [dnsName], outputDirectory: root + "/out")
            }
            #expect(error?.message.hasPrefix("Invalid DNS name \(dnsName.debugDescription)") == true)
        }
    }

    @Test("IPAddress parses both families into network-order bytes and canonical text")
    func addressParsing() {
        #expect(IPAddress(parsing: "127.0.0.1")?.bytes == [127, 0, 0, 1])
        #expect(IPAddress(parsing: "::1")?.bytes == Array(repeating: 0, count: 15) + [1])
        #expect(IPAddress(parsing: "0:0:0:0:0:0:0:1")?.text == "::1")
        #expect(IPAddress(parsing: "2001:DB8::A")?.text == "2001:db8::a")
        #expect(IPAddress(parsing: "::ffff:192.0.2.1")?.bytes.count == 16)
        #expect(IPAddress(parsing: "01.2.3.4") == nil)
    }
}
