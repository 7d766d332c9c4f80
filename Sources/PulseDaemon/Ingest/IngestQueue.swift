import PulseCore
import PulseStore
import Synchronization

/// Batches waiting for their group commit, handed from the connections' event loops to the ingest service.
///
/// ``submit(_:completion:)`` never blocks an event loop; the ingest service takes everything queued at once, so
/// one commit (one fsync) covers every batch that arrived while the previous one was committing.
public final class IngestQueue: Sendable {
    public struct Item: Sendable {
        public var batch: IngestBatch
        /// Runs after the commit (or its failure): only then may the batch be acknowledged.
        public var completion: @Sendable (Result<IngestOutcome, any Error>) -> Void
    }

    private struct State {
        var items: [Item] = []
        var accepting = true
        var taker: CheckedContinuation<Void, Never>?
        var emptyWaiters: [CheckedContinuation<Void, Never>] = []
        /// Items taken and not yet completed (so "empty" means committed, not just dequeued).
        var inCommit = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Queues a batch; its completion runs once it is durably stored. Never blocks. After ``close()`` the
    /// completion runs at once with `shutting-down`.
    public func submit(_ batch: IngestBatch, completion: @escaping @Sendable (Result<IngestOutcome, any Error>) -> Void)
    {
        let (accepted, taker) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.accepting else { return (false, nil) }
            state.items.append(Item(batch: batch, completion: completion))
            defer { state.taker = nil }
            return (true, state.taker)
        }
        guard accepted else {
            completion(.failure(ErrorFrame(.shuttingDown, "the daemon is shutting down")))
            return
        }
        taker?.resume()
    }

    /// Batches queued and not yet committed.
    public var pending: Int { state.withLock { $0.items.count + $0.inCommit } }

    /// Whether the queue was closed and everything in it committed.
    public var isFinished: Bool { state.withLock { !$0.accepting && $0.items.isEmpty && $0.inCommit == 0 } }

    /// Everything queued, waiting for something to arrive; empty when woken by ``wake()`` or closed with nothing
    /// left. One taker at a time (the ingest service).
    func take() async -> [Item] {
        if let items = takeNow() { return items }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if !state.items.isEmpty || !state.accepting { return true }
                state.taker = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return takeNow() ?? []
    }

    /// Takes everything queued, or nil when nothing is.
    func takeNow() -> [Item]? {
        state.withLock { state in
            guard !state.items.isEmpty else { return nil }
            defer {
                state.inCommit += state.items.count
                state.items.removeAll(keepingCapacity: true)
            }
            return state.items
        }
    }

    /// Wakes the taker (a timer, so an idle service still beats for the watchdog).
    func wake() {
        let taker = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.taker = nil }
            return state.taker
        }
        taker?.resume()
    }

    /// Items the service took have been completed.
    func committed(_ count: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inCommit -= count
            guard state.items.isEmpty && state.inCommit == 0 else { return [] }
            defer { state.emptyWaiters.removeAll() }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Refuses new batches from now on; what is queued is still committed.
    public func close() {
        state.withLock { $0.accepting = false }
        wake()
    }

    /// Returns once nothing is queued or being committed.
    public func waitUntilEmpty() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let empty = state.withLock { state -> Bool in
                if state.items.isEmpty && state.inCommit == 0 { return true }
                state.emptyWaiters.append(continuation)
                return false
            }
            if empty { continuation.resume() }
        }
    }
}
