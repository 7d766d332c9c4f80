import Logging
import PulseCore

/// The state the sampling loop and the sender share: the spool, the daemon's pace, and what to report.
///
/// The sampling loop stores closed batches; the sender reads them in order, sends them, and removes them when the
/// daemon acknowledges them. Spool I/O is a small file write every batch interval, so it runs on the actor.
public actor AgentPipeline {
    private var spool: Spool
    private var orders: OrderClock
    private let logger: Logger
    /// Batches dropped because the spool was full, not yet reported in a batch.
    private var unreportedDrops: UInt64 = 0
    public private(set) var totalDropped: UInt64 = 0
    public private(set) var pace = Pace.normal
    public private(set) var inFlight = 0
    public private(set) var acknowledged: UInt64 = 0
    public private(set) var connectedTo: String?
    public private(set) var lastAckAt: Int64?
    public private(set) var interfaceCount = 0
    public private(set) var lastSampleAt: Int64?
    /// Set when a connection starts with a backlog; cleared (and logged) when the backlog is delivered.
    private var replaying: (started: Int64, batches: Int)?
    private var waiters: [Int: (continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>)] = [:]
    private var nextWaiter = 0

    public init(spool: Spool, orders: OrderClock, logger: Logger) {
        self.spool = spool
        self.orders = orders
        self.logger = logger
    }

    /// The next batch's order (see ``OrderClock``).
    public func nextOrder() throws -> UInt64 {
        try orders.next(now: WallClock.milliseconds())
    }

    public var spooledBatches: Int { spool.entries.count }
    public var spooledBytes: Int64 { spool.totalBytes }

    /// The count to put in the next batch's `droppedBefore`, which is then reported.
    public func takeUnreportedDrops() -> UInt64 {
        defer { unreportedDrops = 0 }
        return unreportedDrops
    }

    /// Gives back a count taken by ``takeUnreportedDrops()`` whose batch never reached the spool.
    public func restoreUnreportedDrops(_ count: UInt64) {
        unreportedDrops += count
    }

    /// Stores a closed batch durably, dropping the oldest if the spool is full.
    public func store(_ record: SpoolRecord) throws {
        let (dropped, theirDrops) = try spool.append(record)
        if dropped > 0 {
            // The dropped batches' own reports of earlier drops are lost with them: carry those forward too.
            unreportedDrops += UInt64(dropped) + theirDrops
            totalDropped += UInt64(dropped)
            logger.warning(
                "spool full: dropped the \(dropped) oldest batch(es) to stay under \(Units.formatBytes(Double(spool.maximumBytes)))",
                metadata: ["dropped_total": "\(totalDropped)"])
        }
        if connectedTo == nil,
            spool.entries.count == 1 || spool.entries.count.nonzeroBitCount == 1 && spool.entries.count >= 8
        {
            logger.notice(
                "daemon unreachable: spooling \(spool.entries.count) batch(es) (\(Units.formatBytes(Double(spool.totalBytes))))"
            )
        }
        wakeAll()
    }

    /// The first spooled entry after `ordinal`, if any.
    public func entry(after ordinal: UInt64) -> Spool.Entry? {
        spool.entries.first { $0.ordinal > ordinal }
    }

    public func read(_ entry: Spool.Entry) throws -> [UInt8] { try spool.read(entry) }

    /// Records a tick, for the status line.
    public func sampled(interfaces: Int, at timestamp: Int64) {
        interfaceCount = interfaces
        lastSampleAt = timestamp
    }

    /// One line for `systemctl status`: what is sampled, where it goes, what waits.
    public func statusLine(now: Int64, interval: Int64) -> String {
        var parts = ["\(interfaceCount) interface(s) every \(Units.formatDuration(interval))"]
        parts.append(connectedTo.map { "connected to \($0)" } ?? "daemon unreachable")
        parts.append("\(spool.entries.count) batch(es) spooled")
        if let lastAckAt {
            parts.append("last ack \(Units.formatDuration(max(0, now - lastAckAt) / 1_000 * 1_000)) ago")
        }
        if totalDropped > 0 { parts.append("\(totalDropped) dropped") }
        return parts.joined(separator: "; ")
    }

    // MARK: Session bookkeeping

    public func sessionStarted(_ daemon: String) {
        connectedTo = daemon
        inFlight = 0
        // A daemon asks for a slower pace on every connection while it needs one; a new one starts normal.
        pace = .normal
        replaying = spool.entries.count > 1 ? (WallClock.milliseconds(), spool.entries.count) : nil
        wakeAll()
    }

    public func sessionEnded() {
        connectedTo = nil
        inFlight = 0
        wakeAll()
    }

    public func sent() { inFlight += 1 }

    /// Removes an acknowledged batch from the spool, and says once when a backlog has been delivered (at most
    /// the newest batch, still being written, left).
    public func acknowledge(_ ack: Ack, at timestamp: Int64) {
        inFlight = max(0, inFlight - 1)
        if spool.remove(stream: ack.stream, sequence: ack.sequence) { acknowledged += 1 }
        lastAckAt = timestamp
        if let backlog = replaying, spool.entries.count <= 1 {
            replaying = nil
            logger.notice(
                "replay done: \(backlog.batches) spooled batches delivered in \(Units.formatDuration(timestamp - backlog.started))"
            )
        }
        wakeAll()
    }

    public func setPace(_ pace: Pace) {
        self.pace = pace
        wakeAll()
    }

    // MARK: Waiting

    /// Suspends until something changes (a batch stored, an ack, a pace, a session change) or `timeout` passes.
    public func waitForChange(timeout: Duration) async {
        let id = nextWaiter
        nextWaiter += 1
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timer = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    await self?.wake(id)
                }
                waiters[id] = (continuation, timer)
            }
        } onCancel: {
            Task { [weak self] in await self?.wake(id) }
        }
    }

    private func wake(_ id: Int) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.timer.cancel()
        waiter.continuation.resume()
    }

    private func wakeAll() {
        let pending = waiters
        waiters.removeAll()
        for waiter in pending.values {
            waiter.timer.cancel()
            waiter.continuation.resume()
        }
    }
}
