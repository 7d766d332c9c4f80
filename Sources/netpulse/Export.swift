import ArgumentParser
import PulseCore
import PulseFormats
import PulseQuery

/// Any range of rollup buckets or raw samples, as CSV or JSON lines, with a progress bar on a terminal.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export rollup buckets (or raw samples) of any range as CSV or JSON.",
        discussion: """
            Buckets are labelled by their start and are half-open; bytes are exact. JSON output is one array.
            Raw samples are kept for [retention] raw (48 h by default).
            """)

    @OptionGroup var options: QueryOptions

    @Option(name: .long, help: "raw, or a rollup level: 1m, 5m, 1h, 1d.")
    var level = "5m"

    @Option(name: .long, help: "Export interfaces, hosts, groups or the fleet (default: from the other options).")
    var scope: ScopeChoice?

    func run() async throws {
        try await options.run(.export, [("level", level), ("scope", scope?.rawValue)])
    }
}

/// A progress bar on standard error (only on a terminal, so pipes and files stay clean).
final class ProgressBar: ReadProgress, @unchecked Sendable {
    private var total = 0
    private var enabled = false
    private var done = 0
    private var shown = -1

    func start(total: Int) {
        self.total = total
        enabled = total > 1
    }

    func advance() {
        done += 1
        guard enabled else { return }
        let percent = done * 100 / max(total, 1)
        guard percent != shown else { return }
        shown = percent
        let filled = percent * 30 / 100
        printError(
            "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                + "] \(percent)% (\(done)/\(total) series)", newline: false)
    }

    func finish() {
        if enabled { printError("", newline: true) }
    }
}
