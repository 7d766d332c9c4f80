import Foundation
import GRDB
import PulseCore

/// One stored sample of one interface.
public struct StoredSample: Sendable, Hashable {
    public var timestamp: Int64
    public var epoch: CounterEpoch
    public var counters: CounterValues
}

/// What `netpulse rates` shows for one interface of one agent.
public struct InterfaceSummary: Sendable, Hashable {
    public var agent: String
    public var hostname: String
    public var interface: InterfaceName
    public var firstTimestamp: Int64
    public var lastTimestamp: Int64
    public var sampleCount: Int
    /// The newest cumulative counters.
    public var counters: CounterValues
    /// Bytes per second between the two newest samples of the current epoch (0 with a single sample).
    public var rxBytesPerSecond: Double
    public var txBytesPerSecond: Double
    /// Bytes counted since the first stored sample: increases, wraps and post-reset counts (see ``CounterStep``).
    public var rxBytesTotal: UInt64
    public var txBytesTotal: UInt64
}

extension Store {
    /// Every stored sample of one interface of one agent, oldest first, across epochs.
    public func samples(agent: String, interface: InterfaceName) throws -> [StoredSample] {
        try pool.read { db in try Self.samples(db, agent: agent, interface: interface) }
    }

    static func samples(_ db: Database, agent: String, interface: InterfaceName) throws -> [StoredSample] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT s.boot_id, s.ifindex, s.width, c.data
                FROM chunk c JOIN series s ON s.id = c.series_id JOIN agent a ON a.id = s.agent_id
                WHERE a.name = ? AND s.interface = ?
                ORDER BY c.first_ts, c.id
                """,
            arguments: [agent, Data(interface.bytes)])
        var samples = [StoredSample]()
        for row in rows {
            let bootBytes: Data = row[0]
            let epoch = CounterEpoch(
                bootID: Self.bootID(Array(bootBytes)), ifindex: UInt32(truncatingIfNeeded: row[1] as Int64),
                width: CounterWidth(rawValue: UInt8(truncatingIfNeeded: row[2] as Int64)) ?? .bits64)
            let data: Data = row[3]
            let chunk = try SeriesChunk.decode(Array(data))
            for (index, timestamp) in chunk.timestamps.enumerated() {
                let start = index * Counter.count
                samples.append(
                    StoredSample(
                        timestamp: timestamp, epoch: epoch,
                        counters: CounterValues(Array(chunk.values[start..<start + Counter.count]))!))
            }
        }
        // Chunks of different batches can interleave in time (late or replayed data): order by time, keeping
        // one sample per instant and epoch.
        samples.sort { $0.timestamp < $1.timestamp }
        var unique = [StoredSample]()
        unique.reserveCapacity(samples.count)
        for sample in samples
        where unique.last.map({ $0.timestamp != sample.timestamp || $0.epoch != sample.epoch }) ?? true {
            unique.append(sample)
        }
        return unique
    }

    static func bootID(_ bytes: [UInt8]) -> BootID {
        guard bytes.count == 16 else { return BootID(high: 0, low: 0) }
        return BootID(
            high: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, low: bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        )
    }

    /// A summary of every interface of every agent, ordered by agent and interface.
    public func interfaceSummaries() throws -> [InterfaceSummary] {
        try pool.read { db in
            let pairs = try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT a.name, a.hostname, s.interface FROM series s JOIN agent a ON a.id = s.agent_id
                    ORDER BY a.name, s.interface
                    """)
            var summaries = [InterfaceSummary]()
            for pair in pairs {
                let agent: String = pair[0]
                let name = InterfaceName(bytes: Array(pair[2] as Data))
                let samples = try Self.samples(db, agent: agent, interface: name)
                guard let last = samples.last else { continue }
                var summary = InterfaceSummary(
                    agent: agent, hostname: pair[1], interface: name, firstTimestamp: samples[0].timestamp,
                    lastTimestamp: last.timestamp, sampleCount: samples.count, counters: last.counters,
                    rxBytesPerSecond: 0, txBytesPerSecond: 0, rxBytesTotal: 0, txBytesTotal: 0)
                for (previous, current) in zip(samples, samples.dropFirst()) {
                    summary.rxBytesTotal &+= Self.step(.rxBytes, previous, current).counted
                    summary.txBytesTotal &+= Self.step(.txBytes, previous, current).counted
                }
                if samples.count >= 2 {
                    let previous = samples[samples.count - 2]
                    if previous.epoch == last.epoch, last.timestamp > previous.timestamp {
                        let seconds = Double(last.timestamp - previous.timestamp) / 1000
                        summary.rxBytesPerSecond = Double(Self.step(.rxBytes, previous, last).counted) / seconds
                        summary.txBytesPerSecond = Double(Self.step(.txBytes, previous, last).counted) / seconds
                    }
                }
                summaries.append(summary)
            }
            return summaries
        }
    }

    static func step(_ counter: Counter, _ previous: StoredSample, _ current: StoredSample) -> CounterStep {
        CounterStep.between(
            previous: (previous.counters[counter], previous.epoch), current: (current.counters[counter], current.epoch))
    }
}
