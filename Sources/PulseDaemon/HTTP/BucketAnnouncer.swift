import PulseCore
import PulseStore
import Synchronization

/// Tells the live pages that buckets were stored: after each store commit (with a journal, when the applier wrote the
/// batches to the store, which is when reads see them) every open event stream whose dashboard covers one of the
/// batches' agents gets one announcement.
///
/// Each stream keeps one announcement it has not sent yet, into which later ones are merged (a page that is slow to
/// read misses none of them: the oldest sample time and the first commit are kept, the newest generation taken), so
/// nothing here grows with the ingest rate or with a slow reader; the number of streams is bounded by
/// `[http] max_connections`.
final class BucketAnnouncer: Sendable {
    /// What a page learns: the oldest and newest sample times among the batches, when the store committed them
    /// (ms), and the store's data generation after the commit (nil when the store cannot tell): a redraw asks for a
    /// read at least that new (``LiveReads``).
    struct Announcement: Sendable, Equatable {
        var earliest: Int64
        var through: Int64
        /// When the first commit it announces was made: what the page's latency is counted from.
        var committed: Int64
        var generation: Int64? = nil
        /// When the last commit it announces was made (the same as `committed` for one commit).
        var lastCommitted: Int64

        init(earliest: Int64, through: Int64, committed: Int64, generation: Int64? = nil) {
            self.earliest = earliest
            self.through = through
            self.committed = committed
            self.generation = generation
            self.lastCommitted = committed
        }

        /// This and `later` as one announcement: every sample time of both, the first commit and the newest.
        func merged(with later: Announcement) -> Announcement {
            var merged = self
            merged.earliest = min(earliest, later.earliest)
            merged.through = max(through, later.through)
            merged.committed = min(committed, later.committed)
            merged.lastCommitted = max(lastCommitted, later.lastCommitted)
            merged.generation = [generation, later.generation].compactMap { $0 }.max()
            return merged
        }
    }

    enum Event: Sendable, Equatable {
        case stored(Announcement)
        /// A comment line that keeps idle connections (and proxies) from timing out.
        case ping
    }

    struct Subscriber: Sendable {
        /// Whether a batch of this agent concerns the stream (nil: every agent).
        var agent: String?
        /// Wakes the stream's reader; what woke it is in `pending` and `pingDue`.
        var continuation: AsyncStream<Void>.Continuation
        /// What it has not taken yet: every announcement since, merged.
        var pending: Announcement? = nil
        var pingDue = false
    }

    private let subscribers = Mutex<(next: Int, all: [Int: Subscriber])>((0, [:]))
    let clock: WallClock
    /// The store's data generation (``MetricStore/dataGeneration()``).
    let generation: @Sendable () -> Int64?

    init(clock: WallClock, generation: @escaping @Sendable () -> Int64? = { nil }) {
        self.clock = clock
        self.generation = generation
    }

    /// A stream that wakes when something concerning `agent` (nil: every agent) is there to ``take(_:)``, and its
    /// number for ``take(_:)`` and ``unsubscribe(_:)``.
    func subscribe(agent: String?) -> (AsyncStream<Void>, Int) {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = subscribers.withLock { state in
            state.next += 1
            state.all[state.next] = Subscriber(agent: agent, continuation: continuation)
            return state.next
        }
        return (stream, id)
    }

    /// What stream `id` has not taken yet: the announcements since, merged into one, or else a ping that fell due
    /// (an event keeps the connection alive as well as a ping); nil when there is nothing.
    func take(_ id: Int) -> Event? {
        subscribers.withLock { state -> Event? in
            guard var subscriber = state.all[id] else { return nil }
            defer { state.all[id] = subscriber }
            let ping = subscriber.pingDue
            subscriber.pingDue = false
            if let pending = subscriber.pending {
                subscriber.pending = nil
                return .stored(pending)
            }
            return ping ? .ping : nil
        }
    }

    func unsubscribe(_ id: Int) {
        subscribers.withLock { $0.all.removeValue(forKey: id) }?.continuation.finish()
    }

    func ping(_ id: Int) {
        let woken = subscribers.withLock { state -> AsyncStream<Void>.Continuation? in
            state.all[id]?.pingDue = true
            return state.all[id]?.continuation
        }
        woken?.yield()
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
        guard !batches.isEmpty, subscribers.withLock({ !$0.all.isEmpty }) else { return }
        let committed = clock.now()
        let through = batches.map(\.lastTimestamp).max() ?? committed
        let earliest = batches.flatMap { $0.sections.compactMap(\.timestamps.first) }.min() ?? through
        announce(
            Announcement(earliest: earliest, through: through, committed: committed, generation: generation()),
            agents: Set(batches.map(\.agent.name)))
    }

    /// Gives `announcement` of a commit of the batches of `agents` to every stream they concern.
    func announce(_ announcement: Announcement, agents: Set<String>) {
        let woken = subscribers.withLock { state -> [AsyncStream<Void>.Continuation] in
            let concerned = state.all.compactMap { $0.value.agent.map(agents.contains) ?? true ? $0.key : nil }
            return concerned.compactMap { id in
                guard var subscriber = state.all[id] else { return nil }
                subscriber.pending = subscriber.pending.map { $0.merged(with: announcement) } ?? announcement
                state.all[id] = subscriber
                return subscriber.continuation
            }
        }
        for continuation in woken { continuation.yield() }
    }
}
