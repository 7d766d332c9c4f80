import PulseCore
import PulseStore
import Synchronization

/// Batches waiting for their group commit, handed from the connections' event loops to the ingest service.
///
/// ``offer(_:completion:)`` never blocks an event loop; the ingest service takes everything queued at once, so
/// one commit (one fsync) covers every batch that arrived while the previous one was committing.
///
/// It holds at most `limit` batches and `byteLimit` bytes of them (``IngestBatch/memoryCost``: a batch may hold
/// 65,536 samples, so a count alone bounds nothing). A connection whose batch finds it full keeps the batch and stops
/// reading from its agent until ``whenRoom(_:)`` calls it back (TCP backpressure: the agent's batches wait in its
/// spool, not in the daemon's memory); the ingest service asks agents to slow down (`PACE`) before that.
public final class IngestQueue: Sendable {
    public struct Item: Sendable {
        public var batch: IngestBatch
        /// Runs after the commit (or its failure): only then may the batch be acknowledged.
        public var completion: @Sendable (Result<IngestOutcome, any Error>) -> Void
        /// When it was queued: its acknowledgement latency is counted from here (`netpulse_ack_latency_seconds`).
        public var queuedAt = ContinuousClock.now
    }

    private struct State {
        var items: [Item] = []
        var accepting = true
        var taker: CheckedContinuation<Void, Never>?
        var emptyWaiters: [CheckedContinuation<Void, Never>] = []
        /// Items taken and not yet completed (so "empty" means committed, not just dequeued).
        var inCommit = 0
        /// Called back once there is room again.
        var roomWaiters: [@Sendable () -> Void] = []
        /// Offers refused because the queue was full, since start.
        var refusals = 0
        /// When the oldest item still queued arrived (`ContinuousClock`), nil while nothing is queued.
        var oldestSince: ContinuousClock.Instant?
        /// The memory cost of the batches queued.
        var bytes = 0
        /// Places promised by ``reserve()`` to batches being decoded, not yet offered.
        var reserved = 0

        func hasRoom(limit: Int, byteLimit: Int) -> Bool { items.count + reserved < limit && bytes < byteLimit }
    }

    private let state = Mutex(State())
    /// The most batches queued at once.
    public let limit: Int
    /// The most bytes of batches queued at once (the batch that crosses it is still taken).
    public let byteLimit: Int

    public init(limit: Int = 8_192, byteLimit: Int = 256 << 20) {
        self.limit = max(1, limit)
        self.byteLimit = max(1, byteLimit)
    }

    /// Queues a batch unless the queue is full; its completion runs once it is durably stored. Never blocks.
    /// Returns false, keeping nothing, when the queue holds `limit` batches or `byteLimit` bytes: the caller keeps
    /// the batch and offers it again once ``whenRoom(_:)`` calls back. After ``close()`` the completion runs at once
    /// with `shutting-down`.
    ///
    /// `reserved`: the place a ``reserve()`` promised is used, and the batch is always taken. Connections reserve
    /// before they decode a batch frame, so they never keep a decoded batch (the raw frame waits instead, about a
    /// sixth of the size); the queue holds at most `limit` batches, and `byteLimit` plus one batch per event loop.
    @discardableResult
    public func offer(
        _ batch: IngestBatch, reserved: Bool = false,
        completion: @escaping @Sendable (Result<IngestOutcome, any Error>) -> Void
    ) -> Bool {
        enum Outcome { case queued(CheckedContinuation<Void, Never>?), full, closed }
        let outcome = state.withLock { state -> Outcome in
            guard state.accepting else { return .closed }
            // Full at `byteLimit` bytes: the batch that crosses it is taken (so the bound is that plus one batch, at
            // most about 5 MB), and ``whenRoom(_:)`` waits on the same condition.
            let cost = batch.memoryCost
            if reserved { state.reserved = max(0, state.reserved - 1) }
            guard reserved || state.hasRoom(limit: limit, byteLimit: byteLimit) else {
                state.refusals += 1
                return .full
            }
            if state.items.isEmpty { state.oldestSince = .now }
            state.bytes += cost
            state.items.append(Item(batch: batch, completion: completion))
            defer { state.taker = nil }
            return .queued(state.taker)
        }
        switch outcome {
        case .queued(let taker):
            taker?.resume()
            return true
        case .full:
            return false
        case .closed:
            completion(.failure(ErrorFrame(.shuttingDown, "the daemon is shutting down")))
            return true
        }
    }

    /// Calls `waiter` once the queue has room (at once when it has some now, or is closed).
    public func whenRoom(_ waiter: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard !state.hasRoom(limit: limit, byteLimit: byteLimit) && state.accepting else { return true }
            state.roomWaiters.append(waiter)
            return false
        }
        if now { waiter() }
    }

    /// How long the oldest batch waiting for a commit has waited (zero when none waits): above a few tens of
    /// milliseconds, the writer is behind.
    public var backlogAge: Duration {
        state.withLock { state in state.oldestSince.map { ContinuousClock.now - $0 } ?? .zero }
    }

    /// Offers refused because the queue was full, since start.
    public var refusals: Int { state.withLock { $0.refusals } }

    /// Whether an offer now would be taken (or the queue is closed, when it answers at once).
    public var hasRoom: Bool {
        state.withLock { state in !state.accepting || state.hasRoom(limit: limit, byteLimit: byteLimit) }
    }

    /// Promises a place to a batch about to be decoded, if there is room (or the queue is closed, when its offer
    /// answers at once); an offer with `reserved: true` uses it, ``release()`` gives it back. Counted as a refusal
    /// when full: the caller waits with ``whenRoom(_:)``.
    public func reserve() -> Bool {
        state.withLock { state in
            guard state.accepting else { return true }
            guard state.hasRoom(limit: limit, byteLimit: byteLimit) else {
                state.refusals += 1
                return false
            }
            state.reserved += 1
            return true
        }
    }

    /// Gives back a place ``reserve()`` promised that no batch used (the frame was refused, or was not one to
    /// store); connections waiting for room are called back if that made some.
    public func release() {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            guard state.accepting, state.reserved > 0 else { return [] }
            state.reserved -= 1
            guard state.hasRoom(limit: limit, byteLimit: byteLimit) else { return [] }
            defer { state.roomWaiters.removeAll() }
            return state.roomWaiters
        }
        for waiter in waiters { waiter() }
    }

    /// The memory cost of the batches queued (not those in a commit).
    public var bytes: Int { state.withLock { $0.bytes } }

    /// Batches queued and not yet committed.
    public var pending: Int { state.withLock { $0.items.count + $0.inCommit } }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { state.withLock { !$0.accepting } }

    /// Whether the queue was closed and everything in it committed.
    public var isFinished: Bool { state.withLock { !$0.accepting && $0.items.isEmpty && $0.inCommit == 0 } }

    /// Everything queued, waiting for something to arrive; empty when woken by ``wake()`` or closed with nothing
    /// left. One taker at a time (the ingest service).
    func take() async -> [Item] {
        if let items = takeNow() { return items }
        await waitForItems()
        return takeNow() ?? []
    }

    /// Returns once something is queued, the queue is closed, or ``wake()`` is called. One waiter at a time.
    func waitForItems() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if !state.items.isEmpty || !state.accepting { return true }
                state.taker = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Takes everything queued, or nil when nothing is; connections waiting for room are called back.
    func takeNow() -> [Item]? {
        let (items, waiters) = state.withLock { state -> ([Item]?, [@Sendable () -> Void]) in
            guard !state.items.isEmpty else { return (nil, []) }
            defer {
                state.inCommit += state.items.count
                state.bytes = 0
                state.items.removeAll(keepingCapacity: true)
                state.roomWaiters.removeAll()
                state.oldestSince = nil
            }
            return (state.items, state.roomWaiters)
        }
        for waiter in waiters { waiter() }
        return items
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
        let waiters = state.withLock { state in
            state.accepting = false
            defer { state.roomWaiters.removeAll() }
            return state.roomWaiters
        }
        // Connections holding batches offer them again and are told the daemon is shutting down.
        for waiter in waiters { waiter() }
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
