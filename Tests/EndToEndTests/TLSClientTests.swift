import Foundation
import Testing

extension EndToEnd {
    /// The daemon's TLS, checked with real clients: OpenSSL's `s_client` and `testssl.sh` from Debian's packages.
    /// Every refusal is paired with a client that can succeed, so a test cannot pass against a server that wrongly
    /// accepts: a valid agent certificate gets through with the same client, and the TLS 1.0/1.1 client (at
    /// OpenSSL's security level 0, without which OpenSSL 3 would not even offer those versions) gets through to an
    /// `openssl s_server` that allows them.
    @Suite(.serialized) struct TLSClientTests {
        /// `openssl s_client` against 127.0.0.1:`port`, sending a byte and reading for a second (a refused client
        /// certificate is told after the TLS 1.3 handshake); its whole output.
        static func sClient(port: Int, ca: String, _ arguments: [String]) throws -> String {
            let command =
                "(printf x; sleep 1) | timeout 15 openssl s_client -connect 127.0.0.1:\(port) -servername netpulsed -CAfile \(ca) "
                + arguments.joined(separator: " ") + " 2>&1"
            return try run(["sh", "-c", command], allowFailure: true)
        }

        /// A certificate for `name` signed by the fleet CA that expired in 2020 (`openssl ca`, which can back-date).
        static func expiredCertificate(_ fleet: Fleet, name: String) throws -> (certificate: String, key: String) {
            let directory = fleet.directory + "/expired-ca"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try "".write(toFile: directory + "/index.txt", atomically: true, encoding: .utf8)
            try "1000\n".write(toFile: directory + "/serial", atomically: true, encoding: .utf8)
            try """
            [ca]
            default_ca = fleet
            [fleet]
            database = \(directory)/index.txt
            new_certs_dir = \(directory)
            serial = \(directory)/serial
            default_md = sha256
            policy = any
            [any]
            commonName = supplied
            [client]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = clientAuth
            """.write(toFile: directory + "/openssl.cnf", atomically: true, encoding: .utf8)
            let key = directory + "/\(name)-key.pem"
            let certificate = directory + "/\(name).pem"
            try run([
                "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                key, "-subj", "/CN=\(name)", "-out", directory + "/\(name).csr",
            ])
            try run([
                "openssl", "ca", "-batch", "-config", directory + "/openssl.cnf", "-cert",
                fleet.directory + "/ca/ca.pem",
                "-keyfile", fleet.directory + "/ca/ca-key.pem", "-in", directory + "/\(name).csr", "-out", certificate,
                "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-extensions", "client", "-notext",
            ])
            return (certificate, key)
        }

        @Test(.timeLimit(.minutes(2)))
        func opensslClientsAreRefusedWithTheirReasons() throws {
            let fleet = try Fleet(agents: ["agent-1"])
            try fleet.startDaemon()
            let ca = fleet.directory + "/ca/ca.pem"
            let agentCertificate = "-cert \(fleet.directory)/ca/agent-1.pem -key \(fleet.directory)/ca/agent-1-key.pem"
            func newLog(since offset: Int) -> String { String(fleet.daemon!.output.dropFirst(offset)) }

            // The control: a valid agent certificate completes the handshake, TLS 1.3, no alert.
            var offset = fleet.daemon!.output.count
            let good = try Self.sClient(port: fleet.port, ca: ca, [agentCertificate])
            #expect(good.contains("Verify return code: 0 (ok)") && good.contains("TLSv1.3"), "\(good)")
            #expect(!good.contains("alert"), "\(good)")
            #expect(!newLog(since: offset).contains("TLS handshake failed"))

            // No client certificate.
            offset = fleet.daemon!.output.count
            let anonymous = try Self.sClient(port: fleet.port, ca: ca, [])
            #expect(anonymous.contains("alert certificate required"), "\(anonymous)")
            try eventually("the daemon logs why") {
                newLog(since: offset).contains(
                    "TLS handshake failed: the client sent no certificate (PEER_DID_NOT_RETURN_A_CERTIFICATE)")
            }

            // A certificate from another CA.
            let rogueCA = fleet.directory + "/rogue"
            try run([Build.cli, "ca", "init", "--dir", rogueCA, "--no-issuing"])
            try run([Build.cli, "ca", "issue", "--dir", rogueCA, "--agent", "agent-1"])
            offset = fleet.daemon!.output.count
            let rogue = try Self.sClient(
                port: fleet.port, ca: ca, ["-cert \(rogueCA)/agent-1.pem -key \(rogueCA)/agent-1-key.pem"])
            // The daemon checks chains itself (revocation lists, docs/operations.md): every refusal is the same
            // alert to the client, and its log line says why.
            #expect(rogue.contains("alert certificate unknown"), "\(rogue)")
            try eventually("the daemon logs why") {
                newLog(since: offset).contains(
                    "refused a client certificate at the handshake: certificate \"agent-1\" (serial ")
                    && newLog(since: offset).contains("): it is not signed by the fleet CA ([tls] ca)")
                    && newLog(since: offset).contains("TLS handshake failed: the client's certificate was refused")
                    && newLog(since: offset).contains("(CERTIFICATE_VERIFY_FAILED)")
            }

            // A certificate of the fleet's CA that has expired.
            let expired = try Self.expiredCertificate(fleet, name: "agent-1")
            offset = fleet.daemon!.output.count
            let late = try Self.sClient(port: fleet.port, ca: ca, ["-cert \(expired.certificate) -key \(expired.key)"])
            #expect(late.contains("alert certificate unknown"), "\(late)")
            try eventually("the daemon logs why") {
                newLog(since: offset).contains("refused a client certificate at the handshake: certificate \"agent-1\"")
                    && newLog(since: offset).contains(") expired on ")
                    && newLog(since: offset).contains("(CERTIFICATE_VERIFY_FAILED)")
            }

            // TLS 1.0 and 1.1: the same client reaches an s_server that allows them, and not the daemon.
            let oldPort = try freePort()
            let server = try Daemonized(
                [
                    "/usr/bin/openssl", "s_server", "-accept", "127.0.0.1:\(oldPort)", "-cert",
                    fleet.directory + "/ca/netpulsed.pem", "-key", fleet.directory + "/ca/netpulsed-key.pem",
                    "-cipher", "DEFAULT:@SECLEVEL=0", "-min_protocol", "TLSv1", "-max_protocol", "TLSv1.2",
                    // -www: answers each connection by itself, without reading standard input (at whose end it
                    // would stop).
                    "-www",
                ], log: fleet.directory + "/s_server.log")
            defer { server.killHard() }
            // s_server's own output is buffered into its log: wait for its port instead.
            try eventually("s_server listens") {
                (try? run(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\(oldPort)"])) != nil
            }
            for version in ["-tls1", "-tls1_1"] {
                let old = [version, "-cipher", "'DEFAULT:@SECLEVEL=0'", agentCertificate]
                let name = version == "-tls1" ? "TLSv1" : "TLSv1.1"
                let control = try Self.sClient(port: oldPort, ca: ca, old)
                // (s_client prints the protocol it tried even when the handshake failed: the cipher tells.)
                #expect(
                    control.contains("Protocol  : \(name)\n") && control.contains("Cipher is ECDHE"),
                    "the client cannot do \(name):\n\(control)")
                offset = fleet.daemon!.output.count
                let refused = try Self.sClient(port: fleet.port, ca: ca, old)
                #expect(refused.contains("Cipher is (NONE)"), "\(refused)")
                #expect(refused.contains("alert protocol version"), "\(refused)")
                try eventually("the daemon logs why") {
                    newLog(since: offset).contains(
                        "TLS handshake failed: the client offered only TLS versions older than 1.2 (UNSUPPORTED_PROTOCOL)"
                    )
                }
            }
            #expect(fleet.daemon!.isRunning)
        }

        /// `testssl.sh` (Debian's `testssl`) finds only TLS 1.2 and 1.3 offered, and only suites with forward
        /// secrecy and authenticated encryption. Its findings are written to `testssl.json` in the test's directory.
        @Test(.timeLimit(.minutes(5)))
        func testsslFindsOnlyStrongProtocolsAndSuites() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let json = fleet.directory + "/testssl.json"
            _ = try run(
                [
                    "testssl", "--quiet", "--color", "0", "--warnings", "batch", "--protocols", "--cipher-per-proto",
                    "--jsonfile", json, "127.0.0.1:\(fleet.port)",
                ], allowFailure: true)
            let findings = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [[String: Any]]
            )
            func finding(_ id: String) -> String {
                findings.first { $0["id"] as? String == id }?["finding"] as? String ?? ""
            }
            for old in ["SSLv2", "SSLv3", "TLS1", "TLS1_1"] {
                #expect(finding(old).hasPrefix("not offered"), "\(old): \(finding(old))")
            }
            #expect(finding("TLS1_2") == "offered", "TLS1_2: \(finding("TLS1_2"))")
            #expect(finding("TLS1_3").hasPrefix("offered"), "TLS1_3: \(finding("TLS1_3"))")
            // One finding per suite offered, e.g. id "cipher-tls1_2_xc02b", finding "TLSv1.2 xc02b
            // ECDHE-ECDSA-AES128-GCM-SHA256 ECDH 253 AESGCM 128 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".
            let suites = findings.compactMap { item -> String? in
                guard let id = item["id"] as? String, id.hasPrefix("cipher-tls") || id.hasPrefix("cipher_x") else {
                    return nil
                }
                return item["finding"] as? String
            }
            #expect(!suites.isEmpty, "testssl listed no suites: \(findings)")
            for suite in suites {
                let strong =
                    (suite.contains("ECDH") || suite.hasPrefix("TLSv1.3"))
                    && (suite.contains("GCM") || suite.contains("CHACHA20") || suite.contains("POLY1305"))
                #expect(strong, "a weak suite is offered: \(suite)")
            }
            // The severities testssl gave, for docs/reliability.md.
            let flagged = findings.filter {
                ["LOW", "MEDIUM", "HIGH", "CRITICAL"].contains($0["severity"] as? String ?? "")
            }
            print(
                "testssl: \(suites.count) suites offered; flagged: \(flagged.map { "\($0["id"] ?? "") \($0["severity"] ?? ""): \($0["finding"] ?? "")" })"
            )
            #expect(fleet.daemon!.isRunning)
        }
    }
}
