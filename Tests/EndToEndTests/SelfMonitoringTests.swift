import Foundation
import PulseStore
import TestSupport
import Testing

extension EndToEnd {
    /// netpulsed's own metrics (`[metrics] listen`), scraped by a real Prometheus: Debian's 2.42, unpacked (not
    /// installed, which would start its service) by `scripts/test.sh`.
    @Suite(.serialized) struct SelfMonitoringTests {
        static let tools = Build.root + "/.build/tools/prometheus/usr/bin"
        static let available = FileManager.default.isExecutableFile(atPath: tools + "/prometheus")

        /// An agent streams; Prometheus scrapes the daemon every second. What Prometheus holds for the batches and
        /// values stored equals what the store holds, every acknowledged batch has its latency recorded, the
        /// exposition passes `promtool check metrics`, and the endpoint answers nothing but `/metrics`.
        @Test(
            .enabled(if: available, "run scripts/test.sh: it unpacks Debian's Prometheus into .build/tools"),
            .timeLimit(.minutes(2)))
        func prometheusSeesWhatTheDaemonStored() throws {
            let fleet = try Fleet()
            let metricsPort = try freePort()
            try fleet.editDaemonConfig { $0 + "\n[metrics]\nlisten = \"127.0.0.1:\(metricsPort)\"\n" }
            try fleet.startDaemon()
            let endpoint = "http://127.0.0.1:\(metricsPort)/metrics"
            try eventually("metrics served") { fleet.daemon!.output.contains("metrics: serving \(endpoint)") }
            let prometheus = try Prometheus(scraping: "127.0.0.1:\(metricsPort)", in: fleet.directory)
            defer { prometheus.stop() }

            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "300ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            try eventually("Prometheus saw the agent connected", timeout: 30) {
                try prometheus.value("netpulse_agents_connected") == 1
            }
            try eventually("some batches stored", timeout: 30) { try fleet.storedTotals().batches >= 10 }
            #expect(agent.stop() == 0)

            // The agent is gone: the counters stop where the store stopped.
            let stored = try fleet.storedTotals()
            try eventually("Prometheus holds the store's counts", timeout: 30) {
                try prometheus.value("netpulse_batches_stored_total") == Double(stored.batches)
                    && prometheus.value("netpulse_values_stored_total") == Double(stored.values)
            }
            let duplicates = try prometheus.value("netpulse_batches_duplicate_total")
            #expect(
                try prometheus.value("netpulse_ack_latency_seconds_count") == Double(stored.batches) + duplicates)
            #expect(try prometheus.value("netpulse_commit_batches_sum") == Double(stored.batches) + duplicates)
            try eventually("Prometheus saw the agent leave", timeout: 30) {
                try prometheus.value("netpulse_agents_connected") == 0
            }
            #expect(try prometheus.value("netpulse_store_size_bytes") > 0)
            #expect(try prometheus.value("netpulse_store_writable") == 1)
            #expect(try prometheus.value("process_resident_memory_bytes") > 1_000_000)
            #expect(try prometheus.value(#"up{job="netpulsed"}"#) == 1)

            // The text itself, as Prometheus' own checker reads it; and only /metrics is served.
            let exposition = try run(["curl", "-sS", "--fail", endpoint])
            let check = try Prometheus.check(exposition, in: fleet.directory)
            #expect(check.status == 0, "promtool check metrics:\n\(check.output)\n\(exposition)")
            #expect(exposition.contains(#"netpulse_build_info{version=""#))
            // With SQLite the one daemon always leads.
            #expect(gauge("netpulse_leader", in: exposition) == 1, "\(exposition)")
            let missing = try run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", endpoint + "x"])
            #expect(missing == "404")
            let posted = try run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", endpoint])
            #expect(posted == "405")
            let head = try run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-I", endpoint])
            #expect(head == "200")
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
        }

        /// An address already taken is said at start, with the setting to change, and the daemon does not run
        /// half-configured.
        @Test(.timeLimit(.minutes(1)))
        func aTakenMetricsAddressStopsTheStartWithTheReason() throws {
            let fleet = try Fleet()
            let taken = try HeldPort()
            defer { taken.close() }
            try fleet.editDaemonConfig { $0 + "\n[metrics]\nlisten = \"127.0.0.1:\(taken.port)\"\n" }
            let daemon = try Daemonized(
                [Build.netpulsed, "--config", "\(fleet.directory)/netpulsed.toml"],
                log: "\(fleet.directory)/netpulsed.log", netns: nil)
            try eventually("netpulsed gave up", timeout: 30) { !daemon.isRunning }
            #expect(daemon.stop() != 0)
            #expect(
                daemon.output.contains("cannot serve metrics on 127.0.0.1:\(taken.port) ([metrics] listen)"),
                "\(daemon.output)")
        }

        /// A daemon that cannot listen for agents exits with the reason, its metrics endpoint (already serving)
        /// closed with it rather than keeping the process alive.
        @Test(.timeLimit(.minutes(1)))
        func aDaemonThatCannotListenExitsMetricsAndAll() throws {
            let fleet = try Fleet()
            let taken = try HeldPort()
            defer { taken.close() }
            let metricsPort = try freePort()
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "127.0.0.1:\(fleet.port)", with: "127.0.0.1:\(taken.port)")
                    + "\n[metrics]\nlisten = \"127.0.0.1:\(metricsPort)\"\n"
            }
            let daemon = try Daemonized(
                [Build.netpulsed, "--config", "\(fleet.directory)/netpulsed.toml"],
                log: "\(fleet.directory)/netpulsed.log", netns: nil)
            try eventually("netpulsed gave up", timeout: 30) { !daemon.isRunning }
            #expect(daemon.stop() != 0)
            #expect(daemon.output.contains("cannot listen on 127.0.0.1:\(taken.port)"), "\(daemon.output)")
        }
    }
}

/// A TCP port on 127.0.0.1 held by a listening socket of the test's own until ``close()``.
struct HeldPort {
    let descriptor: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 1) == 0 else { throw CommandFailure(description: "bind: \(errno)") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}

extension Fleet {
    /// Batches and values in the store, read from its file.
    func storedTotals() throws -> IngestTotals {
        let store = try store()
        return try blocking { try await store.totals() }
    }
}

/// A throwaway Prometheus on loopback (in `netns` when given): it scrapes `target` every second, and takes
/// remote write at `/api/v1/write` when `receiving` is set.
final class Prometheus {
    let process: Daemonized
    let port: Int
    let netns: String?

    init(scraping target: String? = nil, receiving: Bool = false, in directory: String, netns: String? = nil) throws {
        port = try freePort()
        self.netns = netns
        let config = "\(directory)/prometheus.yml"
        try """
        global:
          scrape_interval: 1s
          scrape_timeout: 900ms
        scrape_configs:
        \(target.map { "  - job_name: netpulsed\n    static_configs:\n      - targets: [\"\($0)\"]" } ?? "  []")
        """.write(toFile: config, atomically: true, encoding: .utf8)
        process = try Daemonized(
            [
                EndToEnd.SelfMonitoringTests.tools + "/prometheus", "--config.file=\(config)",
                "--storage.tsdb.path=\(directory)/prometheus-data", "--web.listen-address=127.0.0.1:\(port)",
            ] + (receiving ? ["--web.enable-remote-write-receiver"] : []), log: "\(directory)/prometheus.log",
            netns: netns)
        try eventually("Prometheus ready", timeout: 30) {
            try self.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(self.port)/-/ready"])
                == "200"
        }
    }

    /// curl in Prometheus' namespace.
    func curl(_ arguments: [String]) throws -> String {
        try run((netns.map { ["ip", "netns", "exec", $0] } ?? []) + ["curl"] + arguments)
    }

    /// The value of an instant query that yields one series; throws when it yields none or several.
    func value(_ query: String) throws -> Double {
        let answer = try curl([
            "-sS", "--fail", "-G", "http://127.0.0.1:\(port)/api/v1/query", "--data-urlencode", "query=\(query)",
        ])
        guard
            let json = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
            result.count == 1, let pair = result[0]["value"] as? [Any], pair.count == 2,
            let text = pair[1] as? String, let value = Double(text)
        else { throw CommandFailure(description: "\(query): \(answer)") }
        return value
    }

    /// `promtool check metrics` on an exposition: its exit status and what it said.
    static func check(_ exposition: String, in directory: String) throws -> (status: Int32, output: String) {
        let file = "\(directory)/scrape.txt"
        try exposition.write(toFile: file, atomically: true, encoding: .utf8)
        let finished = try Command.runToEnd(
            "/bin/sh",
            ["-c", "\"$0\" check metrics < \"$1\" 2>&1", EndToEnd.SelfMonitoringTests.tools + "/promtool", file])
        return (finished.status, finished.output)
    }

    func stop() { _ = process.stop() }
}
