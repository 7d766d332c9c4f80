import Foundation
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseQuery
import PulseSettings
import PulseStore
import PulseStoreSQLite

/// Remote write from a large store to a real Prometheus (Debian's 2.42 with its remote-write receiver, started
/// here on loopback): the catch-up of a new receiver (the last hour of every interface) and then one pass in the
/// steady state (one new bucket of every interface), each timed in its parts, and what Prometheus holds afterwards
/// checked. The store is the one `query-store` made; its forward state is cleared at the end, so the other
/// benchmarks that use it are not affected.
enum RemoteWriteBench {
    static func run(config path: String, prometheus: String) async throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-remote-write-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = 19_000 + Int(getpid() % 1_000)
        let server = try startPrometheus(prometheus, directory: directory, port: port)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try await waitUntilReady(port: port)

        try
            (try String(contentsOfFile: path, encoding: .utf8)
            + "\n[remote_write]\nurl = \"http://127.0.0.1:\(port)/api/v1/write\"\ndelay = \"0s\"\nbackfill = \"1h\"\n")
            .write(toFile: directory + "/netpulsed.toml", atomically: true, encoding: .utf8)
        let config = try DaemonConfig.load(path: directory + "/netpulsed.toml")
        let store = try SQLiteStore(path: config.storePath, settings: config.store)
        defer { _ = try? store.stopForwarding() }
        _ = try store.stopForwarding()
        let end = try await AlertReportBench.dataEnd(store)
        guard let level = config.store.levels.min() else { throw QueryError("the store keeps no rollups") }
        let interfaces = try await Catalogue.load(from: store, rules: config.store.rules).interfaces.count

        print(
            "remote write to Prometheus 2.42 on loopback (one sender, requests of \(config.remoteWrite.maximumSamples) samples, \(interfaces) interfaces, \(level) buckets, 4 series each):"
        )
        let catchUp = try await RemoteWriteForwarding.once(store: store, config: config, now: end - level.width)
        line("a new receiver: the last hour", catchUp)
        let steady = try await RemoteWriteForwarding.once(store: store, config: config, now: end)
        line("the next pass: one bucket each", steady)
        let held = try await query(port: port, "count(last_over_time(netpulse_interface_receive_bytes_total[1d]))")
        print("  series Prometheus holds      \(held) of \(interfaces) interfaces' receive counters")
    }

    static func line(_ what: String, _ report: RemoteWriteService.Report) {
        let seconds = { (duration: Duration) in
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let total = seconds(report.reading + report.sending + report.saving)
        print(
            "  \(what.padding(toLength: 30, withPad: " ", startingAt: 0)) \(report.sent) samples in \(report.requests) requests, \(report.refused) refused: \(Units.fixed(Double(report.sent) / max(total, 1e-9), decimals: 0)) samples/s (read \(Units.fixed(seconds(report.reading), decimals: 2)) s, send \(Units.fixed(seconds(report.sending), decimals: 2)) s, save \(Units.fixed(seconds(report.saving), decimals: 2)) s)"
        )
    }

    /// Prometheus with its remote-write receiver on loopback, its data in `directory/data`, scraping nothing.
    static func startPrometheus(_ binary: String, directory: String, port: Int) throws -> Process {
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try "global:\n  scrape_interval: 1m\nscrape_configs: []\n".write(
            toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: binary)
        server.arguments = [
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--web.enable-remote-write-receiver",
        ]
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        server.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try server.run()
        return server
    }

    static func waitUntilReady(port: Int) async throws {
        for _ in 0..<300 {
            if (try? await get(port: port, path: "/-/ready")) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw QueryError("Prometheus did not become ready on port \(port)")
    }

    /// The value of an instant query that yields one series, as Prometheus prints it.
    static func query(port: Int, _ expression: String) async throws -> String {
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
        let body = try await get(port: port, path: "/api/v1/query?query=\(encoded)")
        guard let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
            let pair = result.first?["value"] as? [Any], let value = pair.last as? String
        else { return "none (\(body.prefix(200)))" }
        return value
    }

    /// A GET to Prometheus on loopback, by curl.
    static func get(port: Int, path: String) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sf", "http://127.0.0.1:\(port)\(path)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw QueryError("GET \(path) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}
