import PulseAnalytics
import PulseCore

/// The stored form of a ``StepSample`` (series state, gap records): varints, about 30 bytes.
package enum SampleCoding {
    package static func encode(_ sample: StepSample) -> [UInt8] {
        var writer = WireWriter(reservingCapacity: 48)
        writer.writeVarint(UInt64(bitPattern: sample.order))
        writer.writeVarint(UInt64(UInt32(bitPattern: sample.tick)))
        writer.writeVarint(RiceCode.zigzag(UInt64(bitPattern: sample.time)))
        writer.writeVarint(UInt64(bitPattern: sample.epoch))
        writer.writeByte(sample.width.rawValue)
        for lane in 0..<8 { writer.writeVarint(sample.counters[lane]) }
        writer.writeVarint(UInt64(bitPattern: sample.interval))
        writer.writeVarint(UInt64(bitPattern: sample.heartbeat))
        writer.writeVarint(UInt64(sample.speed))
        writer.writeByte(sample.kind.rawValue)
        writer.writeByte(sample.relation.rawValue)
        // Bit 0: moved back by the clock check; bit 1: its time could not be placed (both 0 in stores before it).
        writer.writeByte((sample.clockShifted ? 1 : 0) | (sample.placeable ? 0 : 2))
        writer.writeVarint(UInt64(clamping: sample.received))
        // The epoch's start, plus one (0: unknown); absent in samples stored before it was kept.
        writer.writeVarint(sample.epochBegan.map { UInt64(clamping: $0) &+ 1 } ?? 0)
        return writer.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws -> StepSample {
        var reader = WireReader(bytes)
        let order = Int64(bitPattern: try reader.readVarint())
        let tick = Int32(bitPattern: UInt32(truncatingIfNeeded: try reader.readVarint()))
        let time = Int64(bitPattern: RiceCode.unzigzag(try reader.readVarint()))
        let epoch = Int64(bitPattern: try reader.readVarint())
        guard let width = CounterWidth(rawValue: try reader.readByte()) else {
            throw StoreError.damaged("sample with a bad counter width")
        }
        var counters = Traffic.zero
        for lane in 0..<8 { counters[lane] = try reader.readVarint() }
        let interval = Int64(bitPattern: try reader.readVarint())
        let heartbeat = Int64(bitPattern: try reader.readVarint())
        let speed = UInt32(truncatingIfNeeded: try reader.readVarint())
        let kind = InterfaceKind(rawValue: try reader.readByte()) ?? .unknown
        let relation = InterfaceRelation(rawValue: try reader.readByte())
        let flags = try reader.readByte()
        // Samples stored before receive times were kept end here.
        let received = reader.isAtEnd ? 0 : Int64(clamping: try reader.readVarint())
        let began = reader.isAtEnd ? 0 : try reader.readVarint()
        return StepSample(
            order: order, tick: tick, time: time, epoch: epoch, width: width, counters: counters, interval: interval,
            heartbeat: heartbeat, speed: speed, kind: kind, relation: relation, clockShifted: flags & 1 != 0,
            placeable: flags & 2 == 0, received: received, epochBegan: began == 0 ? nil : Int64(clamping: began - 1))
    }

    /// A counted step: the eight counted values, its timing and events.
    package static func encode(_ step: CountedStep) -> [UInt8] {
        var writer = WireWriter(reservingCapacity: 24)
        for lane in 0..<8 { writer.writeVarint(step.counted[lane]) }
        writer.writeByte(step.timing.rawValue)
        writer.writeByte(step.events.rawValue)
        return writer.bytes
    }

    static func decodeStep(_ bytes: [UInt8]) throws -> CountedStep {
        var reader = WireReader(bytes)
        var counted = Traffic.zero
        for lane in 0..<8 { counted[lane] = try reader.readVarint() }
        guard let timing = StepTiming(rawValue: try reader.readByte()) else {
            throw StoreError.damaged("a step with a bad timing")
        }
        return CountedStep(counted: counted, timing: timing, events: StepEvents(rawValue: try reader.readByte()))
    }

    /// The scopes a gap step was added to: their series ids, then, when any scope got only a part of the step's
    /// span (its agent joined or left the group during it), per scope 0 for the whole step or 1 and the part's
    /// bounds. Lists stored before parts existed end after the ids.
    package static func encode(ids: [Int64], parts: [Range<Int64>?] = []) -> [UInt8] {
        var writer = WireWriter(reservingCapacity: 4 * ids.count + 1)
        writer.writeVarint(UInt64(ids.count))
        for id in ids { writer.writeVarint(UInt64(bitPattern: id)) }
        if parts.contains(where: { $0 != nil }) {
            for index in ids.indices {
                guard index < parts.count, let part = parts[index] else {
                    writer.writeVarint(0)
                    continue
                }
                writer.writeVarint(1)
                writer.writeVarint(RiceCode.zigzag(UInt64(bitPattern: part.lowerBound)))
                writer.writeVarint(RiceCode.zigzag(UInt64(bitPattern: part.upperBound)))
            }
        }
        return writer.bytes
    }

    static func decodeIDs(_ bytes: [UInt8]) throws -> [Int64] { try decodeScopes(bytes).ids }

    /// The ids and parts ``encode(ids:parts:)`` wrote (parts all nil for whole steps).
    static func decodeScopes(_ bytes: [UInt8]) throws -> (ids: [Int64], parts: [Range<Int64>?]) {
        var reader = WireReader(bytes)
        let count = try reader.readVarint(max: 1 << 16, "scope ids")
        let ids = try (0..<count).map { _ in Int64(bitPattern: try reader.readVarint()) }
        var parts = [Range<Int64>?](repeating: nil, count: ids.count)
        if !reader.isAtEnd {
            for index in ids.indices {
                guard try reader.readVarint(max: 1, "scope part") == 1 else { continue }
                let lower = Int64(bitPattern: RiceCode.unzigzag(try reader.readVarint()))
                let upper = Int64(bitPattern: RiceCode.unzigzag(try reader.readVarint()))
                guard lower < upper else { throw StoreError.damaged("a scope's part of a gap that is empty") }
                parts[index] = lower..<upper
            }
        }
        return (ids, parts)
    }
}

/// A store problem for the operator: what is wrong and what to do.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The database holds something it cannot have written.
    case damaged(String)
    /// The store cannot be used as it is; the message says why and what to do.
    case unusable(String)
    /// A batch breaks a rule of the protocol the store relies on.
    case invalidBatch(String)
    /// The store cannot write right now (its disk is full, an I/O error, a read-only file system): nothing of the
    /// transaction was kept, and the same write may succeed once the cause is gone.
    case cannotWrite(String)
    /// A write only the leading daemon may make was refused: this daemon's lease is gone (another daemon took it,
    /// or it expired while this one was frozen or cut off). Nothing of the transaction was kept.
    case fenced(String)

    public var description: String {
        switch self {
        case .damaged(let what): "the store is damaged: \(what)"
        case .unusable(let why): why
        case .invalidBatch(let why): why
        case .cannotWrite(let why): why
        case .fenced(let why): why
        }
    }
}
