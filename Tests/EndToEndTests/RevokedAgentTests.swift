import Foundation
import Testing

extension EndToEnd {
    /// An agent's certificate revoked with the real `netpulse ca revoke`, the list named in `[tls] revoked` and the
    /// daemon reloaded: its open connection is closed, its handshakes are refused with a line naming it, and the
    /// rest of the fleet carries on.
    @Suite(.serialized) struct RevokedAgentTests {
        @Test(.timeLimit(.minutes(2)))
        func aRevokedAgentIsCutOffAtTheReloadAndRefusedAfter() throws {
            let fleet = try Fleet(agents: ["agent-1", "agent-2"])
            defer { fleet.shutdown() }
            try fleet.startDaemon()
            let revoked = try fleet.startAgent(
                "agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            let kept = try fleet.startAgent(
                "agent-2", config: try fleet.writeAgentConfig("agent-2", include: #"["lo"]"#))
            try eventually("both agents' points arrive") {
                try fleet.samples("agent-1", "lo").count >= 3 && fleet.samples("agent-2", "lo").count >= 3
            }

            let ca = fleet.directory + "/ca"
            let said = try run([Build.cli, "ca", "revoke", "agent-1", "--dir", ca])
            #expect(said.contains("revoked agent-1 (serial "), "\(said)")
            // Revoking it again changes nothing and says so.
            #expect(try run([Build.cli, "ca", "revoke", "agent-1", "--dir", ca]).contains("already revoked"))
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "[tls]\n", with: "[tls]\nrevoked = \"\(ca)/revoked.txt\"\n")
            }
            let config = fleet.directory + "/netpulsed.toml"
            #expect(try run([Build.cli, "check-config", config]).contains("OK"))
            // A list the daemon could not read fails the check first, naming the file and line.
            let broken = fleet.directory + "/broken.toml"
            try String(contentsOfFile: config, encoding: .utf8)
                .replacingOccurrences(of: "\(ca)/revoked.txt", with: "\(fleet.directory)/broken.txt")
                .write(toFile: broken, atomically: true, encoding: .utf8)
            try "# revoked\nweb-01 by name\n".write(
                toFile: fleet.directory + "/broken.txt", atomically: true, encoding: .utf8)
            let refused = try run(["sh", "-c", "\(Build.cli) check-config \(broken) 2>&1; echo exit $?"])
            #expect(
                refused.contains("\(fleet.directory)/broken.txt:2: \"web-01\" is not a serial number in hex")
                    && refused.hasSuffix("exit 2\n"), "\(refused)")
            fleet.daemon!.signal(SIGHUP)
            try eventually("the revoked agent's connection is closed") {
                fleet.daemon!.output.contains("closed the connection of agent agent-1: its certificate (serial ")
            }
            try eventually("its next handshake is refused, naming it") {
                fleet.daemon!.output.contains(
                    "refused a client certificate at the handshake: certificate \"agent-1\" (serial ")
                    && fleet.daemon!.output.contains("was revoked on ")
            }
            // From then on only agent-2's points arrive.
            let before = try fleet.samples("agent-1", "lo").count
            let other = try fleet.samples("agent-2", "lo").count
            Thread.sleep(forTimeInterval: 3)
            #expect(try fleet.samples("agent-1", "lo").count == before)
            #expect(try fleet.samples("agent-2", "lo").count > other)
            #expect(revoked.isRunning && kept.isRunning && fleet.daemon!.isRunning)
            #expect(!kept.output.contains("cannot connect"))
        }
    }
}
