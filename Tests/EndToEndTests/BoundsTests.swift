import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// What certified agents can make the daemon hold in memory (`docs/reliability.md`, "Bounds").
    @Suite(.serialized) struct BoundsTests {
        /// Eight agents send batches of 65,536 samples each (about 5 MB once decoded) as fast as the daemon takes
        /// them, far more than its applier can keep up with: the ingest queue and the batches journaled and waiting
        /// to be applied are bounded by their bytes (`[ingest] queue_bytes`, 16 MiB here), connections stop
        /// reading, and the daemon's peak resident memory stays within what docs/reliability.md says. Before, both
        /// were bounded by a count of batches only (8,192 each): the daemon acknowledged from its journal and held
        /// every batch the agents sent.
        ///
        /// `NETPULSE_BOUNDS_QUEUE_MIB` and `NETPULSE_BOUNDS_AGENTS` measure other sizes (docs/reliability.md gives the
        /// default's figure, 256 MiB with eight agents).
        @Test(.timeLimit(.minutes(5)))
        func largeBatchesFillTheQueueToItsBytesAndNoFurther() async throws {
            let environment = ProcessInfo.processInfo.environment
            let queueMiB = Int(environment["NETPULSE_BOUNDS_QUEUE_MIB"] ?? "") ?? 16
            // Eight, as in the benchmark: with four, two connections could each get an acknowledgement every few
            // seconds from a fast enough applier and go on for minutes, though the daemon held no more.
            let agents = (1...(Int(environment["NETPULSE_BOUNDS_AGENTS"] ?? "") ?? 8)).map { "loader-\($0)" }
            // Enough to fill the queue, the backlog and a group being applied several times over.
            let batches = max(50, queueMiB * 5 / agents.count)
            let fleet = try Fleet(agents: agents)
            try fleet.editDaemonConfig { $0 + "\n[ingest]\nqueue_bytes = \"\(queueMiB)MiB\"\n" }
            try fleet.startDaemon()
            let pid = fleet.daemon!.pid
            let baseline = try ProcessStatus.bytes(pid, "VmRSS")
            let offered: Int
            do {
                offered = try await Self.send(agents, fleet, batches: batches)
            } catch {
                Issue.record("\(error); netpulsed:\n\(fleet.daemon!.output.suffix(3_000))")
                return
            }
            let peak = try ProcessStatus.bytes(pid, "VmHWM")
            let mebibyte = 1 << 20
            print(
                "large batches, queue_bytes \(queueMiB) MiB: \(offered) of \(batches * agents.count) acknowledged before the daemon stopped reading; netpulsed resident \(baseline / mebibyte) MiB at start, peak \(peak / mebibyte) MiB"
            )
            #expect(fleet.daemon!.isRunning)
            // The daemon stopped taking them long before all were sent: its applier is far behind.
            #expect(offered < batches * agents.count / 2, "the daemon took \(offered) batches of 5 MB")
            // docs/reliability.md, "Bounds": measured at about 4.5 × queue_bytes + 200 MiB above its memory at start
            // in a release build; at most 5 × queue_bytes + 256 MiB.
            #expect(
                peak - baseline < (5 * queueMiB + 256) * mebibyte,
                "peak \(peak / mebibyte) MiB, from \(baseline / mebibyte) MiB")
            fleet.daemon!.killHard()
        }

        static func send(_ agents: [String], _ fleet: Fleet, batches: Int) async throws -> Int {
            try await withThrowingTaskGroup(of: Int.self) { tasks in
                for (index, agent) in agents.enumerated() {
                    tasks.addTask {
                        try await LargeBatchSender(
                            agent: agent, directory: fleet.directory, port: fleet.port, stream: UInt64(index + 1)
                        ).run(batches: batches)
                    }
                }
                return try await tasks.reduce(0, +)
            }
        }
    }
}
