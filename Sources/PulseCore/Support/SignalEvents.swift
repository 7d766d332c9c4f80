import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Unix signals as an async sequence, delivered through Dispatch signal sources.
///
/// The agent handles its signals with this instead of swift-service-lifecycle: that package and
/// swift-async-algorithms add about 1 MiB of resident code to a process whose aim is 15 MiB in all. The daemon uses
/// it for its stop signals too, so that both programs stop the same way (see `docs/operations.md`).
///
/// On Linux, Dispatch reads signals from a `signalfd` and, when it registers the first source of a signal, installs
/// a handler of its own that routes the signal to that descriptor from whichever thread the kernel picked. That
/// handler must stay: setting `SIG_IGN` after it (as swift-service-lifecycle does before making its sources) would
/// make the kernel drop the signal at once, because the main thread, parked in `sigsuspend` by `dispatch_main`,
/// blocks nothing. So this type never ignores a signal Dispatch already catches, and `init` returns only once its
/// sources are registered: from then on every signal reaches the sequence. Until then a signal keeps its default
/// action (SIGTERM ends a process that has not started anything yet).
public struct SignalEvents: AsyncSequence, Sendable {
    public typealias Element = Int32
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let sources: SourceHolder

    /// Starts catching `signals`; returns once they reach the sequence (normally within a millisecond).
    public init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        self.continuation = continuation
        let queue = DispatchQueue(label: "netpulse.signals")
        let registered = DispatchGroup()
        let sources = signals.map { number -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            return source
        }
        // Registration happens on Dispatch's own threads; a second is far more than it ever takes.
        _ = registered.wait(timeout: .now() + .seconds(1))
        for number in signals {
            var current = sigaction()
            sigaction(number, nil, &current)
            // Where Dispatch installs no handler of its own (kqueue platforms), the default action would still end
            // the process: it must be ignored for the source alone to see the signal.
            if current.__sigaction_handler.sa_handler == nil { signal(number, SIG_IGN) }
        }
        let holder = SourceHolder(sources, signals: signals)
        self.sources = holder
        continuation.onTermination = { _ in holder.cancel(restoringDefaults: false) }
    }

    public func makeAsyncIterator() -> AsyncStream<Int32>.AsyncIterator { stream.makeAsyncIterator() }

    /// Stops catching the signals and gives them back their default action once the sources are gone, so that the
    /// next SIGTERM or SIGINT ends the process at once, by the kernel, however stuck the process is (the "second
    /// signal" of a stop). The sequence ends.
    public func restoreDefaultActions() {
        sources.cancel(restoringDefaults: true)
        continuation.finish()
    }
}

/// Keeps the signal sources alive as long as the stream, and cancels them with it.
private final class SourceHolder: @unchecked Sendable {
    // Written once at creation; `cancel` runs its body once (guarded by `cancelled`, set on the signals queue).
    private let sources: [any DispatchSourceSignal]
    private let signals: [Int32]
    private let once = DispatchQueue(label: "netpulse.signals.cancel")
    private var cancelled = false

    init(_ sources: [any DispatchSourceSignal], signals: [Int32]) {
        self.sources = sources
        self.signals = signals
    }

    func cancel(restoringDefaults: Bool) {
        once.sync {
            guard !cancelled else { return }
            cancelled = true
            let gone = DispatchGroup()
            for source in sources {
                gone.enter()
                source.setCancelHandler { gone.leave() }
                source.cancel()
            }
            guard restoringDefaults else { return }
            // Only once no source reads the signal: restoring the default while a signalfd still took it would lose
            // the signal to a source nobody listens to.
            let signals = self.signals
            gone.notify(queue: once) {
                for number in signals { signal(number, SIG_DFL) }
            }
        }
    }
}
