import Foundation
import PulseCore

// netpulse-bench: the figures behind docs/benchmarks.md. Run through scripts/bench.sh (release build).
//   netpulse-bench wire
//   netpulse-bench ingest DAEMON_BINARY [AGENTS] [SECONDS]
//   netpulse-bench connections DAEMON_BINARY [CONNECTIONS]  (memory per connection, a reconnect storm, s_server)
//   netpulse-bench store [INTERFACES] [SECONDS]           (the store's ingest alone, in process)
//   netpulse-bench postgres DAEMON_BINARY PROMETHEUS_BINARY [AGENTS] [SECONDS]
//                                                        (1, 2, 3 daemons on one PostgreSQL, beside SQLite and
//                                                        Prometheus' remote-write receiver)
//   netpulse-bench fill DB INTERFACES HOURS              (a store for scripts/bench-size.py to weigh)
//   netpulse-bench query-store DIR INTERFACES DAYS [FINE_DAYS]  (a store for the query benchmarks, bulk loaded)
//   netpulse-bench render CONFIG [RUNS]                   (drawing the default dashboards from a store)
//   netpulse-bench usage PID SECONDS SAMPLES_PER_SECOND   (CPU per sample and peak RSS of a running process)
//   netpulse-bench remote-write CONFIG PROMETHEUS_BINARY  (remote write from a query-store store to Prometheus)
//   netpulse-bench bounds DAEMON_BINARY [AGENTS] [QUEUE_MIB …]  (peak memory under the largest batches)
let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "wire":
    WireSize.report()
case "ingest" where arguments.count >= 3:
    let agents = arguments.count > 3 ? Int(arguments[3]) ?? 625 : 625
    let seconds = arguments.count > 4 ? Int(arguments[4]) ?? 30 : 30
    do {
        try IngestBench.run(
            daemonBinary: arguments[2], agents: agents, seconds: seconds,
            pacedSeconds: Int(ProcessInfo.processInfo.environment["BENCH_PACED_SECONDS"] ?? "") ?? 60)
    } catch {
        print("ingest benchmark failed: \(error)")
        exit(1)
    }
case "postgres" where arguments.count >= 4:
    do {
        try PostgresBench.run(
            daemonBinary: arguments[2], prometheus: arguments[3],
            agents: arguments.count > 4 ? Int(arguments[4]) ?? 625 : 625,
            seconds: arguments.count > 5 ? Int(arguments[5]) ?? 20 : 20)
    } catch {
        print("postgres benchmark failed: \(error)")
        exit(1)
    }
case "ingest-render" where arguments.count >= 4:
    do {
        try IngestBench.renderImpact(
            daemonBinary: arguments[2], store: arguments[3],
            agents: arguments.count > 4 ? Int(arguments[4]) ?? 625 : 625,
            seconds: arguments.count > 5 ? Int(arguments[5]) ?? 60 : 60)
    } catch {
        print("ingest-render benchmark failed: \(error)")
        exit(1)
    }
case "bounds" where arguments.count >= 3:
    do {
        let queues = arguments.dropFirst(4).compactMap { Int($0) }
        try BoundsBench.run(
            daemonBinary: arguments[2], queues: queues.isEmpty ? [16, 64, 256] : queues,
            agents: arguments.count > 3 ? Int(arguments[3]) ?? 8 : 8)
    } catch {
        print("bounds benchmark failed: \(error)")
        exit(1)
    }
case "connections" where arguments.count >= 3:
    do {
        try ConnectionBench.run(
            daemonBinary: arguments[2], connections: arguments.count > 3 ? Int(arguments[3]) ?? 10_000 : 10_000)
    } catch {
        print("connections benchmark failed: \(error)")
        exit(1)
    }
case "store":
    let interfaces = arguments.count > 2 ? Int(arguments[2]) ?? 10_000 : 10_000
    let seconds = arguments.count > 3 ? Int(arguments[3]) ?? 60 : 60
    do {
        try blocking { try await StoreBench.run(interfaces: interfaces, seconds: seconds) }
    } catch {
        print("store benchmark failed: \(error)")
        exit(1)
    }
case "fill" where arguments.count >= 5:
    do {
        try blocking {
            try await StoreBench.fill(
                path: arguments[2], interfaces: Int(arguments[3]) ?? 32, hours: Int(arguments[4]) ?? 96)
        }
    } catch {
        print("cannot fill the store: \(error)")
        exit(1)
    }
case "query-store" where arguments.count >= 5:
    do {
        try QueryBench.makeStore(
            directory: arguments[2], interfaces: Int(arguments[3]) ?? 10_000, days: Int(arguments[4]) ?? 30,
            fineDays: arguments.count > 5 ? Int(arguments[5]) : nil)
    } catch {
        print("cannot make the store: \(error)")
        exit(1)
    }
case "remote-write" where arguments.count >= 4:
    do {
        try blocking { try await RemoteWriteBench.run(config: arguments[2], prometheus: arguments[3]) }
    } catch {
        print("remote-write benchmark failed: \(error)")
        exit(1)
    }
case "render" where arguments.count >= 3:
    do {
        let runs = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3
        try blocking { try await RenderBench.run(config: arguments[2], runs: runs) }
    } catch {
        print("render benchmark failed: \(error)")
        exit(1)
    }
case "alerts" where arguments.count >= 3:
    do {
        try blocking {
            try await AlertReportBench.alerts(
                config: arguments[2], runs: Int(ProcessInfo.processInfo.environment["BENCH_ALERT_ROUNDS"] ?? "") ?? 5)
        }
    } catch {
        print("alert benchmark failed: \(error)")
        exit(1)
    }
case "report" where arguments.count >= 3:
    do {
        try blocking { try await AlertReportBench.report(config: arguments[2], runs: 3) }
    } catch {
        print("report benchmark failed: \(error)")
        exit(1)
    }
case "usage" where arguments.count >= 5:
    guard let pid = Int32(arguments[2]), let seconds = Double(arguments[3]), let rate = Double(arguments[4]) else {
        print("usage: netpulse-bench usage PID SECONDS SAMPLES_PER_SECOND")
        exit(2)
    }
    do {
        let before = try ProcessUsage(pid: pid)
        Thread.sleep(forTimeInterval: seconds)
        let after = try ProcessUsage(pid: pid)
        let cpu = after.cpuSeconds - before.cpuSeconds
        print(
            "  CPU                     \(Units.fixed(cpu / seconds * 100, decimals: 3))% of one core over \(Int(seconds)) s"
        )
        print("  CPU per sample          \(Units.fixed(cpu / (seconds * rate) * 1e6, decimals: 0)) µs")
        print("  peak RSS                \(Units.formatBytes(Double(after.peakRSS)))")
    } catch {
        print("cannot read /proc/\(pid): \(error)")
        exit(1)
    }
default:
    print(
        "usage: netpulse-bench wire | ingest DAEMON [AGENTS] [SECONDS] | store [INTERFACES] [SECONDS] | fill DB INTERFACES HOURS | query-store DIR INTERFACES DAYS [FINE_DAYS] | render CONFIG [RUNS] | usage PID SECONDS SAMPLES_PER_SECOND"
    )
    exit(2)
}
