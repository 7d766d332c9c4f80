import Foundation
import NIOCore
import PulseCore
import PulseDaemon
import PulseStore
import PulseStorePostgres
import PulseStoreSQLite
import TestSupport

/// Saturated ingest into one PostgreSQL database (a cluster of its own, PostgreSQL's default durability: every
/// commit fsynced) from 1, 2 and 3 daemons, beside one daemon on SQLite and the same fleet's samples pushed into
/// Prometheus' remote-write receiver (``PrometheusReceiverBench``), in one run: values per second, ack latency, and
/// CPU-seconds per million values for each process. On 2 cores more daemons show contention, not scaling: the cost
/// per value is what a capacity plan is built from.
enum PostgresBench {
    static func run(daemonBinary: String, prometheus: String, agents agentCount: Int, seconds: Int) throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-pg-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (names, contexts) = try IngestBench.certificates(agents: agentCount, directory: directory)
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }
        let version = try server.psql("postgres", "SHOW server_version").trimmingCharacters(in: .whitespacesAndNewlines)
        print(
            "\(agentCount) agents × \(IngestBench.interfaces) interfaces, 10-second batches of \(IngestBench.valuesPerBatch) counter values, saturated for \(seconds) s each;"
        )
        print("PostgreSQL \(version) on this machine, its default settings (fsync and synchronous_commit on)\n")
        // Enough for SQLite's maximum (about 18 million values a second here) through the warm-up and measurement.
        let batchesPerAgent = max(2, 20_000_000 * (seconds + 5) / (agentCount * IngestBench.valuesPerBatch))
        let first =
            WallClock.system.now() / 1_000 * 1_000 - Int64(batchesPerAgent * IngestBench.ticksPerBatch + 60) * 1_000
        print("preparing \(agentCount) agents × \(batchesPerAgent) batches …")
        let frames = IngestBench.prepare(names: names, batches: batchesPerAgent, firstTick: first)
        print(
            "Saturated: every agent keeps 32 batches in flight, so acks wait behind the whole fleet's queue; the ack latency"
        )
        print("that matters is at the real pace (each agent a batch every 10 s: 160,000 values/s), measured after.\n")
        print(
            "store        daemons  saturated values/s  CPU-s per million values (each daemon; PostgreSQL)  real-pace ack p50 / p99 / max  stored / acknowledged"
        )
        for (index, (kind, count)) in [("SQLite", 1), ("PostgreSQL", 1), ("PostgreSQL", 2), ("PostgreSQL", 3)]
            .enumerated()
        {
            let url = kind == "PostgreSQL" ? try server.createDatabase("bench\(index)") : nil
            let daemons = try (0..<count).map { number in
                try Daemon(
                    binary: daemonBinary, directory: "\(directory)/run\(index)-\(number)", ca: directory + "/ca",
                    extra: url.map { "[store]\npostgresql = \"\($0)\"" } ?? "")
            }
            let run = try IngestBench.offered(
                daemons: daemons, names: names, contexts: contexts, generation: 0, seconds: seconds, warmUp: 3,
                also: url == nil ? { 0 } : postgresCPUSeconds,
                stored: url == nil ? IngestBench.storedBatches("\(directory)/run\(index)-0/netpulse.db") : { nil }
            ) { .prepared(frames[$0]) }
            // The daemons commit what is still queued from the saturated run before the real pace is measured.
            let store: any MetricStore =
                if let url {
                    try blocking { try await PostgresStore(location: PostgresLocation(url: url), access: .reader) }
                } else {
                    try SQLiteStore(path: "\(directory)/run\(index)-0/netpulse.db", readOnly: true)
                }
            var previous = -1
            while true {
                let values = Int(try blocking { try await store.totals().values })
                if values == previous { break }
                previous = values
                Thread.sleep(forTimeInterval: 2)
            }
            // The real pace, on streams of their own after the prepared ones (whose ticks end a minute ago).
            let paced = try IngestBench.offered(
                daemons: daemons, names: names, contexts: contexts, generation: 1, seconds: 15, warmUp: 12
            ) { index in .paced(offset: Int64(index) * 10_000 / Int64(agentCount)) }
            for daemon in daemons { daemon.stop() }
            // SQLite's journal acknowledges ahead of the store by up to a queue: its rate is the store's.
            let millions = run.sustained * run.elapsed * Double(IngestBench.valuesPerBatch) / 1e6
            let perDaemon = run.cpuSeconds.map { Units.fixed($0 / millions, decimals: 2) }.joined(separator: ", ")
            let database = url == nil ? "" : "; \(Units.fixed(run.alsoCPUSeconds / millions, decimals: 2))"
            let stored = Int(try blocking { try await store.totals().values })
            let acknowledged = (run.acknowledged + paced.acknowledged) * IngestBench.valuesPerBatch
            func column(_ text: String, _ width: Int) -> String {
                text.padding(toLength: width, withPad: " ", startingAt: 0)
            }
            print(
                column(kind, 12) + " " + column("\(count)", 8) + " "
                    + column(Units.fixed(run.sustained * Double(IngestBench.valuesPerBatch), decimals: 0), 19) + " "
                    + column(perDaemon + database, 51) + " " + column(IngestBench.latencyText(paced.latencies), 30)
                    + " "
                    + "\(stored) / \(acknowledged)\(stored >= acknowledged ? "" : " ← MISSING")"
                    + (run.exhausted ? " (an agent ran out of batches)" : "")
                    + (run.errors + paced.errors > 0 ? " errors \(run.errors + paced.errors)" : ""))
        }
        server.stop()

        let receiver = try PrometheusReceiverBench.run(prometheus: prometheus, names: names, seconds: seconds)
        let millions = Double(receiver.samples) / 1e6
        print(
            "\nPrometheus \(prometheusVersion(prometheus)) remote-write receiver, the same fleet's samples (one request per agent batch, 8 senders):"
        )
        print(
            "  \(Units.fixed(Double(receiver.samples) / receiver.seconds, decimals: 0)) samples/s saturated; "
                + "\(Units.fixed(receiver.cpuSeconds / max(millions, 1e-9), decimals: 2)) CPU-s per million samples (Prometheus); "
                + "request latency p50 / p99 / max \(IngestBench.latencyText(receiver.latencies)); "
                + "\(receiver.seriesHeld) receive-bytes series held of \(agentCount * IngestBench.interfaces)"
                + (receiver.refusedRequests > 0
                    ? "; \(receiver.refusedRequests) requests refused, the first: \(receiver.firstRefusal ?? "")" : "")
                + (receiver.exhausted ? " (a sender ran out of requests)" : ""))
        if receiver.samples == 0, let reason = receiver.firstRefusal { print("  failed: \(reason)") }
    }

    /// The receiver's version, as `prometheus --version` prints it on its first line.
    static func prometheusVersion(_ binary: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        guard (try? process.run()) != nil else { return "?" }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output.split(separator: " ").dropFirst(2).first.map(String.init) ?? "?"
    }

    /// CPU seconds of every `postgres` process on the machine (the benchmark's cluster is the only one running):
    /// the server, and the backends of the daemons' connections, which live as long as the daemons.
    static func postgresCPUSeconds() -> Double {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        return pids.reduce(0) { total, pid in
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                name.hasPrefix("postgres"), let stat = ProcessStat(pid: pid)
            else { return total }
            return total + stat.cpuSeconds
        }
    }
}
