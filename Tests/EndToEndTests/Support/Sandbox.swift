import Foundation
import TestSupport

/// A real systemd booted by `scripts/systemd-sandbox.sh` in throwaway namespaces, with Netpulse installed in it by
/// `scripts/install.sh` (the debug binaries this test run built), a CA, certificates and configs.
final class Sandbox: @unchecked Sendable {
    static let script = Build.root + "/scripts/systemd-sandbox.sh"
    /// Whether a sandbox can be booted here: root, and systemd installed.
    static let isAvailable = isRoot && FileManager.default.isExecutableFile(atPath: "/lib/systemd/systemd")

    let pid: String

    init() throws {
        // The repository is bound in: a checkout under /tmp would be hidden by the sandbox's own /tmp.
        pid = try run([Self.script, "start", Build.root]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a shell command inside (within ``Command/runToEnd(_:_:mergingErrors:timeout:)``'s limit); returns its
    /// exit status and combined output.
    @discardableResult
    func shell(_ command: String) throws -> (status: Int32, output: String) {
        let finished = try Command.runToEnd(
            Self.script, ["run", pid, "/bin/bash", "-c", command], mergingErrors: true)
        return (finished.status, finished.output)
    }

    /// Runs a command that must succeed, and returns its output.
    @discardableResult
    func must(_ command: String) throws -> String {
        let (status, output) = try shell(command)
        guard status == 0 else { throw CommandFailure(description: "`\(command)` exited \(status):\n\(output)") }
        return output
    }

    func property(_ unit: String, _ name: String) throws -> String {
        try must("systemctl show -p \(name) --value \(unit)").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Installs Netpulse with scripts/install.sh, makes a CA and certificates with `netpulse ca`, and writes
    /// configs for a daemon on 127.0.0.1:7420 and an agent sampling loopback. Starts nothing.
    func install(socketActivation: Bool = false) throws {
        try must(
            "cd \(Build.root) && scripts/install.sh --binaries .build/debug --no-enable\(socketActivation ? " --socket-activation" : "")"
        )
        try must(
            """
            set -e
            netpulse ca init --dir /etc/netpulse/ca >/dev/null
            netpulse ca issue --dir /etc/netpulse/ca --daemon netpulsed --out /etc/netpulse --group netpulse-daemon >/dev/null
            netpulse ca issue --dir /etc/netpulse/ca --agent sandbox-agent --out /etc/netpulse --group netpulse-agents >/dev/null
            install -m 0644 /etc/netpulse/ca/ca.pem /etc/netpulse/ca.pem
            """)
        try writeAgentConfig()
        // The reports where the shipped config puts them, for the timer and for `netpulse report` by hand alike.
        try must(
            "printf '[listen]\\naddress = \"127.0.0.1:7420\"\\n[reports]\\ndirectory = \"/var/lib/netpulse-reports\"\\n' > /etc/netpulse/netpulsed.toml"
        )
    }

    func writeAgentConfig(batch: String = "1s") throws {
        try must(
            """
            cat > /etc/netpulse/agent.toml <<'CONF'
            [agent]
            id = "sandbox-agent"
            [sampling]
            include = ["lo"]
            exclude = []
            [batch]
            interval = "\(batch)"
            [throttle]
            idle_heartbeat = "0s"
            [daemon]
            certificate = "/etc/netpulse/sandbox-agent.pem"
            key = "/etc/netpulse/sandbox-agent-key.pem"
            backoff_max = "2s"
            CONF
            """)
    }

    /// Samples of the agent's loopback the daemon stored, read with the installed CLI (raw export, one CSV line
    /// each after the header).
    func storedSamples() throws -> Int {
        let csv = try shell(
            "netpulse export --store /var/lib/netpulsed/netpulse.db --level raw --format csv --agent sandbox-agent --interface lo --last 1h"
        ).output
        return csv.split(separator: "\r\n").dropFirst().filter { $0.hasPrefix("sandbox-agent,lo,") }.count
    }

    deinit {
        _ = try? run([Self.script, "stop", pid], allowFailure: true)
    }
}
