import Synchronization

/// Why ``awaitAbandoning(within:_:)`` stopped waiting before the operation ended.
public struct StoppedWaiting: Error, CustomStringConvertible {
    /// The limit that passed, or nil when the waiting task was cancelled.
    public var limit: Duration?

    public var description: String {
        limit.map { "gave up waiting after \($0)" } ?? "gave up waiting: cancelled"
    }
}

/// Runs `operation` in a task of its own and waits for it until it ends, `limit` passes, or the calling task is
/// cancelled, whichever comes first.
///
/// For operations that do not answer cancellation and may wait on a peer for long, such as an event loop group's
/// shutdown, which waits for every channel to close (and a TLS close for the peer's close_notify): the caller goes
/// on, and the operation carries on unwatched, so use it only where nothing depends on the operation any more (a
/// process that is exiting).
///
/// - Throws: the operation's error, or ``StoppedWaiting`` when the limit passed or the caller was cancelled.
public func awaitAbandoning<T: Sendable>(
    within limit: Duration? = nil, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let handoff = Handoff<T>()
    Task { handoff.deliver(await Result { try await operation() }) }
    let timer = limit.map { limit in
        Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            handoff.abandon(StoppedWaiting(limit: limit))
        }
    }
    defer { timer?.cancel() }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { handoff.wait($0) }
    } onCancel: {
        handoff.abandon(StoppedWaiting(limit: nil))
    }
}

extension Result where Failure == any Error {
    fileprivate init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

/// Hands an operation's result to one waiter, unless the waiter gave up first.
private final class Handoff<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<T, any Error>)
        /// The result (or the waiter's giving up) came before the waiter was installed.
        case delivered(Result<T, any Error>)
        case finished
    }

    private let state = Mutex<State>(.idle)

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let ready: Result<T, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .delivered(let result):
                state = .finished
                return result
            case .waiting, .finished:
                preconditionFailure("one waiter only")
            }
        }
        if let ready { continuation.resume(with: ready) }
    }

    /// Gives `result` to the waiter, unless something was given first (the operation's end or the waiter giving up:
    /// the first wins).
    func deliver(_ result: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .delivered(result)
                return nil
            case .waiting(let continuation):
                state = .finished
                return continuation
            case .delivered, .finished:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// The waiter gives up: it gets `error` unless the operation's result came first.
    func abandon(_ error: any Error) { deliver(.failure(error)) }
}
