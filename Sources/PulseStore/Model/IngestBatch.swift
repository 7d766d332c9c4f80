import PulseAnalytics
import PulseCore

/// A decoded batch made ready for the store's single writer: per interface section, the rolled-up counters that
/// counting needs, the link facts in force at each sample, and the raw chunk already encoded.
///
/// Made on the connection's event loop (``init(agent:batch:descriptors:)`` is pure CPU), so the work of many
/// connections runs in parallel and the writer only counts and writes rows; a queued batch holds its compact
/// chunks rather than sixteen decoded values per sample.
public struct IngestBatch: Sendable {
    public struct Section: Sendable {
        public var descriptor: InterfaceDescriptor
        /// Tick indices in the batch, increasing.
        public var ticks: [Int32]
        /// The agent's timestamps of those ticks (before the clock check).
        public var timestamps: [Int64]
        public var traffic: [Traffic]
        /// Link facts reported for this interface in the batch, by tick, increasing.
        public var links: [(tick: Int32, state: LinkState)]
        /// All sixteen counters, coded as a ``SeriesChunk``.
        public var chunk: [UInt8]
    }

    public var agent: AgentIdentity
    public var stream: UInt64
    public var sequence: UInt64
    public var order: UInt64
    public var droppedBefore: UInt64
    public var interval: Int64
    public var heartbeat: Int64
    /// The batch's last timestamp, which the clock check compares with the time of the commit.
    public var lastTimestamp: Int64
    public var valueCount: Int
    public var sections: [Section]
    /// When the daemon received it, when that was not the time of its commit: a batch applied from the journal
    /// (``IngestJournal``) after its acknowledgement is checked against the daemon's clock as it was on arrival.
    public var receivedAt: Int64?

    /// Prepares a decoded batch whose sections are described by `descriptors` (same order).
    public init(agent: AgentIdentity, batch: WireBatch, descriptors: [InterfaceDescriptor]) {
        self.agent = agent
        stream = batch.stream
        sequence = batch.sequence
        order = batch.order
        droppedBefore = batch.droppedBefore
        interval = Int64(clamping: batch.interval)
        heartbeat = Int64(clamping: batch.heartbeat)
        lastTimestamp = batch.timestamps.last ?? 0
        valueCount = batch.valueCount
        var linksByID = [UInt32: [(tick: Int32, state: LinkState)]]()
        for record in batch.linkStates {
            linksByID[record.descriptorID, default: []].append((Int32(record.tick), record.state))
        }
        sections = zip(batch.sections, descriptors).map { section, descriptor in
            let timestamps = section.ticks.map { batch.timestamps[$0] }
            let traffic = (0..<section.ticks.count).map {
                Traffic(rolledUpFrom: section.values, offset: $0 * Counter.count)
            }
            return Section(
                descriptor: descriptor, ticks: section.ticks.map { Int32($0) }, timestamps: timestamps,
                traffic: traffic,
                links: (linksByID[section.descriptorID] ?? []).sorted { $0.tick < $1.tick },
                chunk: SeriesChunk.encode(timestamps: timestamps, values: section.values))
        }
    }
}

extension IngestBatch {
    /// About how many bytes of memory the batch holds while it waits for a commit or to be applied: per sample its
    /// tick, timestamp and eight rolled-up counters (76 bytes), its sections' chunks, and fixed costs per section and
    /// batch. The ingest queue and the apply backlog are bounded by the sum of these, not only by a count of batches
    /// (a batch may hold 65,536 samples).
    public var memoryCost: Int {
        var bytes = 512 + agent.name.utf8.count + agent.hostname.utf8.count
        for section in sections {
            bytes += 160 + section.ticks.count * 76 + section.chunk.count + section.links.count * 48
        }
        return bytes
    }
}

/// What the store did with one batch of a group commit.
public enum IngestOutcome: Sendable, Hashable {
    case stored
    /// The (stream, sequence) was already stored: acknowledged, not stored again.
    case duplicate
}
