import PulseCore

/// A batch ready for the spool: the `DESCRIBE` frame for the interfaces it uses, then the `BATCH` frame.
public struct SpoolRecord: Sendable, Hashable {
    public var stream: UInt64
    public var sequence: UInt64
    public var describe: Describe
    public var batch: WireBatch

    /// The bytes stored in the spool file: both frames, as they go on the wire.
    public var bytes: [UInt8] { WireCodec.encode(.describe(describe)) + WireCodec.encode(.batch(batch)) }
}

/// Collects the samples of successive ticks into batches for one stream.
///
/// Interface descriptors get stream-local ids the first time a (name, epoch) is seen; a new epoch gets a new id,
/// so an id never changes meaning and spooled batches stay decodable after a restart. A batch never exceeds the
/// protocol's limits: ``room(within:)`` says how many more samples fit.
public struct Batcher: Sendable {
    public let stream: UInt64
    public private(set) var nextSequence: UInt64 = 1

    private struct Key: Hashable {
        var name: InterfaceName
        var epoch: CounterEpoch
    }
    private var ids: [Key: UInt32] = [:]
    private var descriptors: [UInt32: InterfaceDescriptor] = [:]
    private var nextID: UInt32 = 0
    /// The latest link facts read for each interface, carried into every batch that has samples of it.
    private var linkState: [UInt32: LinkState] = [:]
    /// The flush count at which each id was last used, to forget interfaces that are gone.
    private var lastUsed: [UInt32: Int] = [:]
    private var flushes = 0

    // The open batch: per descriptor id, samples in time order.
    private var samples: [UInt32: [(timestamp: Int64, counters: CounterValues)]] = [:]
    private var order: [UInt32] = []
    private var ticks = Set<Int64>()
    private var links: [(id: UInt32, timestamp: Int64, state: LinkState)] = []
    public private(set) var sampleCount = 0

    /// Ids unused for this many batches are forgotten (a heartbeat uses an idle interface every minute or so).
    static let forgetAfterFlushes = 360

    public init(stream: UInt64) {
        self.stream = stream
    }

    public var isEmpty: Bool { sampleCount == 0 }
    public var tickCount: Int { ticks.count }
    public var sectionCount: Int { order.count }

    /// How many more samples (of one new tick) the open batch can take without passing `limits`, assuming each
    /// may start a section of its own and may bring one earlier tick (an idle interface's last quiet sample).
    public func room(within limits: WireLimits, maximumSamples: Int) -> Int {
        guard tickCount + 2 <= limits.maximumTicksPerBatch else { return 0 }
        let samplesLeft = min(maximumSamples, limits.maximumSamplesPerBatch) - sampleCount
        let sectionsLeft = min(limits.maximumSectionsPerBatch, limits.maximumInterfacesPerDescribe) - sectionCount
        // Each sample adds at most one link-state record (its section's first, or a change).
        let recordsLeft = limits.maximumSectionsPerBatch - links.count
        return max(0, min(samplesLeft, sectionsLeft, recordsLeft))
    }

    /// Adds samples (as chosen by the ``IdleSuppressor``) to the open batch; see ``room(within:maximumSamples:)``.
    public mutating func add(_ items: [(sample: InterfaceSample, timestamp: Int64)]) {
        for (sample, timestamp) in items {
            let key = Key(name: sample.name, epoch: sample.epoch)
            let id: UInt32
            if let known = ids[key] {
                id = known
            } else {
                id = nextID
                nextID &+= 1
                // The name's previous epoch gets no new samples; its descriptor stays until no batch uses it.
                for (oldKey, _) in ids where oldKey.name == sample.name { ids[oldKey] = nil }
                ids[key] = id
                descriptors[id] = InterfaceDescriptor(
                    id: id, name: sample.name, epoch: sample.epoch, began: sample.began)
            }
            var changed = false
            if let state = sample.linkState, linkState[id] != state {
                linkState[id] = state
                changed = true
            }
            // Every batch says, for each interface it carries, the link facts at its first sample, and each change
            // after: a batch is judged on its own, whatever order batches reach the daemon in.
            if samples[id] == nil {
                order.append(id)
                if let state = linkState[id] { links.append((id, timestamp, state)) }
            } else if changed, let state = linkState[id] {
                links.append((id, timestamp, state))
            }
            samples[id, default: []].append((timestamp, sample.counters))
            ticks.insert(timestamp)
            sampleCount += 1
        }
    }

    /// Closes the open batch and returns it, or `nil` when it is empty.
    ///
    /// - Parameters:
    ///   - droppedBefore: batches the spool dropped since the previous batch, reported to the daemon.
    ///   - order: the batch's place in the agent's counter order (from ``OrderClock``).
    ///   - interval: the sampling interval in force for every tick of the batch (ms).
    ///   - heartbeat: the idle heartbeat in force (ms, 0 when idle interfaces are sent every tick).
    /// Forgets the open batch's samples (it cannot be stored); the next batch starts empty.
    public mutating func discard() {
        samples.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        ticks.removeAll(keepingCapacity: true)
        links.removeAll(keepingCapacity: true)
        sampleCount = 0
    }

    public mutating func flush(
        droppedBefore: UInt64, order batchOrder: UInt64, interval: Int64, heartbeat: Int64
    ) -> SpoolRecord? {
        guard sampleCount > 0 else { return nil }
        flushes += 1
        let timestamps = ticks.sorted()
        var tickIndex = [Int64: Int]()
        for (index, timestamp) in timestamps.enumerated() { tickIndex[timestamp] = index }
        var sections = [BatchSection]()
        var used = [InterfaceDescriptor]()
        for id in order {
            guard let series = samples[id], let descriptor = descriptors[id] else { continue }
            var values = [UInt64]()
            values.reserveCapacity(series.count * Counter.count)
            for item in series { values.append(contentsOf: item.counters.values) }
            sections.append(
                BatchSection(descriptorID: id, ticks: series.compactMap { tickIndex[$0.timestamp] }, values: values))
            used.append(descriptor)
            lastUsed[id] = flushes
        }
        let linkStates = links.compactMap { link in
            tickIndex[link.timestamp].map { LinkStateRecord(descriptorID: link.id, tick: $0, state: link.state) }
        }
        let batch = WireBatch(
            stream: stream, sequence: nextSequence, order: batchOrder, droppedBefore: droppedBefore,
            interval: UInt64(interval), heartbeat: UInt64(heartbeat), timestamps: timestamps, sections: sections,
            linkStates: linkStates)
        nextSequence += 1
        samples.removeAll(keepingCapacity: true)
        order.removeAll(keepingCapacity: true)
        ticks.removeAll(keepingCapacity: true)
        links.removeAll(keepingCapacity: true)
        sampleCount = 0
        forgetUnused()
        return SpoolRecord(
            stream: stream, sequence: batch.sequence, describe: Describe(stream: stream, interfaces: used), batch: batch
        )
    }

    /// Drops descriptors no batch will use again: superseded epochs, and interfaces gone for a long time (on a
    /// container host names come and go by the thousand).
    private mutating func forgetUnused() {
        let current = Set(ids.values)
        for id in Array(descriptors.keys) {
            let idle = flushes - (lastUsed[id] ?? flushes)
            guard !current.contains(id) || idle >= Self.forgetAfterFlushes else { continue }
            if let descriptor = descriptors[id], ids[Key(name: descriptor.name, epoch: descriptor.epoch)] == id {
                ids[Key(name: descriptor.name, epoch: descriptor.epoch)] = nil
            }
            descriptors[id] = nil
            linkState[id] = nil
            lastUsed[id] = nil
        }
    }
}
