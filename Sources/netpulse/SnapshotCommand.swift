import ArgumentParser
import Foundation
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
            // Not served over HTTP yet: reading the local store instead of the daemon asked for would mislead.
            if options.daemon ?? ProcessInfo.processInfo.environment["NETPULSE_DAEMON"] != nil {
                throw QueryError(
                    "netpulse snapshot is not served over HTTP yet (--daemon, NETPULSE_DAEMON): run it on the daemon's host"
                )
            }
            guard options.format != .table else { throw QueryError("--format: a snapshot is json or csv") }
            let now = Netpulse.clock.now()
            let (engine, daemon) = try await options.engine(now: now)
            let snapshot = Snapshot(
                try await SnapshotQuery(engine: engine).read(daemon.snapshots.contents, now: now), source: "netpulse")
            print(options.format == .json ? snapshot.json : snapshot.csv, terminator: "")
        }
    }
}
