import ArgumentParser
import PulseFormats
import PulseQuery

/// A snapshot like the daemon's, printed: for scripts and scheduled reports. It holds what the daemon's
/// `[snapshots]` say (windows, scopes, top-N, bills), read now.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Print an analytics snapshot (the daemon's [snapshots] contents) as JSON or CSV.")

    @OptionGroup var location: StoreLocation

    @Option(name: .long, help: "json or csv.")
    var format = QueryOptions.Format.json

    @OptionGroup var remote: DaemonOption

    func run() async throws {
        try await location.run(.snapshot, ReadParameters([("format", format.rawValue)]), daemon: remote.url)
    }
}
