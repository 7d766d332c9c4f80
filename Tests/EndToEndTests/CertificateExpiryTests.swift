import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// Certificates running out are seen in time: each agent says so in its log (30, 7 and 1 day before), and the
    /// daemon's `/metrics` shows when each connected agent's certificate and its own expire.
    @Suite struct CertificateExpiryTests {
        @Test(.timeLimit(.minutes(2)))
        func agentsWarnAndTheDaemonExportsEveryExpiry() throws {
            let fleet = try Fleet(agents: [])
            defer { fleet.shutdown() }
            // One agent with 20 days left, one with 5, one with a year.
            for (agent, days) in [("month-left", "20"), ("week-left", "5"), ("year-left", "365")] {
                try run([Build.cli, "ca", "issue", "--dir", "\(fleet.directory)/ca", "--agent", agent, "--days", days])
            }
            let metricsPort = try freePort()
            try fleet.editDaemonConfig { $0 + "\n[metrics]\nlisten = \"127.0.0.1:\(metricsPort)\"\n" }
            try fleet.startDaemon()
            var agents: [String: Daemonized] = [:]
            for agent in ["month-left", "week-left", "year-left"] {
                let config = try fleet.writeAgentConfig(agent, include: #"["lo"]"#)
                agents[agent] = try fleet.startAgent(agent, config: config)
            }
            for agent in agents.values {
                try eventually("the agents connect") { agent.output.contains("connected to netpulsed") }
            }
            let renew = "renew it: `netpulse-agent request` here"
            // The check runs beside the connection: its lines may come a moment after "connected".
            try eventually("the agents with little time left say so") {
                agents["month-left"]!.output.contains("expires in")
                    && agents["week-left"]!.output.contains("expires in")
            }
            #expect(
                agents["month-left"]!.output.contains(
                    "the certificate of agent month-left (\(fleet.directory)/ca/month-left.pem) expires in 20 days, at "
                ),
                "\(agents["month-left"]!.output)")
            #expect(agents["month-left"]!.output.contains(renew))
            #expect(
                agents["week-left"]!.output.contains("the certificate of agent week-left")
                    && agents["week-left"]!.output.contains("expires in 5 days"), "\(agents["week-left"]!.output)")
            #expect(!agents["year-left"]!.output.contains("expires in"), "\(agents["year-left"]!.output)")

            // The daemon's figures are the certificates' own ends, as openssl reads them.
            func end(_ file: String) throws -> String {
                let line = try run(["openssl", "x509", "-noout", "-enddate", "-in", file])
                let date = line.replacingOccurrences(of: "notAfter=", with: "").trimmingCharacters(
                    in: .whitespacesAndNewlines)
                return try run(["date", "-u", "-d", date, "+%s"]).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let endpoint = "http://127.0.0.1:\(metricsPort)/metrics"
            var exposition = ""
            try eventually("every agent's expiry is exported") {
                exposition = try run(["curl", "-sS", "--fail", endpoint])
                return exposition.components(separatedBy: "netpulse_agent_certificate_expiry_timestamp_seconds{")
                    .count == 4
            }
            for agent in agents.keys {
                let expected = try end("\(fleet.directory)/ca/\(agent).pem")
                #expect(
                    exposition.contains(
                        "netpulse_agent_certificate_expiry_timestamp_seconds{agent=\"\(agent)\"} \(expected)\n"),
                    "\(exposition)")
            }
            let daemonEnd = try end("\(fleet.directory)/ca/netpulsed.pem")
            let caEnd = try end("\(fleet.directory)/ca/ca.pem")
            #expect(
                exposition.contains(
                    "netpulse_certificate_expiry_timestamp_seconds{certificate=\"daemon\",file=\"\(fleet.directory)/ca/netpulsed.pem\"} \(daemonEnd)\n"
                ), "\(exposition)")
            #expect(
                exposition.contains(
                    "netpulse_certificate_expiry_timestamp_seconds{certificate=\"ca\",file=\"\(fleet.directory)/ca/ca.pem\"} \(caEnd)\n"
                ), "\(exposition)")
            if SelfMonitoringTests.available {
                let check = try Prometheus.check(exposition, in: fleet.directory)
                #expect(check.status == 0, "promtool check metrics:\n\(check.output)\n\(exposition)")
            }

            // An agent that leaves leaves the figures.
            #expect(agents["week-left"]!.stop() == 0)
            try eventually("the departed agent's expiry is gone") {
                !(try run(["curl", "-sS", "--fail", endpoint])).contains("{agent=\"week-left\"}")
            }
        }

        /// The rule config/netpulsed.toml ships, `certificate_expiry < 14d`, fires for an agent whose certificate has
        /// ten days left and not for one with a year.
        @Test(.timeLimit(.minutes(2)))
        func theShippedRuleFiresForAnAgentWhoseCertificateRunsOut() throws {
            let fleet = try Fleet(agents: [])
            defer { fleet.shutdown() }
            for (agent, days) in [("ten-days", "10"), ("a-year", "365")] {
                try run([Build.cli, "ca", "issue", "--dir", "\(fleet.directory)/ca", "--agent", agent, "--days", days])
            }
            // The shipped rule, as the example config has it: its table and the one after (its annotations).
            let shipped = try String(contentsOfFile: Build.root + "/config/netpulsed.toml", encoding: .utf8)
            let start = try #require(shipped.range(of: "[alert.CertificateExpiring]\n"))
            let rule = String(shipped[start.lowerBound...]).components(separatedBy: "\n\n")[0]
            #expect(rule.contains(#"expr = "certificate_expiry < 14d""#), "\(rule)")
            // Rules watch hosts that have figures: here the agents' loopback makes them.
            try fleet.editDaemonConfig {
                $0 + "\n[aggregation]\ncount = [\"loopback\"]\n[alerts]\nevaluation_interval = \"1s\"\n\n" + rule + "\n"
            }
            try fleet.startDaemon()
            for agent in ["ten-days", "a-year"] {
                try fleet.startAgent(agent, config: try fleet.writeAgentConfig(agent, include: #"["lo"]"#))
            }
            try eventually("the rule fires for the agent with ten days left", timeout: 30) {
                AlertTests.statuses(try AlertTests.listing(fleet), rule: "CertificateExpiring") == ["firing"]
            }
            let listing = try AlertTests.listing(fleet)
            let firing = try #require(
                AlertTests.events(listing, rule: "CertificateExpiring").first { $0["status"] as? String == "firing" })
            let labels = try #require(firing["labels"] as? [String: String])
            #expect(labels["host"] == "ten-days", "\(firing)")
            let value = try #require(firing["value"] as? Double)
            #expect(value > 9 * 86_400 && value <= 10 * 86_400, "\(firing)")
            let summary = (firing["annotations"] as? [String: String])?["summary"] ?? ""
            #expect(summary.hasPrefix("the certificate of agent ten-days expires in 9d "), "\(summary)")
            // Still only the one, a few rounds later.
            Thread.sleep(forTimeInterval: 3)
            #expect(AlertTests.statuses(try AlertTests.listing(fleet), rule: "CertificateExpiring") == ["firing"])
        }
    }
}
