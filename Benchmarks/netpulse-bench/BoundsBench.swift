import Foundation
import PulseCore
import TestSupport

/// The most memory certified agents can make a release `netpulsed` hold (docs/reliability.md, "Bounds"): agents
/// send the largest batches the protocol allows (1,024 interfaces × 64 ticks, 65,536 samples, about 0.8 MB on the
/// wire and 5 MB once decoded) as fast as the daemon takes them, far faster than its applier can keep up with, until
/// it has not acknowledged one for 5 s (its queue and journal backlog are full and its connections stopped reading).
/// One run per `[ingest] queue_bytes`, each against a fresh store, with as many agents as `agents`; the daemon's
/// other settings are its defaults. Reported: its resident memory at start and its peak (`VmHWM`).
///
/// What it leaves out: every batch is the same template with its own sequence, order and time (what the daemon
/// holds per batch does not depend on counter values, but compression in the journal does: constant steps compress
/// better than real ones); the agents run on the same two cores.
enum BoundsBench {
    static func run(daemonBinary: String, queues: [Int], agents agentCount: Int) throws {
        let directory = NSTemporaryDirectory() + "netpulse-bench-bounds-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (names, _) = try IngestBench.certificates(agents: agentCount, directory: directory, prefix: "loader")
        let mebibyte = 1 << 20
        print("largest batches (65,536 samples, about 5 MB decoded) from \(agentCount) agents, as fast as taken:")
        print(
            "  queue_bytes   acknowledged   netpulsed RSS at start   peak    peak − start   (peak − start) / queue_bytes"
        )
        for queueMiB in queues {
            let state = directory + "/queue-\(queueMiB)"
            let daemon = try Daemon(
                binary: daemonBinary, directory: state, ca: directory + "/ca",
                extra: "[daemon]\nstate_directory = \"\(state)\"\n[ingest]\nqueue_bytes = \"\(queueMiB)MiB\"")
            defer { daemon.stop() }
            let start = try ProcessStatus.bytes(daemon.pid, "VmRSS")
            // Enough to fill the queue, the journal's backlog and a group being applied several times over.
            let batches = max(50, queueMiB * 5 / agentCount)
            let port = daemon.port
            let acknowledged = try blocking {
                try await withThrowingTaskGroup(of: Int.self) { tasks in
                    for (index, name) in names.enumerated() {
                        tasks.addTask {
                            try await LargeBatchSender(
                                agent: name, directory: directory, port: port, stream: UInt64(index + 1)
                            ).run(batches: batches)
                        }
                    }
                    return try await tasks.reduce(0, +)
                }
            }
            guard daemon.process.isRunning else { throw BenchError("netpulsed exited during the run") }
            let peak = try ProcessStatus.bytes(daemon.pid, "VmHWM")
            let grown = Double(peak - start) / Double(mebibyte)
            print(
                "  \(pad("\(queueMiB) MiB", 12))  \(pad("\(acknowledged) of \(batches * agentCount)", 13))  \(pad("\(start / mebibyte) MiB", 23))  \(pad("\(peak / mebibyte) MiB", 6))  \(pad("\(Int(grown)) MiB", 13))  \(Units.fixed(grown / Double(queueMiB), decimals: 2))"
            )
        }
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
