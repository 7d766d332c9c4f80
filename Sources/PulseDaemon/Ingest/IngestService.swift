import Logging
import PulseCore
import PulseStore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The single writer of the store, with group commit: every batch that arrived while the previous commit was
/// running goes into the next one, so one fsync covers many batches and durability does not cost throughput.
/// Completions (acknowledgements) run after the commit. Asks agents to slow down when it falls behind.
///
/// With a journal (a ``JournaledStore``: SQLite), the group commit writes the batches to the journal and
/// acknowledges them, and an applier beside it applies the journal to the store in groups of its own, as large as
/// its backlog: a store commit costs about the same for 1,000 batches as for 8,000, so acknowledgements no longer wait
/// for it. Reads see a batch once it is applied. Once `queue.limit` journaled batches wait to be applied, the
/// journal's commits wait (so at most about three queues' worth are journaled and unapplied: the waiting ones, one
/// more commit, and the store commit under way), the queue fills and connections stop reading (TCP backpressure);
/// agents are asked to slow down before that.
public final class IngestService: Service, Sendable {
    let store: any MetricStore
    let journal: (any BatchJournal)?
    let backlog: ApplyBacklog
    let queue: IngestQueue
    let logger: Logger
    /// Dates what is journaled and applied (`receivedAt`).
    let clock: WallClock
    /// The journal's and the applier's fault points (tests of debug builds).
    let faults: FaultPoints
    let commitDelay: Int64
    let paceThreshold: Int
    let heartbeat: LoopHeartbeat
    /// Called when the pace agents should follow changes.
    let onPace: @Sendable (Pace) -> Void
    /// Commit durations and acknowledgement latencies are recorded here.
    let metrics: DaemonMetrics?
    /// Called after each store commit with the batches it stored, once reads can see them (the live pages).
    let onStored: @Sendable ([IngestBatch]) -> Void

    /// Counter values and batches stored since start, duplicates acknowledged (for status and benchmarks).
    public let valuesStored = Atomic<Int64>(0)
    public let batchesStored = Atomic<Int64>(0)
    public let duplicates = Atomic<Int64>(0)
    /// Journaled batches the store refused and that were set aside.
    public let rejectedByStore = Atomic<Int64>(0)
    /// Why the store cannot write, while it cannot.
    public let writeFailure = Mutex<String?>(nil)
    /// The applier's liveness (with a journal): beats before each store commit, idle while nothing waits; a commit
    /// that hangs (a stuck disk) stops the watchdog's pings as the ingest loop's did before the journal.
    public let applyHeartbeat = LoopHeartbeat("apply")
    /// Why the applier stopped, when it could not go on (a damaged store): the service then fails, so the daemon
    /// exits and its next start applies what the journal holds.
    let applyFailure = Mutex<String?>(nil)
    /// Set by the applier when it asked agents to slow down (a full disk), so the ingest loop lifts it later.
    let applierPaced = Atomic<Bool>(false)
    /// Which batch the store is applying (``ApplyMarker``); nil when it could not be opened.
    let marker: ApplyMarker?
    /// A batch the last run died while applying, once (its mark carries the death on to this run's marks), or
    /// twice (set aside from the journal, with every copy of it journaled since, and refused for the rest of the run
    /// when its agent sends it again).
    let suspect = Mutex<ApplyMarker.Mark?>(nil)
    let poisoned = Mutex<ApplyMarker.Mark?>(nil)
    /// Batches set aside or refused because the daemon died twice while applying them, since start.
    public let setAsideAfterDeaths = Atomic<Int64>(0)
    /// Journal commits since start, and whether a test fault asked for a kill after this one (debug builds).
    let journalCommits = Atomic<Int>(0)
    let killAfterAcknowledging = Atomic<Bool>(false)

    /// - Parameter markerPath: where to keep the ``ApplyMarker``; with a journal, beside it unless given.
    public init(
        store: any MetricStore, journal: (any BatchJournal)? = nil, queue: IngestQueue, logger: Logger,
        commitDelay: Int64 = 0, paceThreshold: Int = 4_096, heartbeat: LoopHeartbeat = LoopHeartbeat("ingest"),
        metrics: DaemonMetrics? = nil, markerPath: String? = nil, clock: WallClock = .system,
        faults: FaultPoints = .none, onPace: @escaping @Sendable (Pace) -> Void = { _ in },
        onStored: @escaping @Sendable ([IngestBatch]) -> Void = { _ in }
    ) {
        precondition(journal == nil || store is any JournaledStore, "a journal is applied to a journaled store")
        self.store = store
        self.journal = journal
        self.clock = clock
        self.faults = faults
        backlog = ApplyBacklog(clock: clock)
        var marker: ApplyMarker?
        if let path = markerPath ?? journal.map({ $0.path + ".applying" }) {
            do {
                marker = try ApplyMarker(path: path)
            } catch {
                logger.error(
                    "cannot keep track of the batch being applied (\(error)): a batch that kills the daemon would do so at every start"
                )
            }
        }
        self.marker = marker
        self.queue = queue
        self.logger = logger
        self.commitDelay = commitDelay
        self.paceThreshold = paceThreshold
        self.heartbeat = heartbeat
        self.onPace = onPace
        self.onStored = onStored
        self.metrics = metrics
    }

    /// Commits until the queue is closed (graceful shutdown) and everything in it is stored and acknowledged.
    public func run() async throws {
        let queue = self.queue
        // Wakes an idle loop every two seconds so it beats for the watchdog.
        let backlog = self.backlog
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                queue.wake()
                backlog.wakeRoomWaiters()
            }
        }
        defer { ticker.cancel() }
        let unplaced = Task { await reportUnplaced() }
        defer { unplaced.cancel() }
        try readMarker()
        // What the last run journaled and did not apply (a crash, a kill) is applied before anything new.
        var applier: Task<Void, Never>?
        if let journal, let store = store as? any JournaledStore {
            try await recover(journal, into: store)
            applier = Task { await applyLoop(journal, into: store) }
        }
        let started = applier
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
        // Everything journaled is applied before the store closes (unless cancelled, or the daemon's stop deadline
        // comes first: then the next start applies the rest).
        backlog.close()
        await withTaskCancellationHandler {
            await started?.value
        } onCancel: {
            started?.cancel()
        }
        heartbeat.finish()
        applyHeartbeat.finish()
        if let failure = applyFailure.withLock({ $0 }) {
            throw StoreError.unusable("the journal cannot be applied to the store: \(failure)")
        }
        // The listener closes the queue first (so connections are acknowledged before they are closed); this
        // service still ends only when the group shuts it down, as a service group expects.
        try? await gracefulShutdown()
    }

    private func loop() async {
        var pressured = false
        var calmCycles = 0
        var refusals = 0  // the queue's refusals as of the last commit
        var fullLogged = false
        var calmSince: ContinuousClock.Instant?
        while true {
            // A commit may take a slow disk 20 s; one that hangs (a stuck disk) stops the beats.
            heartbeat.beat(within: 20_000)
            // The applier is a whole queue behind: the journal waits for it, so the queue fills (TCP backpressure).
            // The ticker wakes the wait every 2 s so this loop beats; the applier's own heartbeat tells a stuck store.
            while journal != nil && (backlog.count >= queue.limit || backlog.bytes >= queue.byteLimit)
                && applyFailure.withLock({ $0 }) == nil
            {
                heartbeat.beat(within: 20_000)
                await backlog.waitForRoom(below: queue.limit, bytes: queue.byteLimit)
            }
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
                    "ingest queue full (\(queue.limit) batches or \(Units.formatBytes(Double(queue.byteLimit))) of them, [ingest] queue_limit and queue_bytes): connections wait before reading more; agents keep their batches"
                )
            }
            refusals = queueRefusals
            // Backpressure: ask agents to batch less often when one commit gathers `paceThreshold` batches (or the
            // whole queue: the writer is behind), or as many journaled batches wait to be applied; lift it after ten
            // commits in a row under half of that (hysteresis, no flapping), or with a journal, whose commits come
            // every few milliseconds while its backlog falls and rises by a store commit at a time, after 5 s under
            // half of it.
            let threshold = min(paceThreshold, queue.limit)
            let behind = journal == nil ? items.count : max(items.count, backlog.count)
            if applierPaced.exchange(false, ordering: .relaxed) {
                pressured = true
                calmCycles = 0
                calmSince = nil
            }
            if behind >= threshold && !pressured {
                pressured = true
                calmCycles = 0
                calmSince = nil
                logger.warning(
                    "ingest is behind (\(items.count) batches in one commit, \(backlog.count) to apply): asking agents to slow down"
                )
                onPace(Pace(sampleFactor: 1, batchFactor: 4))
            } else if pressured && behind >= threshold / 2 {
                calmCycles = 0
                calmSince = nil
            } else if pressured {
                calmCycles += 1
                let since = calmSince ?? .now
                calmSince = since
                if journal == nil ? calmCycles >= 10 : ContinuousClock.now - since >= .seconds(5) {
                    pressured = false
                    calmSince = nil
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
        // A batch the daemon died on twice is refused for good when its agent sends it again (for the whole run: an
        // agent that did not get the refusal, a connection closed before it, sends it once more).
        if let poison = poisoned.withLock({ $0 }), let index = items.firstIndex(where: { poison.names($0.batch) }) {
            let batch = items[index].batch
            logger.error(
                "refusing batch \(batch.sequence) of agent \(batch.agent.name) (stream \(batch.stream)) for good: the daemon stopped twice while storing it; the agent keeps it in its spool's rejected/"
            )
            setAsideAfterDeaths.add(1, ordering: .relaxed)
            items[index].completion(
                .failure(StoreError.invalidBatch("the daemon stopped twice while storing this batch")))
            var rest = items
            rest.remove(at: index)
            if !rest.isEmpty { await commit(rest, pressured: &pressured) }
            return
        }
        let started = ContinuousClock.now
        var failingSince: ContinuousClock.Instant?
        var delay = Duration.milliseconds(250)
        let outcomes: [IngestOutcome]
        while true {
            heartbeat.beat(within: 20_000)
            do {
                outcomes = try await write(items.map(\.batch))
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
        for (item, outcome) in zip(items, outcomes) { item.completion(.success(outcome)) }
        if killAfterAcknowledging.load(ordering: .relaxed) {
            // A test fault (debug builds): give the acknowledgements time to leave, then die.
            try? await Task.sleep(for: .milliseconds(300))
            kill(getpid(), SIGKILL)
        }
        metrics?.recordCommit(items, started: started)
        if journal == nil { count(items.map(\.batch), outcomes) }
    }

    /// Makes `batches` durable: stored, or journaled and handed to the applier (then each counts as stored: an
    /// acknowledgement from the journal does not say whether the store already had the batch).
    private func write(_ batches: [IngestBatch]) async throws -> [IngestOutcome] {
        let now = clock.now()
        guard let journal else {
            return try await store.ingest(batches, receivedAt: now, willStore: watch(batches, entries: nil))
        }
        var stamped = batches
        for index in stamped.indices { stamped[index].receivedAt = now }
        let ids = try await journal.append(stamped)
        if faults.killRequested(afterJournalCommit: journalCommits.add(1, ordering: .relaxed).newValue) {
            // Not handed to the applier: ``commit(_:pressured:)`` acknowledges these and the daemon is killed, as a
            // kill between the journal and the store leaves it.
            killAfterAcknowledging.store(true, ordering: .relaxed)
            return Array(repeating: .stored, count: batches.count)
        }
        backlog.push(Array(zip(ids, stamped)))
        return Array(repeating: .stored, count: batches.count)
    }

    private func count(_ batches: [IngestBatch], _ outcomes: [IngestOutcome]) {
        var values: Int64 = 0
        var stored = [IngestBatch]()
        for (batch, outcome) in zip(batches, outcomes) where outcome == .stored {
            values += Int64(batch.valueCount)
            stored.append(batch)
        }
        onStored(stored)
        valuesStored.add(values, ordering: .relaxed)
        batchesStored.add(Int64(stored.count), ordering: .relaxed)
        duplicates.add(Int64(batches.count - stored.count), ordering: .relaxed)
    }

    /// Says once a minute, when it happened, how many steps could not be placed in time (`docs/windows.md`, "Time
    /// that cannot be placed"): each batch with such steps is an anomaly in the store, this is the line to notice.
    private func reportUnplaced() async {
        var seen = (try? await store.totals().unplacedSteps) ?? 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(60))
            guard let now = try? await store.totals().unplacedSteps, now > seen else { continue }
            logger.warning(
                "\(now - seen) counted step(s) in the last minute had times that cannot be placed (a clock far off, or data older than [ingest] max_age): their counts are kept as unplaced, in no bucket or bill; the store's anomalies name the batches"
            )
            seen = now
        }
    }

    // MARK: A batch that kills the daemon

    /// Reads what the last run was applying when it stopped: a batch it died on once is watched (a second death on
    /// it sets it aside), one it died on twice is set aside now.
    private func readMarker() throws {
        guard let mark = marker?.interrupted() else { return }
        if let store = store as? any JournaledStore, journal != nil, mark.entry <= (try store.journalApplied()) {
            return
        }
        var died = mark
        died.deaths += 1
        let what =
            "batch \(mark.sequence) of stream \(mark.stream)\(mark.entry > 0 ? " (journal entry \(mark.entry))" : "")"
        if died.deaths >= 2 {
            logger.critical(
                "the daemon stopped twice while applying \(what) (a crash, a watchdog kill or running out of memory): setting it aside and going on"
            )
            poisoned.withLock { $0 = died }
        } else {
            logger.warning(
                "the last run stopped while applying \(what); if this one stops on it again, it is set aside")
            suspect.withLock { $0 = died }
        }
    }

    /// The store's ``MetricStore/ingest(_:receivedAt:willStore:)`` callback for `batches` (journal `entries`, if
    /// any): marks each batch before it is applied, and the commit after.
    private func watch(_ batches: [IngestBatch], entries: [Int64]?) -> (@Sendable (Int) -> Void)? {
        guard let marker else { return nil }
        let (suspect, faults) = (self.suspect.withLock { $0 }, self.faults)
        return { index in
            guard index < batches.count else {
                marker.committing()
                return
            }
            let batch = batches[index]
            var mark = ApplyMarker.Mark(
                entry: entries?[index] ?? 0, agent: ApplyMarker.hash(batch.agent.name), stream: batch.stream,
                sequence: batch.sequence, deaths: 0)
            if let suspect, suspect.entry == mark.entry, suspect.names(batch) { mark.deaths = suspect.deaths }
            marker.applying(mark)
            faults.trapIfRequested(applyingSequence: batch.sequence)
        }
    }

    // MARK: Applying the journal

    /// The most journaled batches one store commit applies.
    static let applyLimit = 8_192

    /// Applies what a previous run journaled and did not apply, in journal order, and removes what is applied.
    private func recover(_ journal: any BatchJournal, into store: any JournaledStore) async throws {
        var cursor = try store.journalApplied()
        try await journal.remove(through: cursor)
        var applied = 0
        while true {
            heartbeat.beat(within: 20_000)
            let (entries, damaged) = try journal.entries(after: cursor, limit: Self.applyLimit)
            for (id, reason) in damaged {
                logger.error(
                    "journal entry \(id) cannot be read (\(reason)); set aside in \(journal.path) (table set_aside)")
                try await journal.setAside(id, reason: reason)
            }
            guard let last = (entries.map(\.id) + damaged.map(\.id)).max() else { break }
            // The batch the last two runs died on, and any copy of it journaled since (its agent sent it again when
            // the acknowledgement did not reach it before the death): set aside in journal order.
            if let poison = poisoned.withLock({ $0 }),
                let index = entries.firstIndex(where: { $0.id == poison.entry || poison.names($0.batch) })
            {
                // The entries before it in order, then it aside, then the rest in the next round.
                try await apply(Array(entries[..<index]), journal: journal, into: store)
                let entry = entries[index].id
                let reason =
                    "the daemon stopped twice while applying it (a crash, a watchdog kill or running out of memory)"
                try await journal.setAside(entry, reason: reason)
                _ = try await store.ingest([], receivedAt: clock.now(), journalThrough: entry)
                setAsideAfterDeaths.add(1, ordering: .relaxed)
                logger.error(
                    "journal entry \(entry) (batch \(poison.sequence)) set aside in \(journal.path) (table set_aside): \(reason); see netpulse journal show"
                )
                cursor = entry
                applied += index
                continue
            }
            try await apply(entries, journal: journal, into: store)
            if damaged.contains(where: { $0.id == last }) {
                _ = try await store.ingest([], receivedAt: clock.now(), journalThrough: last)
            }
            applied += entries.count
            cursor = last
        }
        if applied > 0 {
            logger.notice("applied \(applied) journaled batch(es) the last run had acknowledged but not stored")
        }
    }

    /// Applies the backlog until it is closed and empty. Stops early when cancelled, when the daemon stops while the
    /// store cannot write, or when the store fails in a way no batch explains (then the daemon stops too): the
    /// journal keeps the rest for the next start.
    private func applyLoop(_ journal: any BatchJournal, into store: any JournaledStore) async {
        while true {
            applyHeartbeat.finish()  // idle: waiting for batches is not a stall
            guard let entries = await backlog.take(limit: Self.applyLimit, bytes: queue.byteLimit) else { return }
            do {
                try await apply(entries, journal: journal, into: store)
            } catch {
                if Task.isCancelled { return }
                if queue.isClosed, case StoreError.cannotWrite(let reason) = error {
                    // Stopping while the store cannot write: what is left stays journaled for the next start.
                    logger.warning(
                        "stopping with \(entries.count + backlog.count) acknowledged batch(es) still journaled (\(reason)); the next start applies them"
                    )
                    return
                }
                // The daemon stops taking batches and exits; the journal keeps everything acknowledged.
                logger.critical(
                    "cannot apply the journal to the store: \(error); stopping (the journal keeps the batches)")
                applyFailure.withLock { $0 = "\(error)" }
                queue.close()
                backlog.wakeRoomWaiters()
                return
            }
        }
    }

    /// Applies `entries` in one store commit that also records the journal's cursor, then removes them from the
    /// journal. While the store cannot write (a full disk) it retries with backoff; a group the store refuses is
    /// applied again in halves, down to the batch it refuses alone: set aside in the journal (`set_aside`), logged,
    /// counted and skipped when it breaks one of the store's rules, else the error is thrown.
    private func apply(_ entries: [ApplyBacklog.Entry], journal: any BatchJournal, into store: any JournaledStore)
        async throws
    {
        guard let last = entries.last?.id else { return }
        do {
            try await whileTheStoreCannotWrite(holding: entries.count) {
                let batches = entries.map(\.batch)
                let outcomes = try await store.ingest(
                    batches, receivedAt: clock.now(), journalThrough: last,
                    willStore: watch(batches, entries: entries.map(\.id)))
                count(batches, outcomes)
            }
        } catch
            where entries.count > 1 && !Self.storeWide(error) && !(error is CancellationError)
            && !Self.isCannotWrite(error)
        {
            let half = entries.count / 2
            try await apply(Array(entries[..<half]), journal: journal, into: store)
            try await apply(Array(entries[half...]), journal: journal, into: store)
            return
        } catch StoreError.invalidBatch(let why) {
            // Only a batch that breaks one of the store's rules is set aside; any other failure stops the daemon,
            // the journal keeping everything (a damaged store must not move good batches aside one by one).
            let batch = entries[0].batch
            logger.error(
                "the store refuses batch \(batch.sequence) of agent \(batch.agent.name) (stream \(batch.stream)), already acknowledged: \(why); set aside in \(journal.path) (table set_aside)"
            )
            rejectedByStore.add(1, ordering: .relaxed)
            try await whileTheStoreCannotWrite(holding: 1) {
                try await journal.setAside(last, reason: why)
                _ = try await store.ingest([], receivedAt: clock.now(), journalThrough: last)
            }
        }
        // Removing applied entries may fail (a full disk): they are skipped by the cursor and removed later.
        try? await journal.remove(through: last)
    }

    /// Runs `write` until it does not fail for want of disk: while the store cannot write it waits with backoff
    /// (beating the applier's heartbeat, saying so once, asking agents to slow down), until the daemon stops.
    private func whileTheStoreCannotWrite(holding count: Int, _ write: () async throws -> Void) async throws {
        var delay = Duration.milliseconds(250)
        var failingSince: ContinuousClock.Instant?
        while true {
            applyHeartbeat.beat(within: 20_000)
            do {
                try await write()
                break
            } catch StoreError.cannotWrite(let reason) where !Task.isCancelled && !queue.isClosed {
                if failingSince == nil {
                    failingSince = .now
                    logger.error("\(reason): applying \(count) journaled batch(es) again once it can")
                    writeFailure.withLock { $0 = reason }
                    applierPaced.store(true, ordering: .relaxed)
                    onPace(Pace(sampleFactor: 1, batchFactor: 4))
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
        if let failingSince {
            writeFailure.withLock { $0 = nil }
            logger.notice(
                "the store writes again after \(Units.fixed(Double((ContinuousClock.now - failingSince).components.seconds), decimals: 0)) s"
            )
        }
    }

    static func isCannotWrite(_ error: any Error) -> Bool {
        if case StoreError.cannotWrite = error { return true }
        return false
    }
}
