import ArgumentParser
import PulseCore
import PulseFormats
import PulseQuery
import Synchronization

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
        try await options.run(.export, [("level", level), ("scope", scope?.rawValue)], format: .csv)
    }
}

/// A progress bar on standard error (only on a terminal, so pipes and files stay clean).
final class ProgressBar: ReadProgress, Sendable {
    private let state = Mutex((total: 0, enabled: false, done: 0, shown: -1))

    func start(total: Int) {
        state.withLock { $0 = (total, total > 1, 0, -1) }
    }

    func advance() {
        let line = state.withLock { state -> String? in
            state.done += 1
            guard state.enabled else { return nil }
            let percent = state.done * 100 / max(state.total, 1)
            guard percent != state.shown else { return nil }
            state.shown = percent
            let filled = percent * 30 / 100
            return "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                + "] \(percent)% (\(state.done)/\(state.total) series)"
        }
        if let line { printError(line, newline: false) }
    }

    func finish() {
        if state.withLock({ $0.enabled }) { printError("", newline: true) }
    }
}
