import Logging
import PulseCore
import PulseStore
import ServiceLifecycle
import Synchronization

/// The single writer of the store, with group commit: every batch that arrived while the previous commit was
/// running goes into the next one, so one fsync covers many batches and durability does not cost throughput.
/// Completions (acknowledgements) run after the commit. Asks agents to slow down when it falls behind.
public final class IngestService: Service, Sendable {
    let store: any MetricStore
    let queue: IngestQueue
    let logger: Logger
    let commitDelay: Int64
    let paceThreshold: Int
    let heartbeat: LoopHeartbeat
    /// Called when the pace agents should follow changes.
    let onPace: @Sendable (Pace) -> Void
    /// Commit durations and acknowledgement latencies are recorded here.
    let metrics: DaemonMetrics?

    /// Counter values and batches stored since start, duplicates acknowledged (for status and benchmarks).
    public let valuesStored = Atomic<Int64>(0)
    public let batchesStored = Atomic<Int64>(0)
    public let duplicates = Atomic<Int64>(0)
    /// Why the store cannot write, while it cannot.
    public let writeFailure = Mutex<String?>(nil)

    public init(
        store: any MetricStore, queue: IngestQueue, logger: Logger, commitDelay: Int64 = 0, paceThreshold: Int = 4_096,
        heartbeat: LoopHeartbeat = LoopHeartbeat("ingest"), metrics: DaemonMetrics? = nil,
        onPace: @escaping @Sendable (Pace) -> Void = { _ in }
    ) {
        self.store = store
        self.queue = queue
        self.logger = logger
        self.commitDelay = commitDelay
        self.paceThreshold = paceThreshold
        self.heartbeat = heartbeat
        self.onPace = onPace
        self.metrics = metrics
    }

    /// Commits until the queue is closed (graceful shutdown) and everything in it is stored and acknowledged.
    public func run() async throws {
        let queue = self.queue
        // Wakes an idle loop every two seconds so it beats for the watchdog.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                queue.wake()
            }
        }
        defer { ticker.cancel() }
        await withGracefulShutdownHandler {
            // Cancelled when another service fails (an address in use): the queue closes as on a stop and the loop
            // ends instead of waiting for batches for ever. Commits fail once cancelled, so what it holds is not
            // acknowledged: its agents send it again to the next daemon.
            await withTaskCancellationHandler {
                await loop()
            } onCancel: {
                queue.close()
            }
        } onGracefulShutdown: {
            queue.close()
        }
        heartbeat.finish()
        // The listener closes the queue first (so connections are acknowledged before they are closed); this
        // service still ends only when the group shuts it down, as a service group expects.
        try? await gracefulShutdown()
    }

    private func loop() async {
        var pressured = false
        var calmCycles = 0
        var refusals = 0  // the queue's refusals as of the last commit
        var fullLogged = false
        while true {
            // A commit may take a slow disk 20 s; one that hangs (a stuck disk) stops the beats.
            heartbeat.beat(within: 20_000)
            let items: [IngestQueue.Item]
            if commitDelay > 0 {
                // Gather for the delay before taking anything, so a commit never holds more than the queue's limit.
                await queue.waitForItems()
                if queue.pending > 0 { try? await Task.sleep(for: .milliseconds(commitDelay)) }
                items = queue.takeNow() ?? []
            } else {
                items = await queue.take()
            }
            if items.isEmpty {
                if queue.isFinished { return }
                continue
            }
            await commit(items, pressured: &pressured)
            queue.committed(items.count)
            logger.debug("committed \(items.count) batch(es)")
            // The queue was full: connections stopped reading until it had room (TCP backpressure). Said once
            // until ingest catches up.
            let queueRefusals = queue.refusals
            if queueRefusals > refusals && !fullLogged {
                fullLogged = true
                logger.warning(
                    "ingest queue full (\(queue.limit) batches, [ingest] queue_limit): connections wait before reading more; agents keep their batches"
                )
            }
            refusals = queueRefusals
            // Backpressure: ask agents to batch less often when one commit gathers `paceThreshold` batches (or the
            // whole queue: the writer is behind); lift it after ten commits in a row under half of that
            // (hysteresis, no flapping).
            let threshold = min(paceThreshold, queue.limit)
            if items.count >= threshold && !pressured {
                pressured = true
                calmCycles = 0
                logger.warning("ingest is behind (\(items.count) batches in one commit): asking agents to slow down")
                onPace(Pace(sampleFactor: 1, batchFactor: 4))
            } else if pressured && items.count >= threshold / 2 {
                calmCycles = 0
            } else if pressured {
                calmCycles += 1
                if calmCycles >= 10 {
                    pressured = false
                    fullLogged = false
                    logger.notice("ingest caught up: agents may return to normal pace")
                    onPace(.normal)
                }
            }
        }
    }

    /// A failure of the whole store (damaged, unusable), which no batch of the group caused: committing the group
    /// again in halves would only repeat it for every batch.
    static func storeWide(_ error: any Error) -> Bool {
        switch error {
        case StoreError.damaged, StoreError.unusable: true
        default: false
        }
    }

    /// Commits `items` and completes them. While the store cannot write (a full disk), holds them, unacknowledged,
    /// and tries again with backoff, asking agents to slow down: the queue fills behind them and connections stop
    /// reading, so nothing is refused and nothing is lost, and acknowledgements resume once the disk has room. Said
    /// once when it starts and once when it ends, and shown in the status line meanwhile.
    private func commit(_ items: [IngestQueue.Item], pressured: inout Bool) async {
        let started = ContinuousClock.now
        var failingSince: ContinuousClock.Instant?
        var delay = Duration.milliseconds(250)
        let outcomes: [IngestOutcome]
        while true {
            heartbeat.beat(within: 20_000)
            do {
                outcomes = try await store.ingest(items.map(\.batch), receivedAt: WallClock.milliseconds())
                break
            } catch StoreError.cannotWrite(let reason) where !queue.isClosed {
                if failingSince == nil {
                    failingSince = .now
                    logger.error(
                        "\(reason): holding \(items.count) batch(es) unacknowledged and retrying; agents asked to slow down"
                    )
                    writeFailure.withLock { $0 = reason }
                    pressured = true
                    onPace(Pace(sampleFactor: 1, batchFactor: 4))
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            } catch  where items.count > 1 && !queue.isClosed && !Self.storeWide(error) {
                // One batch the store refuses must not fail the batches of every other agent in its group: the
                // group is committed again in halves, in order, down to the batch that fails alone (about 2 log₂ n
                // commits for one such batch among n).
                writeFailure.withLock { $0 = nil }
                logger.debug("a commit of \(items.count) batches failed (\(error)): committing them in halves")
                let half = items.count / 2
                await commit(Array(items[..<half]), pressured: &pressured)
                await commit(Array(items[half...]), pressured: &pressured)
                return
            } catch {
                writeFailure.withLock { $0 = nil }
                logger.error("cannot store \(items.count) batch(es), none acknowledged: \(error)")
                for item in items {
                    item.completion(.failure(error))
                }
                return
            }
        }
        if let failingSince {
            writeFailure.withLock { $0 = nil }
            logger.notice(
                "the store writes again after \(Units.fixed(Double((ContinuousClock.now - failingSince).components.seconds), decimals: 0)) s; \(items.count) held batch(es) stored"
            )
        }
        var values: Int64 = 0
        var stored: Int64 = 0
        for (item, outcome) in zip(items, outcomes) {
            if outcome == .stored {
                values += Int64(item.batch.valueCount)
                stored += 1
            }
            item.completion(.success(outcome))
        }
        metrics?.recordCommit(items, started: started)
        valuesStored.add(values, ordering: .relaxed)
        batchesStored.add(stored, ordering: .relaxed)
        duplicates.add(Int64(items.count) - stored, ordering: .relaxed)
    }
}
