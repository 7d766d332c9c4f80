import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// Certificates that renew themselves: an agent asks the daemon that holds the issuing CA (`[enrollment]`) for a
    /// new certificate over its connection, with a key it makes itself, and connects with it from then on, past the
    /// old certificate's end, without losing a sample.
    @Suite struct RenewalTests {
        /// The Unix time at which the certificate in `file` ends, as openssl reads it.
        static func end(_ file: String) throws -> Int {
            let line = try run(["openssl", "x509", "-noout", "-enddate", "-in", file])
            let date = line.replacingOccurrences(of: "notAfter=", with: "").trimmingCharacters(
                in: .whitespacesAndNewlines)
            return Int(try run(["date", "-u", "-d", date, "+%s"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }

        @Test(.timeLimit(.minutes(3)))
        func anAgentRenewsItsOneMinuteCertificateAndKeepsDeliveringPastItsEnd() throws {
            let fleet = try Fleet(agents: [])
            defer { fleet.shutdown() }
            // A certificate for a minute, from the root; renewals come from the issuing CA `ca init` made beside it.
            try run([
                Build.cli, "ca", "issue", "--dir", "\(fleet.directory)/ca", "--agent", "agent-1", "--validity", "1m",
            ])
            let original = "\(fleet.directory)/ca/agent-1.pem"
            let originalEnd = try Self.end(original)
            let metricsPort = try freePort()
            try fleet.editDaemonConfig {
                $0
                    + "\n[enrollment]\ndirectory = \"\(fleet.directory)/enrollment\"\nvalidity = \"1h\"\n"
                    + "[metrics]\nlisten = \"127.0.0.1:\(metricsPort)\"\n"
            }
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig(
                    "agent-1", interval: "1s", batch: "2s", include: #"["lo"]"#, extra: "renew_after = 0.5"))
            let started = Int(Date().timeIntervalSince1970)

            // Half of its life (30 s, counted from its backdated start) is spent, and it asks.
            try eventually("the daemon renews the agent's certificate", timeout: 60) {
                fleet.daemon!.output.contains("renewed the certificate of agent agent-1: serial ")
            }
            try eventually("the agent connects with the renewed certificate") {
                agent.output.contains("the daemon accepted the renewed certificate")
            }
            #expect(agent.output.contains("asking the daemon to renew the certificate"), "\(agent.output)")
            #expect(Int(Date().timeIntervalSince1970) - started >= 15, "renewed too early:\n\(agent.output)")

            // Kept in the agent's state directory, key and chain in one file only the agent reads, chained to the
            // root through the issuing CA.
            let renewed = "\(fleet.directory)/agent-1/certificate/current.pem"
            let attributes = try FileManager.default.attributesOfItem(atPath: renewed)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(
                !FileManager.default.fileExists(atPath: "\(fleet.directory)/agent-1/certificate/next.pem"),
                "\(agent.output)")
            let verified = try run([
                "openssl", "verify", "-CAfile", "\(fleet.directory)/ca/ca.pem", "-untrusted",
                "\(fleet.directory)/enrollment/ca.pem", "-purpose", "sslclient", renewed,
            ])
            #expect(verified.contains(": OK"), "\(verified)")
            let renewedEnd = try Self.end(renewed)
            #expect(renewedEnd > originalEnd + 3000, "renewed for an hour: \(renewedEnd) vs \(originalEnd)")
            // The new key is not the configured one.
            let configuredKey = try run(["openssl", "pkey", "-in", "\(fleet.directory)/ca/agent-1-key.pem", "-pubout"])
            let renewedKey = try run(["openssl", "x509", "-in", renewed, "-noout", "-pubkey"])
            #expect(configuredKey != renewedKey)

            // The daemon sees the agent with its new certificate.
            try eventually("the daemon exports the renewed certificate's end") {
                try run(["curl", "-sS", "--fail", "http://127.0.0.1:\(metricsPort)/metrics"]).contains(
                    "netpulse_agent_certificate_expiry_timestamp_seconds{agent=\"agent-1\"} \(renewedEnd)\n")
            }

            // Past the original certificate's end the agent still delivers, and no sample is missing.
            let wait = Double(originalEnd + 5) - Date().timeIntervalSince1970
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            let beforeEnd = Int64(originalEnd) * 1000
            try eventually("samples after the original certificate's end are stored", timeout: 20) {
                (try fleet.samples("agent-1", "lo").last?.timestamp ?? 0) > beforeEnd + 3_000
            }
            let samples = try fleet.samples("agent-1", "lo")
            let gaps = zip(samples, samples.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(samples.count >= 40 && gaps.allSatisfy { $0 < 2_000 }, "largest gap \(gaps.max() ?? 0) ms")
            #expect(agent.isRunning)
            // One renewal and one reconnect, for it; the daemon never refused the agent.
            #expect(agent.output.components(separatedBy: "asking the daemon to renew").count == 2, "\(agent.output)")
            #expect(agent.output.components(separatedBy: "connected to netpulsed").count == 3, "\(agent.output)")
            #expect(!fleet.daemon!.output.contains("refused a client certificate"), "\(fleet.daemon!.output)")

            // A reload keeps the renewed certificate and the connection.
            agent.signal(SIGHUP)
            try eventually("the agent reloads") { agent.output.contains("reloaded ") }
            Thread.sleep(forTimeInterval: 3)
            #expect(agent.output.components(separatedBy: "connected to netpulsed").count == 3, "\(agent.output)")

            // The operator puts a new certificate in place (enrolled again): on reload it wins over the renewed one,
            // and the agent reconnects with it at once, so the daemon sees it.
            try run([
                Build.cli, "ca", "issue", "--dir", "\(fleet.directory)/ca", "--agent", "agent-1", "--days", "30",
                "--overwrite",
            ])
            let reenrolledEnd = try Self.end(original)
            agent.signal(SIGHUP)
            do {
                try eventually("the daemon sees the certificate put in place") {
                    try run(["curl", "-sS", "--fail", "http://127.0.0.1:\(metricsPort)/metrics"]).contains(
                        "netpulse_agent_certificate_expiry_timestamp_seconds{agent=\"agent-1\"} \(reenrolledEnd)\n")
                }
            } catch {
                Issue.record("\(error)\n\(agent.output)")
            }
            #expect(agent.output.contains(" with the new certificate"), "\(agent.output)")
        }
    }
}
