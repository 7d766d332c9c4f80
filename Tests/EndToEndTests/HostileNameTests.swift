import Foundation
import Testing

extension EndToEnd {
    /// Names an attacker or a careless operator chooses, on real interfaces and labels, through every CLI format.
    @Suite(.serialized) struct HostileNameTests {
        /// Python checks of the machine formats, independent of the Swift writers: every CSV parses with one width
        /// and no cell a spreadsheet would run as a formula; every JSON parses.
        static let csvCheck = """
            import csv, sys
            rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8", errors="replace")))
            assert len(rows) > 1 and len({len(row) for row in rows}) == 1, rows
            def number(cell):
                try:
                    float(cell)
                    return True
                except ValueError:
                    return False
            bad = [c for row in rows for c in row if c[:1] in ("=", "+", "-", "@", "\\t", "\\r") and not number(c)]
            assert not bad, bad
            """

        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(2)))
        func hostileNamesReachEveryFormatSafely() throws {
            let network = try TestNetwork()
            // More names Linux allows, made with bash's $'…' so that bytes that are not UTF-8 get through: a formula,
            // a terminal escape sequence, bytes that are not UTF-8, and non-ASCII.
            try run([
                "ip", "netns", "exec", network.host, "bash", "-c",
                #"""
                set -e
                ip link add '=1+1' type veth peer name $'\x1b[31mred'
                ip link add $'n\xff\xfe' type veth peer name 'ü-ß'
                for name in '=1+1' $'\x1b[31mred' $'n\xff\xfe' 'ü-ß'; do ip link set dev "$name" up; done
                """#,
            ])
            let fleet = try Fleet(netns: network.host)
            // Every interface of a test namespace is virtual (veths), and the one whose name is not UTF-8 has no
            // kind the agent can read: counted here, so the group has figures to print.
            try fleet.editDaemonConfig {
                $0 + "\n[labels]\nfrom_agents = [\"site\"]\n[aggregation]\ncount = [\"veth\", \"unknown\"]\n"
            }
            try fleet.startDaemon()
            // A label value with a newline and a screen-clearing escape (it once read back as a second label): the
            // agent refuses its config, naming the line.
            let smuggling = try fleet.writeAgentConfig(
                "agent-1", exclude: #"["lo"]"#, extra: #"[labels]\#nsite = "fra\nteam=ops\u001b[2J""#)
            let check = try run([Build.agent, "--check", "--config", smuggling], allowFailure: true)
            #expect(!check.contains("OK"), "a label value with a control character was accepted")
            // A label value with a quote, angle brackets and a comma: each key=value of an agent's labels is a group.
            let labels = #"[labels]\#nsite = "fra\"<1>,""#
            let agent = try fleet.startAgent(
                "agent-1", config: try fleet.writeAgentConfig("agent-1", exclude: #"["lo"]"#, extra: labels))
            try eventually("the odd interfaces are stored", timeout: 30) {
                try fleet.samples("agent-1", "=1+1").count >= 2 && fleet.samples("agent-1", "ü-ß").count >= 2
            }
            // A name with a control character (here a terminal escape) is one the protocol refuses: the agent
            // leaves that interface out and says so, and goes on with the others.
            try eventually("the agent says why it leaves an interface out") {
                agent.output.contains(#"not sampling interface \x1b[31mred"#)
            }
            try eventually("rates cover every other odd interface", timeout: 30) {
                let json = try run([Build.cli, "rates", "--store", fleet.storePath, "--format", "json"])
                return json.contains("6efffe") && json.contains("=1+1") && json.contains(#"n\\xff\\xfe"#)
            }

            for command in [["rates"], ["top", "--scope", "interface"], ["top", "--scope", "group"]] {
                // The daemon's config: its [aggregation] counts the veths, so `top` ranks them as the fleet's.
                let base = [Build.cli] + command + ["--config", fleet.directory + "/netpulsed.toml"]
                let what = command.joined(separator: " ")

                let csv = try run(base + ["--format", "csv"])
                let csvFile = fleet.directory + "/out.csv"
                try csv.write(toFile: csvFile, atomically: true, encoding: .utf8)
                #expect(
                    (try? run(["/usr/bin/python3", "-c", Self.csvCheck, csvFile])) != nil,
                    "\(what) CSV:\n\(csv)")

                let json = try run(base + ["--format", "json"])
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil, "\(what) JSON:\n\(json)")

                let table = try run(base + ["--format", "table"])
                #expect(!table.unicodeScalars.contains("\u{1B}"), "\(what): a raw escape sequence reached the terminal")
                if command == ["top", "--scope", "group"] {
                    #expect(csv.contains("\"site=fra\"\"<1>,\""), "\(csv)")
                    #expect(table.contains(#"site=fra"<1>,"#), "\(table)")
                } else {
                    #expect(csv.contains("'=1+1") && !csv.contains(",=1+1"), "\(what) CSV:\n\(csv)")
                    // The name that is not UTF-8 in its text form, distinct and reversible (docs/protocol.md).
                    #expect(table.contains(#"n\xff\xfe"#), "\(what) table:\n\(table)")
                    #expect(!csv.contains("31mred"), "\(what): the refused interface was stored")
                }
            }
            // The name that is not UTF-8 keeps its bytes in JSON too.
            let json = try run([Build.cli, "rates", "--store", fleet.storePath, "--format", "json"])
            #expect(json.contains(#""interface_hex":"6efffe""#), "\(json)")
            #expect(agent.isRunning && fleet.daemon!.isRunning)
        }
    }
}
