import Foundation
import PulseCore

// netpulse-bench: the figures behind docs/benchmarks.md. Run through scripts/bench.sh (release build).
//   netpulse-bench wire
//   netpulse-bench ingest DAEMON_BINARY [AGENTS] [SECONDS]
//   netpulse-bench usage PID SECONDS SAMPLES_PER_SECOND   (CPU per sample and peak RSS of a running process)
let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "wire":
    WireSize.report()
case "ingest" where arguments.count >= 3:
    let agents = arguments.count > 3 ? Int(arguments[3]) ?? 200 : 200
    let seconds = arguments.count > 4 ? Int(arguments[4]) ?? 20 : 20
    do {
        try IngestBench.run(
            daemonBinary: arguments[2], agents: agents, seconds: seconds,
            batchesPerAgent: Int(ProcessInfo.processInfo.environment["BENCH_BATCHES"] ?? "") ?? 1000)
    } catch {
        print("ingest benchmark failed: \(error)")
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
    print("usage: netpulse-bench wire | ingest DAEMON [AGENTS] [SECONDS] | usage PID SECONDS SAMPLES_PER_SECOND")
    exit(2)
}
