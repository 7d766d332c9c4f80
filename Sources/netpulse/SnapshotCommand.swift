import ArgumentParser
import PulseCore
import PulseFormats
import PulseQuery

/// A snapshot like the daemon's, printed: for scripts and scheduled reports.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Print an analytics snapshot (the daemon's [snapshots] contents) as JSON or CSV.")

    @OptionGroup var options: QueryOptions

    func run() async throws {
        try await reportingErrors {
            guard options.format != .table else { throw QueryError("--format: a snapshot is json or csv") }
            let now = Netpulse.clock.now()
            let (engine, daemon) = try await options.engine(now: now)
            let snapshot = Snapshot(
                try await SnapshotQuery(engine: engine).read(daemon.snapshots.contents, now: now), source: "netpulse")
            print(options.format == .json ? snapshot.json : snapshot.csv, terminator: "")
        }
    }
}
