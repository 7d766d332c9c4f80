import PulseAnalytics
import PulseCore

/// The form an ``IngestBatch`` takes in the daemon's journal (``IngestJournal``): everything the store's writer
/// reads from it, with each section's samples as the chunk it already holds (its timestamps and counters are decoded
/// from the chunk again when the batch is read back). Versioned by its first byte: version 2 adds each section's
/// epoch start after its descriptor; version 1 entries (journaled by an older netpulsed) are still read.
extension IngestBatch {
    static let journalVersion: UInt8 = 2

    /// The batch as journal bytes.
    public var journalBytes: [UInt8] {
        var writer = WireWriter(reservingCapacity: 64 + sections.reduce(0) { $0 + 48 + $1.chunk.count })
        writer.writeByte(Self.journalVersion)
        writer.writeString(agent.name)
        writer.writeString(agent.hostname)
        writer.writeString(agent.version)
        writer.writeVarint(UInt64(agent.labels.pairs.count))
        for pair in agent.labels.pairs {
            writer.writeString(pair.key)
            writer.writeString(pair.value)
        }
        for value in [stream, sequence, order, droppedBefore] { writer.writeVarint(value) }
        for value in [interval, heartbeat, lastTimestamp, receivedAt ?? -1] {
            writer.writeUInt64(UInt64(bitPattern: value))
        }
        writer.writeVarint(UInt64(valueCount))
        writer.writeVarint(UInt64(sections.count))
        for section in sections {
            WireCodec.writeDescriptor(section.descriptor, into: &writer)
            writer.writeVarint(section.descriptor.began.map { UInt64($0) + 1 } ?? 0)
            writer.writeVarint(UInt64(section.ticks.count))
            for tick in section.ticks { writer.writeVarint(UInt64(UInt32(bitPattern: tick))) }
            writer.writeVarint(UInt64(section.links.count))
            for link in section.links {
                writer.writeVarint(UInt64(UInt32(bitPattern: link.tick)))
                for column in LinkColumns.values(link.state) { writer.writeUInt64(UInt64(bitPattern: column)) }
            }
            writer.writeLengthPrefixed(section.chunk)
        }
        return writer.bytes
    }

    /// A batch from its journal bytes; a damaged entry gives an error, not a trap.
    public init(journalBytes bytes: [UInt8]) throws {
        var reader = WireReader(bytes)
        let format = try reader.readByte()
        guard format == 1 || format == Self.journalVersion else {
            throw StoreError.damaged("a journal entry of version \(format); this netpulsed reads versions 1 and 2")
        }
        let limits = WireLimits.standard
        let name = try reader.readString(max: 1_024, "agent name")
        let hostname = try reader.readString(max: 1_024, "hostname")
        let version = try reader.readString(max: 1_024, "version")
        var pairs = [(key: String, value: String)]()
        for _ in 0..<(try reader.readVarint(max: UInt64(Labels.maximumCount), "labels")) {
            pairs.append((try reader.readString(max: 64, "label key"), try reader.readString(max: 255, "label value")))
        }
        agent = AgentIdentity(name: name, hostname: hostname, version: version, labels: Labels(pairs))
        stream = try reader.readVarint()
        sequence = try reader.readVarint()
        order = try reader.readVarint()
        droppedBefore = try reader.readVarint()
        interval = Int64(bitPattern: try reader.readUInt64())
        heartbeat = Int64(bitPattern: try reader.readUInt64())
        lastTimestamp = Int64(bitPattern: try reader.readUInt64())
        let received = Int64(bitPattern: try reader.readUInt64())
        receivedAt = received >= 0 ? received : nil
        valueCount = Int(try reader.readVarint(max: UInt64(Int32.max), "value count"))
        var sections = [Section]()
        for _ in 0..<(try reader.readVarint(max: UInt64(limits.maximumSectionsPerBatch), "sections")) {
            var descriptor = try WireCodec.readDescriptor(from: &reader)
            if format >= 2 {
                let began = try reader.readVarint(max: UInt64(BatchRules.latestTimestamp) + 1, "epoch start")
                descriptor.began = began == 0 ? nil : Int64(began - 1)
            }
            var ticks = [Int32]()
            for _ in 0..<(try reader.readVarint(max: UInt64(limits.maximumTicksPerBatch), "ticks")) {
                ticks.append(Int32(bitPattern: UInt32(try reader.readVarint(max: UInt64(UInt32.max), "tick"))))
            }
            var links = [(tick: Int32, state: LinkState)]()
            for _ in 0..<(try reader.readVarint(max: UInt64(limits.maximumTicksPerBatch), "link states")) {
                let tick = Int32(bitPattern: UInt32(try reader.readVarint(max: UInt64(UInt32.max), "tick")))
                var columns = [Int64]()
                for _ in 0..<6 { columns.append(Int64(bitPattern: try reader.readUInt64())) }
                links.append((tick, StoreWriter.linkState(columns)))
            }
            let chunk = Array(try reader.readLengthPrefixed(max: bytes.count, "chunk"))
            let (timestamps, values) = try SeriesChunk.decode(chunk)
            guard timestamps.count == ticks.count else {
                throw StoreError.damaged(
                    "a journal entry whose chunk holds \(timestamps.count) samples for \(ticks.count) ticks")
            }
            sections.append(
                Section(
                    descriptor: descriptor, ticks: ticks, timestamps: timestamps,
                    traffic: (0..<ticks.count).map { Traffic(rolledUpFrom: values, offset: $0 * Counter.count) },
                    links: links, chunk: chunk))
        }
        guard reader.isAtEnd else { throw StoreError.damaged("trailing bytes in a journal entry") }
        self.sections = sections
    }
}
