import Synchronization

/// The reads someone is waiting for: a live page's redraw, an answer of the API. The daemon's background work
/// that reads the whole store (the analytics snapshot, the dashboards drawn to disk) gives way to them between the
/// parts of its reads (``ReadPacing``).
///
/// Why: on two cores, a snapshot of 10,000 interfaces is about 20 s of reading, started 15 s after each 5-minute
/// boundary, and agents' first batches past a boundary land anywhere in the 30 s after it: the live pages then
/// redraw beside it. Read side by side with the snapshot, the fleet overview's panels took 184 ms where they take
/// 30 to 55 ms alone (docs/benchmarks.md, "HTTP"). Giving way costs the snapshot the time the pages read, a few
/// seconds at most, bounded by its own budget.
final class InteractiveReads: Sendable {
    private struct State {
        var running = 0
        var lastEnded: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// How long after an interactive read ends background work still waits: a redraw comes in a wave (the
    /// page's panels, then its charts' data; the other pages announced by the same commit a few milliseconds
    /// apart), and a part started between two of them would run under the next.
    static let afterglow = Duration.milliseconds(250)

    /// Runs `body` as an interactive read.
    func during<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        state.withLock { $0.running += 1 }
        defer {
            state.withLock { state in
                state.running -= 1
                state.lastEnded = .now
            }
        }
        return try await body()
    }

    /// Whether an interactive read runs, or ended less than ``afterglow`` ago.
    var busy: Bool {
        state.withLock { state in
            state.running > 0 || state.lastEnded.map { ContinuousClock.now - $0 < Self.afterglow } ?? false
        }
    }
}
