import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// Real traffic of a known size between two network namespaces, through the real agent, daemon and CLI: the
    /// window totals equal the kernel's counter deltas exactly, rates are within 1 %, a spool replayed after an
    /// outage lands in the right buckets and keeps the totals exact, and every snapshot and CLI output is valid
    /// JSON (against the snapshot schema) and parseable CSV, with interface names such as `a<b&c` and `p"q>`.
    @Suite(.serialized) struct AnalyticsTests {
        static let checker = Build.root + "/Tests/Tools/check_outputs.py"
        static let browser = Build.root + "/Tests/Tools/browser_check.py"

        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(4)))
        func windowTotalsEqualTheKernelsAndOutputsParse() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host)
            // 10-second buckets (levels are a setting), so a whole bucket falls inside half a minute of traffic;
            // veths count toward the host here, as the only interfaces of this namespace.
            try fleet.editDaemonConfig {
                $0 + """

                    [rollups]
                    levels = ["10s", "5m", "1h", "1d"]
                    [aggregation]
                    count = ["physical", "veth", "unknown"]
                    [labels.agent-1]
                    site = "lab"
                    [snapshots]
                    interval = "10s"
                    windows = ["last-1h", "today"]
                    scopes = ["fleet", "groups", "hosts", "interfaces"]
                    rank_by = ["bytes", "peak", "p95", "errors"]
                    [dashboards]
                    hour_interval = "10s"
                    keep = 3
                    [dashboard.lab]
                    title = "The lab"
                    scope = "group:site=lab"
                    panels = ["throughput", "top_interfaces", "errors"]

                    """
            }
            try fleet.startDaemon()
            let config = try fleet.writeAgentConfig("agent-1", interval: "1s", batch: "2s", exclude: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            let before = try network.kernelCounters()["npv0"]!
            try eventually("the idle counters are stored") {
                try fleet.samples("agent-1", "npv0").last?.counters.values == before
            }

            // 40 seconds at 40 Mbit/s, paced by a token bucket filter on the sending side.
            let rate = try network.limitRate(megabits: 40)
            var steady = [(time: Double, bytes: UInt64)]()
            // 200 MiB at 5 MB/s: about 42 seconds.
            try network.sendTraffic(bytes: 200 << 20) {
                // While it flows: the kernel's counter every 100 ms from 3 s in, for 27 s, so that at least one whole
                // 10-second bucket lies inside (with margin) wherever the buckets' boundaries fall. Each reading is
                // stamped with the middle of the time it took.
                Thread.sleep(forTimeInterval: 3)
                let end = Date().timeIntervalSince1970 + 27
                while Date().timeIntervalSince1970 < end {
                    let asked = Date().timeIntervalSince1970
                    let bytes = try network.kernelCounters()["npv0"]![0]
                    steady.append(((asked + Date().timeIntervalSince1970) / 2, bytes))
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
            // The kernel's counters are read again each time: a late packet of the transfer (a retransmission, the
            // connection's close) moves them after the transfer returns, and the agent stores that too.
            var after = try network.kernelCounters()["npv0"]!
            try eventually("the final counters are stored", timeout: 40) {
                after = try network.kernelCounters()["npv0"]!
                return try fleet.samples("agent-1", "npv0").last?.counters.values == after
            }
            #expect(after[0] - before[0] >= 200 << 20)

            // Totals of every window equal the kernel's deltas, to the byte, read with the CLI.
            let store = ["--store", fleet.storePath, "--config", fleet.directory + "/netpulsed.toml"]
            let traffic = try run(
                [Build.cli, "traffic", "--by", "hour", "--agent", "agent-1", "--interface", "npv0", "--format", "json"]
                    + store)
            let rows = try JSONSerialization.jsonObject(with: Data(traffic.utf8)) as! [[String: Any]]
            let hours = rows[0]["rows"] as! [[String: Any]]
            #expect(hours.map { ($0["rx_bytes"] as! NSNumber).uint64Value }.reduce(0, +) == after[0] - before[0])
            #expect(hours.map { ($0["tx_bytes"] as! NSNumber).uint64Value }.reduce(0, +) == after[8] - before[8])

            // Rates: each 10-second bucket fully inside the steady part is within 2 % of the kernel's rate over the
            // same ten seconds (its counter at the bucket's ends, interpolated between the readings 100 ms apart
            // around them). Against the average over the whole transfer it was 1 % on an idle machine, but the
            // sender is starved now and then when the other suites run beside this one, and its rate with it.
            let first = steady.first!
            let last = steady.last!
            let kernelRate = Double(last.bytes - first.bytes) / (last.time - first.time)
            // The token bucket bounds the rate from above; from below only a busy machine's CPU does.
            #expect(kernelRate < Double(rate) / 8 * 1.05, "tbf paced \(kernelRate) B/s")
            func kernelBytes(at time: Double) -> Double {
                let after = steady.firstIndex { $0.time >= time }!
                let (a, b) = (steady[after - 1], steady[after])
                return Double(a.bytes) + Double(b.bytes - a.bytes) * (time - a.time) / (b.time - a.time)
            }
            let from = Int64((first.time + 1) * 1_000)
            let to = Int64((last.time - 1) * 1_000)
            let buckets = try csvRows(
                try run(
                    [
                        Build.cli, "export", "--level", "10s", "--agent", "agent-1", "--interface", "npv0", "--format",
                        "csv",
                        "--from", RFC3339.text(from), "--to", RFC3339.text(to + 10_000),
                    ] + store))
            let inside = buckets.filter { Int64($0["start_ms"]!)! >= from && Int64($0["start_ms"]!)! + 10_000 <= to }
            #expect(inside.count >= 1)
            for bucket in inside {
                let start = Double(Int64(bucket["start_ms"]!)!) / 1_000
                let kernel = (kernelBytes(at: start + 10) - kernelBytes(at: start)) / 10
                let bucketRate = Double(bucket["rx_bytes"]!)! / 10
                #expect(
                    abs(bucketRate - kernel) / kernel < 0.02,
                    "bucket at \(bucket["start_utc"]!): \(bucketRate) B/s, the kernel's \(kernel) B/s")
            }

            // An outage: the daemon stops, traffic flows, the agent spools; the replay lands where it belongs.
            let revision = try blocking { try await fleet.store().totals().revision }
            #expect(fleet.daemon!.stop() == 0)
            let outageStart = Int64(Date().timeIntervalSince1970 * 1_000)
            network.removeRateLimit()
            try network.sendTraffic(bytes: 20 << 20)
            try eventually("batches spooled") { fleet.spooledFiles("agent-1").count >= 4 }
            let outageEnd = Int64(Date().timeIntervalSince1970 * 1_000)
            let final = try network.kernelCounters()["npv0"]!
            try fleet.startDaemon()
            try eventually("replayed", timeout: 30) {
                try fleet.samples("agent-1", "npv0").last?.counters.values == final
            }
            let replayed = try csvRows(
                try run(
                    [
                        Build.cli, "export", "--level", "10s", "--agent", "agent-1", "--interface", "npv0", "--format",
                        "csv",
                        "--from", RFC3339.text(outageStart), "--to", RFC3339.text(outageEnd),
                    ] + store))
            #expect(!replayed.isEmpty && replayed.allSatisfy { Int64($0["revision"]!)! > revision })
            #expect(replayed.allSatisfy { $0["interpolated_ms"] == "0" }, "the spool delivered every sample")
            let day = try csvRows(
                try run(
                    [
                        Build.cli, "traffic", "--by", "day", "--agent", "agent-1", "--interface", "npv0", "--format",
                        "csv",
                    ] + store))
            #expect(day.map { UInt64($0["rx_bytes"]!)! }.reduce(0, +) == final[0] - before[0])

            // Snapshots and every CLI output parse; the odd names survive.
            try eventually("a snapshot after the replay", timeout: 30) {
                let json = try String(
                    contentsOfFile: fleet.directory + "/netpulsed/snapshots/latest.json", encoding: .utf8)
                return json.contains("\"store_revision\":") && json.contains("a<b&c") && json.contains(#"p\"q>"#)
            }
            try run(["python3", Self.checker, "snapshot", fleet.directory + "/netpulsed/snapshots/latest.json"])
            let csv = try run(["python3", Self.checker, "csv", fleet.directory + "/netpulsed/snapshots/latest.csv"])
            #expect(csv.contains("csv ok"))
            let outputs = fleet.directory + "/outputs"
            try FileManager.default.createDirectory(atPath: outputs, withIntermediateDirectories: true)
            for (name, arguments) in [
                ("rates", ["rates"]), ("traffic", ["traffic", "--by", "5min", "--interface", "*"]),
                ("top", ["top", "--by", "bytes", "--last", "1h"]),
                ("top-p95", ["top", "--by", "p95", "--scope", "host"]),
                ("bill", ["bill", "--scope", "interface"]),
                ("export", ["export", "--level", "5m", "--interface", "*"]),
                ("raw", ["export", "--level", "raw", "--last", "10m"]),
            ] {
                for format in ["json", "csv"] {
                    let path = "\(outputs)/\(name).\(format)"
                    try run([Build.cli] + arguments + ["--format", format] + store).write(
                        toFile: path, atomically: true, encoding: .utf8)
                    try run(["python3", Self.checker, format, path])
                }
            }
            // Export has no table form: without --format it writes CSV.
            let exported = try run([Build.cli, "export", "--level", "5m", "--interface", "*"] + store)
            #expect(exported.hasPrefix("kind,series,start_utc,"), "\(exported.prefix(200))")
            let ratesCSV = try String(contentsOfFile: "\(outputs)/rates.csv", encoding: .utf8)
            #expect(ratesCSV.contains("agent-1,a<b&c,") && ratesCSV.contains("agent-1,\"p\"\"q>\","))
            // `top` ranks the interfaces of the scope `traffic` and `bill` take for the same options, and says which.
            let topJSON = try String(contentsOfFile: "\(outputs)/top.json", encoding: .utf8)
            #expect(topJSON.contains(#""counted_in":"fleet""#) && topJSON.contains("a<b&c"), "\(topJSON.prefix(300))")
            let hostTop = try run([Build.cli, "top", "--agent", "agent-1", "--last", "1h"] + store)
            #expect(hostTop.hasPrefix("top 10 interfaces of agent-1 by bytes, ") && hostTop.contains("a<b&c"))
            // The daemon keeps the dashboards fresh on its own: the fleet overview and the host's page, redrawn
            // every 10 s for the last hour, each file complete, `latest` the newest, three kept, an index naming
            // only files that are there; the odd interface names escaped in the SVG. (That no temporary file is
            // left behind is PublishingTests' to check: here a drawing may be under way at any moment.)
            let dashboards = fleet.directory + "/netpulsed/dashboards"
            try eventually("dashboards drawn after the replay", timeout: 40) {
                let page = try String(contentsOfFile: dashboards + "/host-agent-1-hour-latest.svg", encoding: .utf8)
                return page.contains("a&lt;b&amp;c") && page.contains("p&quot;q&gt;")
                    || page.contains("a&lt;b&amp;c") && page.contains("p\"q&gt;")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: dashboards)
            // The declared dashboard too, for every range; the index shows it.
            for range in ["hour", "day", "week", "month"] {
                #expect(names.contains("lab-\(range)-latest.svg"), "lab \(range) in \(names)")
            }
            #expect(try String(contentsOfFile: dashboards + "/index.html", encoding: .utf8).contains("The lab"))
            for stem in ["fleet", "host-agent-1"] {
                for range in ["hour", "day", "week", "month"] {
                    #expect(names.contains("\(stem)-\(range)-latest.svg"), "\(stem) \(range) in \(names)")
                    try run(["python3", Self.checker, "svg", "\(dashboards)/\(stem)-\(range)-latest.svg"])
                }
                // A listing made between a drawing and its pruning can see one more, so wait for the condition.
                try eventually("retention keeps 3 of \(stem)-hour") {
                    try FileManager.default.contentsOfDirectory(atPath: dashboards)
                        .filter { $0.hasPrefix("\(stem)-hour-2") }.count <= 3
                }
            }
            #expect(names.filter { $0.hasPrefix("fleet-hour-2") }.count >= 2, "drawn again and again: \(names)")
            // A drawing between reading the index and looking for its files may prune one it named: try again.
            try eventually("index.html names only files that are there", timeout: 5) {
                (try? run(["python3", Self.checker, "index", dashboards + "/index.html"])) != nil
            }
            // In a real browser: the index and the latest pages render with no console error, no failed load and
            // not blank (a drawing may replace a file while Chromium reads it, so a failure is tried once more).
            let pages = ["index.html", "fleet-hour-latest.svg", "host-agent-1-day-latest.svg"].map {
                dashboards + "/" + $0
            }
            try eventually("the dashboards render in Chromium", timeout: 90, interval: 1) {
                (try? run(["python3", Self.browser] + pages)) != nil
            }
            let snapshot = try run([Build.cli, "snapshot", "--format", "json"] + store)
            try snapshot.write(toFile: "\(outputs)/snapshot.json", atomically: true, encoding: .utf8)
            try run(["python3", Self.checker, "snapshot", "\(outputs)/snapshot.json"])
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
            #expect(agent.stop() == 0)
        }

        /// Bad input gets one line saying what is wrong, and a non-zero exit.
        @Test func badQueriesAreRefusedWithOneLine() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 3 }
            let store = ["--store", fleet.storePath, "--config", fleet.directory + "/netpulsed.toml"]
            let cases: [([String], String)] = [
                (["top", "--group", "site=nowhere"], "unknown group 'site=nowhere'"),
                (["traffic", "--agent", "ghost"], "unknown agent 'ghost'"),
                (["traffic", "--from", "2026-11-02", "--to", "2026-11-01"], "is not before --to"),
                (["top", "--last", "soon"], "--last soon: not a duration"),
                (["top", "--from", "yesterday"], "--from yesterday: not a time"),
                (["export", "--level", "7q"], "--level 7q: use raw, 1m, 5m, 1h or 1d"),
                (["bill", "--period", "someday"], "--period someday"),
                (["traffic", "--window", "fortnight"], "--window fortnight: unknown"),
                // Options a command would ignore are refused, naming what to use instead.
                (["rates", "--last", "1h"], "--last 1h: does not apply to rates: it shows each interface's rate now"),
                (
                    ["bill", "--window", "today"],
                    "--window today: does not apply to bill: a bill covers a billing period"
                ),
            ]
            for (arguments, message) in cases {
                let process = try Daemonized([Build.cli] + arguments + store, log: fleet.directory + "/cli.log")
                process.process.waitUntilExit()
                #expect(process.process.terminationStatus != 0, "\(arguments)")
                let output = process.output
                #expect(output.contains(message), "\(arguments): \(output)")
                #expect(output.split(separator: "\n").filter { !$0.isEmpty }.count <= 2, "\(arguments): \(output)")
                try? FileManager.default.removeItem(atPath: fleet.directory + "/cli.log")
            }
            #expect(agent.stop() == 0)
        }

        /// A CSV text as rows keyed by its header (RFC 4180, via Python's csv module, not our own writer).
        func csvRows(_ text: String) throws -> [[String: String]] {
            let path = NSTemporaryDirectory() + "netpulse-csv-\(UUID().uuidString).csv"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let json = try run([
                "python3", "-c",
                "import csv, json, sys; print(json.dumps(list(csv.DictReader(open(sys.argv[1], newline='')))))", path,
            ])
            return try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [[String: String]]
        }
    }
}
