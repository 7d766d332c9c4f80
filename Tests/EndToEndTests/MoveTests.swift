import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// A host moved between billing groups while it was away, as the real daemon and agents see it: the operator
    /// edits `[labels.AGENT]` and reloads netpulsed (SIGHUP) while agent-1 is stopped and its veth still carries
    /// traffic, and agent-2 stays connected throughout (docs/windows.md, "Scopes").
    @Suite(.serialized) struct MoveTests {
        @Test(.enabled(if: isRoot, "needs root for network namespaces"), .timeLimit(.minutes(3)))
        func aHostMovedDuringAnOutageIsBilledToEachGroupForItsTime() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host, agents: ["agent-1", "agent-2"])
            func labels(_ customer: String) -> String {
                """

                [labels.agent-1]
                customer = "\(customer)"
                [labels.agent-2]
                customer = "\(customer)"

                """
            }
            try fleet.editDaemonConfig {
                $0 + """

                    [rollups]
                    levels = ["10s", "5m", "1h", "1d"]
                    [aggregation]
                    # The test's veth and its peer have the same ifindex in their namespaces: the agent cannot tell
                    # it from other virtual interfaces by sysfs alone.
                    count = ["physical", "veth", "virtual"]
                    [billing]
                    group_by = ["customer"]

                    """ + labels("acme")
            }
            // The daemon's clock is stepped forward at the end, so that its billing pass takes in the test's
            // 5-minute intervals as ended (debug builds read the offset from this file).
            let clockOffset = fleet.directory + "/clock-offset"
            try "0".write(toFile: clockOffset, atomically: true, encoding: .utf8)
            try fleet.startDaemon(environment: ["NETPULSE_TEST_CLOCK_OFFSET_FILE": clockOffset])
            let first = try fleet.writeAgentConfig("agent-1", interval: "1s", batch: "2s", include: #"["npv0"]"#)
            let second = try fleet.writeAgentConfig("agent-2", interval: "1s", batch: "2s", include: #"["lo"]"#)
            var agent = try fleet.startAgent("agent-1", config: first)
            let other = try fleet.startAgent("agent-2", config: second)
            try eventually("agents connected") {
                agent.output.contains("connected to netpulsed") && other.output.contains("connected to netpulsed")
            }
            try network.sendTraffic(bytes: 4 << 20)
            try eventually("the traffic before the outage is stored", timeout: 30) {
                try fleet.samples("agent-1", "npv0").last?.counters.values == network.kernelCounters()["npv0"]!
            }
            // agent-1 goes away; its veth carries traffic that its first sample after will count.
            #expect(agent.stop() == 0)
            Thread.sleep(forTimeInterval: 12)
            try network.sendTraffic(bytes: 3 << 20)
            // The operator moves both hosts to another customer and reloads.
            try fleet.editDaemonConfig { $0.replacingOccurrences(of: labels("acme"), with: labels("globex")) }
            fleet.daemon!.signal(SIGHUP)
            try eventually("the reload moved both agents") { fleet.daemon!.output.contains("labels: moved 2 agents") }
            Thread.sleep(forTimeInterval: 12)
            try network.sendTraffic(bytes: 2 << 20)
            agent = try fleet.startAgent("agent-1", config: first)
            try eventually("agent-1 connected again") {
                agent.output.components(separatedBy: "connected to netpulsed").count > 1
            }
            try network.sendTraffic(bytes: 1 << 20)
            var kernel = try network.kernelCounters()["npv0"]!
            try eventually("the traffic after the outage is stored", timeout: 30) {
                kernel = try network.kernelCounters()["npv0"]!
                return try fleet.samples("agent-1", "npv0").last?.counters.values == kernel
            }
            let samples = try fleet.samples("agent-1", "npv0").sorted { $0.timestamp < $1.timestamp }
            // The outage: the longest time between two of agent-1's samples (what it spooled when it stopped came
            // with it when it started again).
            let gaps = zip(samples, samples.dropFirst()).map { ($0.timestamp, $1.timestamp) }
            let (offAt, backAt) = try #require(gaps.max { $0.1 - $0.0 < $1.1 - $1.0 })
            #expect(backAt - offAt > 24_000)
            Thread.sleep(forTimeInterval: 3)  // agent-2 sends batches after the reload, with its new labels
            #expect(agent.stop() == 0 && other.stop() == 0)
            // Ten minutes later for the daemon: its next billing pass (one a minute) takes every interval in, up to
            // the end of the one holding the last data (its bills' "as of").
            let lastEnd = (Int64(Date().timeIntervalSince1970 * 1_000) / 300_000 + 1) * 300_000
            try "600000".write(toFile: clockOffset, atomically: true, encoding: .utf8)
            let options = ["--store", fleet.storePath, "--config", fleet.directory + "/netpulsed.toml"]
            var bills = [[String: Any]]()
            try eventually("a billing pass after the step", timeout: 90, interval: 1) {
                bills = try JSONSerialization.jsonObject(
                    with: Data(try run([Build.cli, "bill", "--scope", "group", "--format", "json"] + options).utf8))
                    as! [[String: Any]]
                return bills.count == 2
                    && bills.allSatisfy { RFC3339.parse($0["as_of"] as? String ?? "").map { $0 >= lastEnd } == true }
            }
            #expect(fleet.daemon!.stop() == 0)

            // Each agent moved once, both at the reload, which fell inside agent-1's outage; agent-2's batches after
            // the reload did not move it back.
            let store = try fleet.store()
            let memberships = try blocking { try await store.memberships() }
            var moves = Set<Int64>()
            for name in ["agent-1", "agent-2"] {
                let history = memberships.filter { $0.agent == name }.sorted { $0.from < $1.from }
                #expect(history.map { "\($0.group.key)=\($0.group.value)" } == ["customer=acme", "customer=globex"])
                #expect(history.count == 2 && history[0].to == history[1].from && history[1].to == nil, "\(history)")
                if let move = history.first?.to { moves.insert(move) }
            }
            let move = try #require(moves.first)
            #expect(moves.count == 1 && offAt < move && move < backAt)

            // The groups' 10-second buckets: acme holds agent-1's bytes up to the move, globex from it; the step over
            // the outage is divided between them; together they hold every byte the kernel counted between
            // agent-1's first and last samples.
            func buckets(_ selection: [String], level: String = "10s") throws -> [(start: Int64, rx: UInt64, covered: Int64)] {
                try AnalyticsTests().csvRows(
                    try run([Build.cli, "export", "--level", level, "--format", "csv"] + selection + options)
                ).map {
                    (
                        Int64($0["start_ms"]!)!, UInt64($0["rx_bytes"]!)!,
                        Int64($0["measured_ms"]!)! + Int64($0["interpolated_ms"]!)!
                    )
                }
            }
            let acme = try buckets(["--group", "customer=acme"])
            let globex = try buckets(["--group", "customer=globex"])
            let host = try buckets(["--agent", "agent-1"])
            let counted = kernel[0] - samples[0].counters.values[0]
            let hostBytes: UInt64 = host.map(\.rx).reduce(0, +)
            let acmeBytes: UInt64 = acme.map(\.rx).reduce(0, +)
            let globexBytes: UInt64 = globex.map(\.rx).reduce(0, +)
            #expect(hostBytes == counted)
            #expect(acmeBytes + globexBytes == counted)
            #expect(acme.filter { $0.rx > 0 }.allSatisfy { $0.start < move })
            #expect(globex.filter { $0.rx > 0 }.allSatisfy { $0.start + 10_000 > move })
            // The outage's step is divided at the move: acme has bytes in a bucket that begins inside it, and globex
            // in a bucket that ends before the one holding agent-1's first sample after it. (Moved when agent-1
            // came back, the whole step would be acme's.)
            let outage = "off \(offAt) move \(move) back \(backAt): acme \(acme.filter { $0.start + 10_000 > offAt }) globex \(globex.filter { $0.start < backAt })"
            #expect(acme.contains { $0.start >= offAt && $0.rx > 0 }, "\(outage)")
            #expect(globex.contains { $0.start + 10_000 <= backAt / 10_000 * 10_000 && $0.rx > 0 }, "\(outage)")

            // Each customer's bill, as the daemon keeps it, rests on its own 5-minute intervals: one per interval
            // its buckets have data in, and its inbound 95th percentile is the rank `⌊(95n + 50)/100⌋` of their
            // rates (docs/windows.md, "95th-percentile billing"), from the bytes checked above.
            for customer in ["acme", "globex"] {
                let rows = try buckets(["--group", "customer=\(customer)"], level: "5m").filter { $0.covered > 0 }
                let bill = try #require(
                    bills.first { (($0["series"] as? [String: Any])?["group"] as? String) == "customer=\(customer)" },
                    "a bill of customer=\(customer) in \(bills)")
                let withData = (bill["measured_intervals"] as! Int) + (bill["interpolated_intervals"] as! Int)
                #expect(withData == rows.count && withData >= 1, "\(customer): \(bill)")
                let rates = rows.map { $0.rx * 1_000_000 / 300_000 }.sorted()
                let rank = max(0, min(rates.count - 1, (95 * rates.count + 50) / 100 - 1))
                let got = try #require(bill["p95_in_bytes_per_second"] as? NSNumber).doubleValue
                #expect(abs(got - Double(rates[rank]) / 1_000) < 0.0005, "\(customer): \(bill)")
            }
            // And `--members` says what each customer was over the period: agent-1's veth (the loopback of agent-2
            // is not counted), and both hosts, acme's until the move and globex's from it.
            let explained = try JSONSerialization.jsonObject(
                with: Data(
                    try run([Build.cli, "bill", "--scope", "group", "--members", "--format", "json"] + options).utf8))
                as! [[String: Any]]
            for (customer, from, to) in [("acme", nil, move), ("globex", move, nil)] as [(String, Int64?, Int64?)] {
                let bill = try #require(
                    explained.first { (($0["series"] as? [String: Any])?["group"] as? String) == "customer=\(customer)" })
                let members = try #require(bill["members"] as? [String: Any], "\(bill)")
                #expect(members["interfaces"] as? Int == 1, "\(customer): \(members)")
                #expect((members["speed_mbps"] as? Int).map { $0 > 0 } ?? false, "\(customer): \(members)")
                let hosts = (members["hosts"] as? [[String: Any]] ?? []).map { host in
                    "\(host["name"]!) \((host["from"] as? String).flatMap(RFC3339.parse).map(String.init) ?? "-") \((host["to"] as? String).flatMap(RFC3339.parse).map(String.init) ?? "-")"
                }
                let span = "\(from.map(String.init) ?? "-") \(to.map(String.init) ?? "-")"
                #expect(hosts == ["agent-1 \(span)", "agent-2 \(span)"], "\(customer): \(members)")
            }
        }
    }
}
