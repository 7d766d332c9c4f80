import PulseCore
import PulseStore
import Synchronization

/// Tells the live pages that buckets were stored: after each store commit (with a journal, when the applier wrote the
/// batches to the store, which is when reads see them) every open event stream whose dashboard covers one of the
/// batches' agents gets one announcement.
///
/// Each stream keeps only the newest announcement it has not sent yet (a page that is slow to read misses none of
/// what matters: it redraws from the store, not from the announcement), so nothing here grows with the ingest rate
/// or with a slow reader; the number of streams is bounded by `[http] max_connections`.
final class BucketAnnouncer: Sendable {
    /// What a page learns: the oldest and newest sample times among the batches, when the store committed them
    /// (ms), and the store's data generation after the commit (nil when the store cannot tell): a redraw asks for a
    /// read at least that new (``LiveReads``).
    struct Announcement: Sendable, Equatable {
        var earliest: Int64
        var through: Int64
        var committed: Int64
        var generation: Int64? = nil
    }

    enum Event: Sendable, Equatable {
        case stored(Announcement)
        /// A comment line that keeps idle connections (and proxies) from timing out.
        case ping
    }

    struct Subscriber: Sendable {
        /// Whether a batch of this agent concerns the stream (nil: every agent).
        var agent: String?
        var continuation: AsyncStream<Event>.Continuation
    }

    private let subscribers = Mutex<(next: Int, all: [Int: Subscriber])>((0, [:]))
    let clock: WallClock
    /// The store's data generation (``MetricStore/dataGeneration()``).
    let generation: @Sendable () -> Int64?

    init(clock: WallClock, generation: @escaping @Sendable () -> Int64? = { nil }) {
        self.clock = clock
        self.generation = generation
    }

    /// A stream of what concerns `agent` (nil: every agent), and its number for ``unsubscribe(_:)``.
    func subscribe(agent: String?) -> (AsyncStream<Event>, Int) {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(1))
        let id = subscribers.withLock { state in
            state.next += 1
            state.all[state.next] = Subscriber(agent: agent, continuation: continuation)
            return state.next
        }
        return (stream, id)
    }

    func unsubscribe(_ id: Int) {
        subscribers.withLock { $0.all.removeValue(forKey: id) }?.continuation.finish()
    }

    func ping(_ id: Int) {
        _ = subscribers.withLock { $0.all[id] }?.continuation.yield(.ping)
    }

    /// Ends every stream (the daemon stops).
    func finishAll() {
        let all = subscribers.withLock { state in
            defer { state.all = [:] }
            return Array(state.all.values)
        }
        for subscriber in all { subscriber.continuation.finish() }
    }

    /// Called after a store commit with the batches it stored (duplicates left out).
    func stored(_ batches: [IngestBatch]) {
        guard !batches.isEmpty else { return }
        let current = subscribers.withLock { Array($0.all.values) }
        guard !current.isEmpty else { return }
        let committed = clock.now()
        let generation = self.generation()
        let agents = Set(batches.map(\.agent.name))
        let through = batches.map(\.lastTimestamp).max() ?? committed
        let earliest = batches.flatMap { $0.sections.compactMap(\.timestamps.first) }.min() ?? through
        for subscriber in current where subscriber.agent.map(agents.contains) ?? true {
            subscriber.continuation.yield(
                .stored(
                    Announcement(earliest: earliest, through: through, committed: committed, generation: generation)))
        }
    }
}
