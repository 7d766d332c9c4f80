import PulseCore
import PulseStore
import Synchronization

/// Journaled batches waiting to be applied to the store, handed from the ingest service's journal commits to its
/// applier (``IngestService``), in journal order. The batches stay in memory so the applier never reads back what
/// was just written; the journal is read only after a crash.
final class ApplyBacklog: Sendable {
    typealias Entry = (id: Int64, batch: IngestBatch)

    private struct State {
        var entries: [Entry] = []
        var closed = false
        var taker: CheckedContinuation<Void, Never>?
        var roomWaiters: [(limit: Int, bytes: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// The memory cost of the batches waiting (``IngestBatch/memoryCost``).
        var bytes = 0

        func hasRoom(below limit: Int, bytes byteLimit: Int) -> Bool { entries.count < limit && bytes < byteLimit }
    }

    private let state = Mutex(State())
    /// Tells how long the oldest batch has waited since it was journaled (``IngestBatch/receivedAt``).
    private let clock: WallClock

    init(clock: WallClock) { self.clock = clock }

    /// Batches waiting.
    var count: Int { state.withLock { $0.entries.count } }

    /// The memory cost of the batches waiting.
    var bytes: Int { state.withLock { $0.bytes } }

    /// How long the oldest batch waiting to be applied has waited since it was journaled (zero when none waits).
    /// A commit of the store takes a fraction of a second, so more than a second means the applier is behind.
    var age: Duration {
        let journaled = state.withLock { $0.entries.first?.batch.receivedAt }
        guard let journaled else { return .zero }
        return .milliseconds(max(0, clock.now() - journaled))
    }

    func push(_ entries: [Entry]) {
        let taker = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.entries += entries
            state.bytes += entries.reduce(0) { $0 + $1.batch.memoryCost }
            defer { state.taker = nil }
            return state.taker
        }
        taker?.resume()
    }

    /// Up to `limit` entries, oldest first, waiting for some; nil once closed and empty. One taker at a time.
    /// At most `bytes` of them (but always one), so one store commit's working set stays bounded too.
    func take(limit: Int, bytes: Int = .max) async -> [Entry]? {
        while true {
            enum Next { case entries([Entry], [CheckedContinuation<Void, Never>]), finished, wait }
            let next = state.withLock { state -> Next in
                if !state.entries.isEmpty {
                    var count = 0
                    var taking = 0
                    for entry in state.entries.prefix(limit) {
                        let cost = entry.batch.memoryCost
                        if count > 0 && taking + cost > bytes { break }
                        taking += cost
                        count += 1
                    }
                    let taken = Array(state.entries.prefix(count))
                    state.entries.removeFirst(count)
                    state.bytes -= taking
                    let current = state
                    let ready = state.roomWaiters.filter { current.hasRoom(below: $0.limit, bytes: $0.bytes) }
                        .map(\.continuation)
                    state.roomWaiters.removeAll { current.hasRoom(below: $0.limit, bytes: $0.bytes) }
                    return .entries(taken, ready)
                }
                return state.closed ? .finished : .wait
            }
            switch next {
            case .entries(let entries, let ready):
                for waiter in ready { waiter.resume() }
                return entries
            case .finished:
                return nil
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if !state.entries.isEmpty || state.closed { return true }
                        state.taker = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    /// Returns once fewer than `limit` entries and `bytes` bytes of them wait (or the backlog is closed).
    func waitForRoom(below limit: Int, bytes: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.hasRoom(below: limit, bytes: bytes) || state.closed { return true }
                state.roomWaiters.append((limit, bytes, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Wakes every ``waitForRoom(below:bytes:)`` (a timer, so a loop waiting for room still beats for the watchdog); they
    /// check again.
    func wakeRoomWaiters() {
        let waiters = state.withLock { state in
            defer { state.roomWaiters.removeAll() }
            return state.roomWaiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// No more entries will come; the taker gets what is left, then nil.
    func close() {
        let (taker, waiters) = state.withLock { state in
            state.closed = true
            defer {
                state.taker = nil
                state.roomWaiters.removeAll()
            }
            return (state.taker, state.roomWaiters.map(\.continuation))
        }
        taker?.resume()
        for waiter in waiters { waiter.resume() }
    }
}
