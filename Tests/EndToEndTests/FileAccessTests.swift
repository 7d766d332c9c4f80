import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// Who may read what: keys by their role's group only, credentials never over plain http unless a receiver's
    /// table allows it. Through the real `netpulse`, `netpulsed` and an unprivileged user of the host.
    @Suite(.serialized) struct FileAccessTests {
        /// A system group of the test's own, deleted afterwards.
        final class TemporaryGroup {
            let name: String
            let id: String

            init(_ role: String) throws {
                name = "np-\(role)-\(UUID().uuidString.prefix(6).lowercased())"
                try run(["groupadd", "--system", name])
                id = try run(["getent", "group", name]).split(separator: ":")[2].description
            }

            deinit { _ = try? run(["groupdel", name], allowFailure: true) }
        }

        /// Runs `command` as the unprivileged user `nobody` whose only group is `group`; returns the exit status
        /// and what it printed.
        static func asMemberOf(_ group: TemporaryGroup, _ command: [String]) throws -> (Int32, String) {
            let finished = try Command.runToEnd(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=\(group.id)", "--clear-groups"] + command,
                mergingErrors: true)
            return (finished.status, finished.output)
        }

        static func stat(_ path: String) throws -> String {
            try run(["stat", "-c", "%a %U %G", path]).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// `ca issue --group` with a group per role: the daemon's key is 0640 in the daemon's group, an agent's in
        /// the agents' group, and a real user of the agents' group reads its own key and cannot read the daemon's.
        /// Giving a key to the group that already reads the other role's key (the one shared group of before) is
        /// refused, naming that key, and writes nothing.
        @Test(.enabled(if: isRoot, "needs root to create groups and switch users"))
        func eachRolesKeyIsReadableByItsOwnGroupOnly() throws {
            let daemonGroup = try TemporaryGroup("daemon")
            let agentGroup = try TemporaryGroup("agents")
            let directory = NSTemporaryDirectory() + "netpulse-keys-" + UUID().uuidString.prefix(8)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // Others may enter the directory (as /etc/netpulse): each file guards itself.
            chmod(directory, 0o755)
            let ca = "\(directory)/ca"
            let out = "\(directory)/etc"
            try run([Build.cli, "ca", "init", "--dir", ca])
            try run([
                Build.cli, "ca", "issue", "--dir", ca, "--daemon", "netpulsed", "--out", out, "--group",
                daemonGroup.name,
            ])
            try run([
                Build.cli, "ca", "issue", "--dir", ca, "--agent", "web-01", "--out", out, "--group", agentGroup.name,
            ])

            #expect(try Self.stat("\(out)/netpulsed-key.pem") == "640 root \(daemonGroup.name)")
            #expect(try Self.stat("\(out)/web-01-key.pem") == "640 root \(agentGroup.name)")
            #expect(try Self.stat("\(out)/netpulsed.pem").hasPrefix("644 root "))
            let (ownStatus, own) = try Self.asMemberOf(agentGroup, ["cat", "\(out)/web-01-key.pem"])
            #expect(ownStatus == 0 && own.hasPrefix("-----BEGIN PRIVATE KEY-----"), "\(own)")
            let (status, refused) = try Self.asMemberOf(agentGroup, ["cat", "\(out)/netpulsed-key.pem"])
            #expect(status != 0 && refused.contains("Permission denied"), "\(refused)")
            let (daemonStatus, _) = try Self.asMemberOf(daemonGroup, ["cat", "\(out)/netpulsed-key.pem"])
            #expect(daemonStatus == 0)
            let (crossStatus, _) = try Self.asMemberOf(daemonGroup, ["cat", "\(out)/web-01-key.pem"])
            #expect(crossStatus != 0)

            // One group for both roles: refused both ways, before anything is written.
            for (role, name, group, other) in [
                ("--agent", "web-02", daemonGroup, "\(out)/netpulsed-key.pem"),
                ("--daemon", "collector-2", agentGroup, "\(out)/web-01-key.pem"),
            ] {
                let shared = try runCapturing([
                    Build.cli, "ca", "issue", "--dir", ca, role, name, "--out", out, "--group", group.name,
                ])
                #expect(shared.status != 0)
                #expect(
                    shared.errors.contains("Group \(group.name) already reads the ") && shared.errors.contains(other)
                        && shared.errors.contains("--group netpulse-daemon for the daemon"), "\(shared.errors)")
                #expect(!FileManager.default.fileExists(atPath: "\(out)/\(name).pem"))
                #expect(!FileManager.default.fileExists(atPath: "\(out)/\(name)-key.pem"))
            }
            // Re-issuing a key into its own group is fine (a renewal).
            try run([
                Build.cli, "ca", "issue", "--dir", ca, "--daemon", "netpulsed", "--out", out, "--group",
                daemonGroup.name, "--overwrite",
            ])
            #expect(try Self.stat("\(out)/netpulsed-key.pem") == "640 root \(daemonGroup.name)")
        }

        /// A bearer token toward a plain http:// webhook or remote-write receiver: netpulsed refuses to start (exit
        /// status 2) and `netpulse check-config` fails, both with the file, line, key and the setting that allows
        /// it; with `allow_insecure_credentials = true` check-config passes with a warning and the daemon starts,
        /// logging the warning.
        @Test func credentialsOverPlainHTTPAreRefusedUnlessAllowed() throws {
            let fleet = try Fleet()
            defer { fleet.shutdown() }
            let config = "\(fleet.directory)/netpulsed.toml"
            try "t0ken\n".write(toFile: "\(fleet.directory)/token", atomically: true, encoding: .utf8)
            let base = try String(contentsOfFile: config, encoding: .utf8)
            let lines = base.split(separator: "\n", omittingEmptySubsequences: false).count
            try
                (base + """

                    [remote_write]
                    url = "http://127.0.0.1:9/api/v1/write"
                    bearer_token_file = "\(fleet.directory)/token"

                    """).write(toFile: config, atomically: true, encoding: .utf8)
            let expected =
                "\(config):\(lines + 3): 'remote_write.bearer_token_file' would be sent in clear text to http://127.0.0.1:9/api/v1/write (plain http://, readable by anyone on the path); use an https:// URL, or set allow_insecure_credentials = true in [remote_write] to send it anyway"
            let refused = try Daemonized([Build.netpulsed, "--config", config], log: "\(fleet.directory)/refused.log")
            try eventually("netpulsed refuses the config and exits", timeout: 10) { !refused.isRunning }
            #expect(refused.stop() == 2)
            #expect(refused.output.contains(expected), "\(refused.output)")
            let check = try runCapturing([Build.cli, "check-config", config])
            #expect(check.status == 2)
            #expect(check.errors.contains(expected), "\(check.errors)")

            try fleet.editDaemonConfig { $0 + "allow_insecure_credentials = true\n" }
            let warning =
                "[remote_write] sends the token of bearer_token_file in clear text to http://127.0.0.1:9/api/v1/write (allow_insecure_credentials = true)"
            let allowed = try runCapturing([Build.cli, "check-config", config])
            #expect(allowed.status == 0, "\(allowed.errors)")
            #expect(allowed.errors.contains("warning: \(warning)"), "\(allowed.errors)")
            try fleet.startDaemon()
            #expect(fleet.daemon!.output.contains(warning), "\(fleet.daemon!.output)")
        }
    }
}

/// Runs a command to its end and returns its exit status, standard output and standard error.
func runCapturing(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
    let finished = try Command.runToEnd(arguments[0], Array(arguments.dropFirst()))
    return (finished.status, finished.output, finished.errors)
}
