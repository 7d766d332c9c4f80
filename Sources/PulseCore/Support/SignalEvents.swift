import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Unix signals as an async sequence, delivered through Dispatch signal sources (the process's default action for
/// them is turned off while the sequence exists).
///
/// The agent handles its three signals with this instead of swift-service-lifecycle: that package and
/// swift-async-algorithms add about 1 MiB of resident code to a process whose aim is 15 MiB in all.
public struct SignalEvents: AsyncSequence, Sendable {
    public typealias Element = Int32
    private let stream: AsyncStream<Int32>

    public init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        let queue = DispatchQueue(label: "netpulse.signals")
        let sources = signals.map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
        let retained = SourceHolder(sources)
        continuation.onTermination = { _ in retained.cancel() }
    }

    public func makeAsyncIterator() -> AsyncStream<Int32>.AsyncIterator { stream.makeAsyncIterator() }
}

/// Keeps the signal sources alive as long as the stream, and cancels them with it.
private final class SourceHolder: @unchecked Sendable {
    // Only touched at creation and once on termination.
    private let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { for source in sources { source.cancel() } }
}
