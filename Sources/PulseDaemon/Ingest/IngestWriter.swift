import Foundation
import GRDB
import Logging
import NIOConcurrencyHelpers
import PulseCore
import Synchronization

/// Who sent a batch, as established by the TLS handshake and `HELLO`.
public struct AgentIdentity: Sendable, Hashable {
    /// The common name of the agent's client certificate.
    public var name: String
    public var hostname: String
    public var version: String

    public init(name: String, hostname: String, version: String) {
        self.name = name
        self.hostname = hostname
        self.version = version
    }
}

/// A batch waiting for its durable write, already in its stored form.
///
/// Made on the connection's event loop: the chunks are encoded there (in parallel across connections), so the
/// single writer thread only inserts rows, and a queued batch holds its compact chunks (about the size of the
/// frame) rather than the decoded values (eight bytes each).
public struct IngestItem: Sendable {
    /// One interface's samples of the batch, encoded as a ``SeriesChunk``.
    public struct Chunk: Sendable {
        public var descriptor: InterfaceDescriptor
        public var firstTimestamp: Int64
        public var lastTimestamp: Int64
        public var sampleCount: Int
        public var data: [UInt8]
    }

    public struct LinkChange: Sendable {
        public var descriptorID: UInt32
        public var timestamp: Int64
        public var state: LinkState
    }

    public var agent: AgentIdentity
    public var stream: UInt64
    public var sequence: UInt64
    public var droppedBefore: UInt64
    public var valueCount: Int
    public var chunks: [Chunk]
    public var linkChanges: [LinkChange]
    /// Called on the writer thread after the commit (or its failure): only then may the batch be acknowledged.
    public var completion: @Sendable (Result<IngestOutcome, any Error>) -> Void

    /// Prepares a decoded batch whose sections are described by `descriptors` (same order).
    public init(
        agent: AgentIdentity, batch: WireBatch, descriptors: [InterfaceDescriptor],
        completion: @escaping @Sendable (Result<IngestOutcome, any Error>) -> Void
    ) {
        self.agent = agent
        stream = batch.stream
        sequence = batch.sequence
        droppedBefore = batch.droppedBefore
        valueCount = batch.valueCount
        chunks = zip(batch.sections, descriptors).map { section, descriptor in
            let timestamps = section.ticks.map { batch.timestamps[$0] }
            return Chunk(
                descriptor: descriptor, firstTimestamp: timestamps[0], lastTimestamp: timestamps[timestamps.count - 1],
                sampleCount: timestamps.count, data: SeriesChunk.encode(timestamps: timestamps, values: section.values))
        }
        linkChanges = batch.linkStates.map {
            LinkChange(descriptorID: $0.descriptorID, timestamp: batch.timestamps[$0.tick], state: $0.state)
        }
        self.completion = completion
    }
}

public enum IngestOutcome: Sendable, Hashable {
    case stored
    /// The (stream, sequence) was already stored: acknowledged, not stored again.
    case duplicate
}

/// The single writer of the store, on its own thread, with group commit: every batch that arrived while the
/// previous transaction was committing goes into the next one, so one fsync covers many batches and durability
/// does not cost throughput. Completions run after the commit.
public final class IngestWriter: Sendable {
    private let store: Store
    private let logger: Logger
    private let condition = ConditionLock(value: 0)
    private let queue = NIOLockedValueBox(Queue())
    private let commitDelay: Int64
    private let paceThreshold: Int
    private let stopped = ConditionLock(value: 0)

    /// Counter values stored since start (for status and benchmarks).
    public let valuesStored = Atomic<Int64>(0)
    public let batchesStored = Atomic<Int64>(0)
    public let duplicates = Atomic<Int64>(0)
    /// Called on the writer thread when the pace agents should follow changes.
    private let onPace: @Sendable (Pace) -> Void

    private struct Queue {
        var items: [IngestItem] = []
        var stopping = false
    }

    private let heartbeat: LoopHeartbeat

    public init(
        store: Store, logger: Logger, commitDelay: Int64 = 0, paceThreshold: Int = 4_096,
        heartbeat: LoopHeartbeat = LoopHeartbeat("ingest"), onPace: @escaping @Sendable (Pace) -> Void = { _ in }
    ) {
        self.store = store
        self.heartbeat = heartbeat
        self.logger = logger
        self.commitDelay = commitDelay
        self.paceThreshold = paceThreshold
        self.onPace = onPace
        let thread = Thread { [self] in self.loop() }
        thread.name = "netpulse-ingest"
        thread.start()
    }

    /// Queues a batch; its completion runs once it is durably stored. Never blocks.
    public func submit(_ item: IngestItem) {
        let accepted = queue.withLockedValue { queue in
            guard !queue.stopping else { return false }
            queue.items.append(item)
            return true
        }
        guard accepted else {
            item.completion(.failure(ErrorFrame(.shuttingDown, "the daemon is shutting down")))
            return
        }
        condition.lock()
        condition.unlock(withValue: 1)
    }

    /// Batches queued and not yet committed.
    public var pending: Int { queue.withLockedValue { $0.items.count } }

    /// Stores what is queued, then stops the thread. Blocks until it has.
    public func drainAndStop() {
        queue.withLockedValue { $0.stopping = true }
        condition.lock()
        condition.unlock(withValue: 1)
        stopped.lock(whenValue: 1)
        stopped.unlock()
    }

    private func loop() {
        var cache = WriterCache()
        var pressured = false
        var calmCycles = 0
        while true {
            // Wake at least every few seconds, to beat for the watchdog even when idle; allow a slow disk 20 s per
            // commit. A commit that hangs (a stuck disk) stops the beats.
            heartbeat.beat(within: 20_000)
            guard condition.lock(whenValue: 1, timeoutSeconds: 2) else { continue }
            condition.unlock(withValue: 0)
            TestFault.stallIfRequested(.ingest)
            if commitDelay > 0 { Thread.sleep(forTimeInterval: Double(commitDelay) / 1000) }
            let (items, stopping) = queue.withLockedValue { queue in
                defer { queue.items.removeAll(keepingCapacity: true) }
                return (queue.items, queue.stopping)
            }
            if !items.isEmpty {
                commit(items, cache: &cache)
                // Backpressure: ask agents to batch less often when one commit gathers `paceThreshold` batches
                // (the writer is behind); lift it after ten commits in a row under half of that (hysteresis, so
                // the pace does not flap).
                if items.count >= paceThreshold && !pressured {
                    pressured = true
                    calmCycles = 0
                    logger.warning(
                        "ingest is behind (\(items.count) batches in one commit): asking agents to slow down")
                    onPace(Pace(sampleFactor: 1, batchFactor: 4))
                } else if pressured && items.count >= paceThreshold / 2 {
                    calmCycles = 0
                } else if pressured {
                    calmCycles += 1
                    if calmCycles >= 10 {
                        pressured = false
                        logger.notice("ingest caught up: agents may return to normal pace")
                        onPace(.normal)
                    }
                }
            }
            if stopping && pending == 0 { break }
        }
        heartbeat.finish()
        stopped.lock()
        stopped.unlock(withValue: 1)
    }

    private func commit(_ items: [IngestItem], cache: inout WriterCache) {
        var outcomes = [IngestOutcome]()
        outcomes.reserveCapacity(items.count)
        let now = WallClock.milliseconds()
        do {
            try store.pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    outcomes.removeAll(keepingCapacity: true)
                    for item in items { outcomes.append(try cache.store(item, at: now, in: db)) }
                    return .commit
                }
            }
        } catch {
            cache = WriterCache()
            logger.error("cannot store \(items.count) batch(es), none acknowledged: \(error)")
            for item in items {
                item.completion(.failure(ErrorFrame(.storageFailure, "the daemon cannot store: \(error)")))
            }
            return
        }
        var values: Int64 = 0
        var stored: Int64 = 0
        for (item, outcome) in zip(items, outcomes) {
            if outcome == .stored {
                values += Int64(item.valueCount)
                stored += 1
            }
            item.completion(.success(outcome))
        }
        valuesStored.add(values, ordering: .relaxed)
        batchesStored.add(stored, ordering: .relaxed)
        duplicates.add(Int64(items.count) - stored, ordering: .relaxed)
    }
}

/// Row ids the writer has already looked up or created. Owned by the writer thread; dropped when a transaction
/// fails, because the rows it created were rolled back.
struct WriterCache {
    struct SeriesKey: Hashable {
        var agent: Int64
        var descriptor: InterfaceDescriptor.Identity
    }
    var agents: [String: (id: Int64, identity: AgentIdentity, lastSeen: Int64)] = [:]
    var streams: [StreamKey: Int64] = [:]
    var series: [SeriesKey: Int64] = [:]

    struct StreamKey: Hashable {
        var agent: Int64
        var stream: UInt64
    }

    mutating func store(_ item: IngestItem, at now: Int64, in db: Database) throws -> IngestOutcome {
        let agent = try agentID(item.agent, at: now, in: db)
        let streamKey = StreamKey(agent: agent, stream: item.stream)
        let stream: Int64
        if let known = streams[streamKey] {
            stream = known
        } else {
            try db.execute(
                sql: "INSERT INTO stream (agent_id, stream) VALUES (?, ?) ON CONFLICT DO NOTHING",
                arguments: [agent, Int64(bitPattern: item.stream)])
            stream = try Int64.fetchOne(
                db, sql: "SELECT id FROM stream WHERE agent_id = ? AND stream = ?",
                arguments: [agent, Int64(bitPattern: item.stream)])!
            streams[streamKey] = stream
        }
        try db.cachedStatement(
            sql:
                "INSERT INTO batch (stream_id, sequence, received, value_count) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
        ).execute(arguments: [stream, Int64(bitPattern: item.sequence), now, item.valueCount])
        guard db.changesCount == 1 else { return .duplicate }
        if item.droppedBefore > 0 {
            try db.execute(
                sql: "UPDATE stream SET dropped = dropped + ? WHERE id = ?",
                arguments: [Int64(clamping: item.droppedBefore), stream])
        }

        let insertChunk = try db.cachedStatement(
            sql: "INSERT INTO chunk (series_id, first_ts, last_ts, sample_count, data) VALUES (?, ?, ?, ?, ?)")
        var seriesOfDescriptor = [UInt32: Int64]()
        for chunk in item.chunks {
            let series = try seriesID(agent: agent, chunk.descriptor, at: now, in: db)
            seriesOfDescriptor[chunk.descriptor.id] = series
            try insertChunk.execute(arguments: [
                series, chunk.firstTimestamp, chunk.lastTimestamp, chunk.sampleCount, Data(chunk.data),
            ])
        }
        for record in item.linkChanges {
            guard let series = seriesOfDescriptor[record.descriptorID] else { continue }
            try db.execute(
                sql: """
                    INSERT INTO link_state (series_id, ts, speed_mbps, operstate, carrier, mtu) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    series, record.timestamp, record.state.speedMbps.map { Int64($0) },
                    record.state.operState.name, record.state.carrier, Int64(record.state.mtu),
                ])
        }
        return .stored
    }

    private mutating func agentID(_ identity: AgentIdentity, at now: Int64, in db: Database) throws -> Int64 {
        if let known = agents[identity.name], known.identity == identity, now - known.lastSeen < 60_000 {
            return known.id
        }
        try db.execute(
            sql: """
                INSERT INTO agent (name, hostname, version, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, version = excluded.version,
                    last_seen = excluded.last_seen
                """,
            arguments: [identity.name, identity.hostname, identity.version, now, now])
        let id = try Int64.fetchOne(db, sql: "SELECT id FROM agent WHERE name = ?", arguments: [identity.name])!
        agents[identity.name] = (id, identity, now)
        return id
    }

    private mutating func seriesID(
        agent: Int64, _ descriptor: InterfaceDescriptor, at now: Int64, in db: Database
    ) throws -> Int64 {
        let key = SeriesKey(agent: agent, descriptor: descriptor.identity)
        if let known = series[key] { return known }
        // Interfaces come and go (containers, VPNs): keep the cache bounded; a miss only costs a lookup.
        if series.count >= Self.maximumCachedSeries { series.removeAll(keepingCapacity: true) }
        let bootID = Data(Self.bytes(descriptor.epoch.bootID))
        let name = Data(descriptor.name.bytes)
        let arguments: StatementArguments = [
            agent, name, bootID, Int64(descriptor.epoch.ifindex), Int64(descriptor.epoch.width.rawValue),
        ]
        try db.execute(
            sql: """
                INSERT INTO series (agent_id, interface, boot_id, ifindex, width, first_seen) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """,
            arguments: arguments + [now])
        let id = try Int64.fetchOne(
            db,
            sql:
                "SELECT id FROM series WHERE agent_id = ? AND interface = ? AND boot_id = ? AND ifindex = ? AND width = ?",
            arguments: arguments)!
        series[key] = id
        return id
    }

    static let maximumCachedSeries = 100_000

    static func bytes(_ bootID: BootID) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: bootID.high >> UInt64(56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: bootID.low >> UInt64(56 - 8 * $0)) }
    }
}

extension InterfaceDescriptor {
    /// What makes two descriptors the same series: the name and the epoch, not the stream-local id.
    public struct Identity: Hashable, Sendable {
        public var name: InterfaceName
        public var epoch: CounterEpoch
    }

    public var identity: Identity { Identity(name: name, epoch: epoch) }
}
