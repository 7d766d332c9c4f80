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
    /// Dates orders, the start of a replay and batches set aside.
    private let clock: WallClock
    /// Batches dropped because the spool was full, not yet reported in a batch.
    private var unreportedDrops: UInt64 = 0
    public private(set) var totalDropped: UInt64 = 0
    public private(set) var pace = Pace.normal
    public private(set) var inFlight = 0
    public private(set) var acknowledged: UInt64 = 0
    /// Batches the daemon refused for good, set aside in the spool's `rejected/` directory.
    public private(set) var rejected: UInt64 = 0
    public private(set) var connectedTo: String?
    public private(set) var lastAckAt: Int64?
    public private(set) var interfaceCount = 0
    public private(set) var lastSampleAt: Int64?
    /// Set when a connection starts with a backlog; cleared (and logged) when the backlog is delivered.
    /// `below`: the backlog is the batches with ordinals below it (made before the connection).
    private var replaying: (started: Int64, batches: Int, below: UInt64)?
    private var waiters: [Int: (continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>)] = [:]
    private var nextWaiter = 0

    /// Closed batches the spool writer has not written yet, oldest first, and their size.
    private var unwritten: [Spool.Write] = []
    private var unwrittenBytes = 0
    /// The most bytes of batches that may wait for the spool writer.
    public let unwrittenLimit: Int
    /// Batches lost because the disk was slower than sampling, since it last caught up.
    private var slowDiskLosses = 0
    private var writer: CheckedContinuation<Void, Never>?
    private var writesFinished = false
    /// A reservation of orders for the spool writer, and whether one is being written.
    private var pendingRenewal: OrderClock.Renewal?
    private var renewing = false

    public init(spool: Spool, orders: OrderClock, clock: WallClock, logger: Logger, unwrittenLimit: Int = 4 << 20) {
        self.spool = spool
        self.orders = orders
        self.clock = clock
        self.logger = logger
        self.unwrittenLimit = min(unwrittenLimit, Int(clamping: spool.maximumBytes))
    }

    /// The next batch's order (see ``OrderClock``). Once half of the reservation on disk is used, the spool writer
    /// writes the next one, so the sampling loop does not wait for that fsync either.
    public func nextOrder() throws -> UInt64 {
        let order = try orders.next(now: clock.now())
        if !renewing, let due = orders.renewalDue {
            renewing = true
            pendingRenewal = due
            wakeWriter()
        }
        return order
    }

    /// The spool writer wrote a reservation of orders (or could not: then the next order asks again).
    public func renewed(_ renewal: OrderClock.Renewal, written: Bool) {
        if written { orders.renewed(renewal) }
        renewing = false
        // While this renewal waited for a slow disk, the clock may have passed it and written a larger reservation
        // itself; whichever file write ended last is on disk, so the larger one is written once more.
        if written, let larger = orders.rewriteIfBeyond(renewal) {
            renewing = true
            pendingRenewal = larger
            wakeWriter()
        }
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

    /// Hands a closed batch to the spool writer and returns at once: the sampling loop never waits for the disk.
    /// While the disk is slower than sampling, closed batches wait here, up to ``unwrittenLimit`` bytes; past it the
    /// oldest waiting batch is lost, counted and reported to the daemon like one dropped from a full spool.
    public func store(_ record: SpoolRecord) {
        let write = spool.reserve(record)
        unwritten.append(write)
        unwrittenBytes += write.size
        while unwrittenBytes > unwrittenLimit, unwritten.count > 1 {
            let lost = unwritten.removeFirst()
            unwrittenBytes -= lost.size
            unreportedDrops += 1 + lost.droppedBefore
            totalDropped += 1
            slowDiskLosses += 1
            if slowDiskLosses == 1 {
                logger.error(
                    "the spool's disk is slower than sampling: \(Units.formatBytes(Double(unwrittenLimit))) of batches wait to be written; the oldest are lost until it catches up (counted, and reported to the daemon)"
                )
            }
        }
        wakeWriter()
    }

    /// What the spool writer does next.
    public enum SpoolJob: Sendable {
        case batch(Spool.Write)
        case orders(OrderClock.Renewal)
    }

    /// The next write for the spool writer: a reservation of orders first, then batches oldest first; nil once
    /// ``finishWrites()`` was called and every batch is written. For the spool writer only (one at a time).
    public func nextWrite() async -> SpoolJob? {
        while unwritten.isEmpty && pendingRenewal == nil {
            if writesFinished { return nil }
            await withCheckedContinuation { writer = $0 }
        }
        if let renewal = pendingRenewal {
            pendingRenewal = nil
            return .orders(renewal)
        }
        let write = unwritten.removeFirst()
        unwrittenBytes -= write.size
        return .batch(write)
    }

    /// No more batches will be stored: the writer ends once it has written those waiting.
    public func finishWrites() {
        writesFinished = true
        wakeWriter()
    }

    private func wakeWriter() {
        if let writer {
            self.writer = nil
            writer.resume()
        }
    }

    /// The spool writer could not write a batch (a full or failing disk): it is lost, and the count it carried goes
    /// in the next batch, with this batch added to it.
    public func writeFailed(_ write: Spool.Write) {
        unreportedDrops += 1 + write.droppedBefore
    }

    /// Indexes a batch the spool writer has written, dropping the oldest if the spool is full.
    public func written(_ write: Spool.Write) {
        if unwritten.isEmpty && slowDiskLosses > 0 {
            logger.notice("the spool's disk caught up; \(slowDiskLosses) batch(es) were lost waiting for it")
            slowDiskLosses = 0
        }
        let (dropped, theirDrops) = spool.add(write)
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
        // Entries are in ordinal order: a binary search, as a long replay asks once per batch.
        var low = 0
        var high = spool.entries.count
        while low < high {
            let middle = (low + high) / 2
            if spool.entries[middle].ordinal > ordinal { high = middle } else { low = middle + 1 }
        }
        return low < spool.entries.count ? spool.entries[low] : nil
    }

    /// The ordinal the next batch stored will get: a connection sends batches from it on (made while it is open)
    /// before its backlog.
    public var nextOrdinal: UInt64 { spool.nextOrdinal }

    /// What a connection sends next: the oldest batch made since it opened (ordinal `liveFrom` or later) not yet
    /// sent, else the oldest batch of the backlog not yet sent. Fresh batches go first so that after a long outage
    /// the daemon, its dashboards and its alerts see the present at once while the replay fills in the past; the
    /// daemon places each batch by its order wherever it arrives (docs/protocol.md, "Order").
    public func entryToSend(liveFrom: UInt64, liveSentUpTo: UInt64, backlogSentUpTo: UInt64) -> Spool.Entry? {
        if let live = entry(after: max(liveSentUpTo, liveFrom - 1)) { return live }
        if let old = entry(after: backlogSentUpTo), old.ordinal < liveFrom { return old }
        return nil
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
        if rejected > 0 { parts.append("\(rejected) rejected by the daemon (in \(spool.rejectedDirectory))") }
        return parts.joined(separator: "; ")
    }

    // MARK: Session bookkeeping

    public func sessionStarted(_ daemon: String) {
        connectedTo = daemon
        inFlight = 0
        // A daemon asks for a slower pace on every connection while it needs one; a new one starts normal.
        pace = .normal
        replaying =
            spool.entries.count > 1 ? (clock.now(), spool.entries.count, spool.nextOrdinal) : nil
        wakeAll()
    }

    public func sessionEnded() {
        connectedTo = nil
        inFlight = 0
        wakeAll()
    }

    public func sent() { inFlight += 1 }

    /// Removes an acknowledged batch from the spool, and says once when the backlog the connection started with
    /// has been delivered (batches made since may still be in flight).
    public func acknowledge(_ ack: Ack, at timestamp: Int64) {
        inFlight = max(0, inFlight - 1)
        if spool.remove(stream: ack.stream, sequence: ack.sequence) { acknowledged += 1 }
        lastAckAt = timestamp
        if let backlog = replaying, spool.entries.first.map({ $0.ordinal >= backlog.below }) ?? true {
            replaying = nil
            logger.notice(
                "replay done: \(backlog.batches) spooled batches delivered in \(Units.formatDuration(timestamp - backlog.started))"
            )
        }
        wakeAll()
    }

    /// The daemon did not store a batch. Refused for good, the batch leaves the queue for `rejected/` (kept for an
    /// operator, who can send it again) and delivery goes on with the batches behind it; otherwise it stays spooled
    /// and the sender sends it again on its next connection.
    public func reject(_ reject: Reject) {
        inFlight = max(0, inFlight - 1)
        defer { wakeAll() }
        guard reject.permanent else {
            logger.warning("the daemon could not store \(reject); it stays spooled")
            return
        }
        do {
            guard
                let path = try spool.setAside(
                    stream: reject.stream, sequence: reject.sequence,
                    reason:
                        "\(clock.now()) \(reject.code.name) (\(reject.code.rawValue)): \(reject.message)")
            else {
                logger.warning("the daemon refused a batch no longer spooled: \(reject)")
                return
            }
            rejected += 1
            logger.error(
                "the daemon refused \(reject); moved to \(path) and delivery goes on (to send it again, move it back into \(spool.directory) and restart the agent)",
                metadata: ["rejected_total": "\(rejected)"])
        } catch {
            // Left in the queue, it is sent (and refused) again on the next connection; nothing is lost.
            logger.error("the daemon refused \(reject), and it could not be set aside: \(error)")
        }
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
