/// Encodes and decodes frames as specified in `docs/protocol.md`.
///
/// A frame on the wire is a 4-byte big-endian length, then that many bytes: a type byte and the payload.
/// ``encode(_:)`` returns the whole frame; ``decode(_:limits:)`` takes the bytes after the length prefix (the
/// framing layer has already bounded the length).
public enum WireCodec {
    /// Size of the length prefix.
    public static let lengthPrefixBytes = 4
    static let maximumStringBytes = 255
    static let maximumMessageBytes = 1_024
    /// A day: the longest sampling interval or heartbeat a batch may declare.
    static let maximumIntervalMilliseconds: UInt64 = 86_400_000

    // MARK: Encoding

    /// The complete frame for `message`, length prefix included, with every batch section self-contained.
    public static func encode(_ message: WireMessage) -> [UInt8] {
        var references: ReferenceTable? = nil
        return encode(message, references: &references)
    }

    /// The complete frame for `message`; batch sections whose interface has an entry in `references` are coded
    /// against it, and `references` is updated. Use one table per connection, in send order.
    public static func encode(_ message: WireMessage, references: inout ReferenceTable?) -> [UInt8] {
        var writer = WireWriter(reservingCapacity: 64)
        writer.writeBytes([0, 0, 0, 0])
        switch message {
        case .hello(let hello):
            writer.writeByte(FrameType.hello.rawValue)
            writer.writeBytes(ProtocolVersion.magic)
            writer.writeByte(hello.minimumVersion)
            writer.writeByte(hello.maximumVersion)
            writer.writeString(hello.agentID)
            writer.writeString(hello.hostname)
            writer.writeString(hello.agentVersion)
            writer.writeVarint(hello.capabilities.rawValue)
        case .welcome(let welcome):
            writer.writeByte(FrameType.welcome.rawValue)
            writer.writeByte(welcome.version)
            writer.writeString(welcome.daemonName)
            writer.writeVarint(welcome.capabilities.rawValue)
            let limits = welcome.limits
            for limit in [
                limits.maximumFrameBytes, limits.maximumTicksPerBatch, limits.maximumSectionsPerBatch,
                limits.maximumSamplesPerBatch, limits.maximumInterfacesPerDescribe, limits.maximumInFlight,
            ] {
                writer.writeVarint(UInt64(limit))
            }
        case .describe(let describe):
            // With an epoch's start known, `DESCRIBE_EPOCHS`: each descriptor followed by its start (plus one, 0 for
            // unknown). Without, `DESCRIBE` as before `epoch-start`.
            let withStarts = describe.interfaces.contains { $0.began != nil }
            writer.writeByte((withStarts ? FrameType.describeEpochs : FrameType.describe).rawValue)
            writer.writeUInt64(describe.stream)
            writer.writeVarint(UInt64(describe.interfaces.count))
            for interface in describe.interfaces {
                writeDescriptor(interface, into: &writer)
                if withStarts { writer.writeVarint(interface.began.map { UInt64($0) + 1 } ?? 0) }
            }
        case .batch(let batch):
            writer.writeByte(FrameType.batch.rawValue)
            writeBatch(batch, references: &references, into: &writer)
        case .ack(let ack):
            writer.writeByte(FrameType.ack.rawValue)
            writer.writeUInt64(ack.stream)
            writer.writeVarint(ack.sequence)
            writer.writeByte(ack.duplicate ? 1 : 0)
        case .pace(let pace):
            writer.writeByte(FrameType.pace.rawValue)
            writer.writeByte(pace.sampleFactor)
            writer.writeByte(pace.batchFactor)
        case .error(let error):
            writer.writeByte(FrameType.error.rawValue)
            writer.writeUInt16(error.code.rawValue)
            writer.writeLengthPrefixed(Self.truncated(error.message, toBytes: maximumMessageBytes))
        case .keepalive:
            writer.writeByte(FrameType.keepalive.rawValue)
        case .reject(let reject):
            writer.writeByte(FrameType.reject.rawValue)
            writer.writeUInt64(reject.stream)
            writer.writeVarint(reject.sequence)
            writer.writeUInt16(reject.code.rawValue)
            writer.writeByte(reject.permanent ? 1 : 0)
            writer.writeLengthPrefixed(Self.truncated(reject.message, toBytes: maximumMessageBytes))
        case .labels(let labels):
            writer.writeByte(FrameType.labels.rawValue)
            writer.writeVarint(UInt64(labels.pairs.count))
            for pair in labels.pairs {
                writer.writeString(pair.key)
                writer.writeString(pair.value)
            }
        case .renew(let renew):
            writer.writeByte(FrameType.renew.rawValue)
            writer.writeLengthPrefixed(renew.request)
        case .renewed(.issued(let chain)):
            writer.writeByte(FrameType.renewed.rawValue)
            writer.writeByte(0)
            writer.writeVarint(UInt64(chain.count))
            for certificate in chain { writer.writeLengthPrefixed(certificate) }
        case .renewed(.refused(let why)):
            writer.writeByte(FrameType.renewed.rawValue)
            writer.writeByte(1)
            writer.writeLengthPrefixed(Self.truncated(why, toBytes: maximumMessageBytes))
        }
        var frame = writer.bytes
        let length = UInt32(frame.count - lengthPrefixBytes)
        frame[0] = UInt8(truncatingIfNeeded: length >> 24)
        frame[1] = UInt8(truncatingIfNeeded: length >> 16)
        frame[2] = UInt8(truncatingIfNeeded: length >> 8)
        frame[3] = UInt8(truncatingIfNeeded: length)
        return frame
    }

    /// At most `limit` bytes of UTF-8, cut between characters so the result is still valid UTF-8.
    static func truncated(_ text: String, toBytes limit: Int) -> [UInt8] {
        var bytes = [UInt8]()
        for scalar in text.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard bytes.count + encoded.count <= limit else { break }
            bytes += encoded
        }
        return bytes
    }

    /// One interface descriptor as `DESCRIBE` carries it (and the daemon's ingest journal keeps it): id, name, boot
    /// id, ifindex, counter width.
    public static func writeDescriptor(_ interface: InterfaceDescriptor, into writer: inout WireWriter) {
        writer.writeVarint(UInt64(interface.id))
        writer.writeLengthPrefixed(interface.name.bytes)
        writer.writeUInt64(interface.epoch.bootID.high)
        writer.writeUInt64(interface.epoch.bootID.low)
        writer.writeVarint(UInt64(interface.epoch.ifindex))
        writer.writeByte(interface.epoch.width.rawValue)
    }

    /// The descriptor ``writeDescriptor(_:into:)`` wrote, checked.
    public static func readDescriptor(from reader: inout WireReader) throws(WireError) -> InterfaceDescriptor {
        let id = try reader.readVarint(max: UInt64(UInt32.max), "interface id")
        let name = try reader.readLengthPrefixed(max: InterfaceName.maximumLength, "interface name")
        guard !name.isEmpty else { throw .malformed("empty interface name") }
        let boot = BootID(high: try reader.readUInt64(), low: try reader.readUInt64())
        let ifindex = try reader.readVarint(max: UInt64(UInt32.max), "ifindex")
        let widthByte = try reader.readByte()
        guard let width = CounterWidth(rawValue: widthByte) else { throw .malformed("counter width \(widthByte)") }
        return InterfaceDescriptor(
            id: UInt32(id), name: InterfaceName(bytes: Array(name)),
            epoch: CounterEpoch(bootID: boot, ifindex: UInt32(ifindex), width: width))
    }

    static func writeBatch(_ batch: WireBatch, references: inout ReferenceTable?, into writer: inout WireWriter) {
        writer.writeUInt64(batch.stream)
        writer.writeVarint(batch.sequence)
        writer.writeVarint(batch.order)
        writer.writeVarint(batch.droppedBefore)
        writer.writeVarint(batch.interval)
        writer.writeVarint(batch.heartbeat)
        writer.writeVarint(UInt64(batch.timestamps.count))
        ColumnCodec.writeTimestamps(batch.timestamps, into: &writer)
        writer.writeVarint(UInt64(batch.sections.count))
        let tickCount = batch.timestamps.count
        for section in batch.sections {
            writer.writeVarint(UInt64(section.descriptorID))
            let key = ReferenceKey(stream: batch.stream, descriptorID: section.descriptorID)
            let reference = references?.entries[key]
            var flags: UInt8 = 0
            if section.ticks.count != tickCount { flags |= SectionFlags.bitmap }
            if reference != nil { flags |= SectionFlags.referenced }
            writer.writeByte(flags)
            if flags & SectionFlags.bitmap != 0 {
                var bitmap = [UInt8](repeating: 0, count: (tickCount + 7) / 8)
                for tick in section.ticks { bitmap[tick / 8] |= 0x80 >> UInt8(tick % 8) }
                writer.writeBytes(bitmap)
            }
            ColumnCodec.writeCounters(section.values, count: section.ticks.count, reference: reference, into: &writer)
            references?.entries[key] = CounterReference(
                after: section.values, count: section.ticks.count, previous: reference)
        }
        writer.writeVarint(UInt64(batch.linkStates.count))
        for record in batch.linkStates {
            writer.writeVarint(UInt64(record.descriptorID))
            writer.writeVarint(UInt64(record.tick))
            writer.writeVarint(UInt64(record.state.speedMbps ?? 0))
            writer.writeByte(record.state.operState.rawValue)
            writer.writeByte(record.state.carrier.map { $0 ? 1 : 0 } ?? 2)
            writer.writeVarint(UInt64(record.state.mtu))
            writer.writeByte(record.state.kind.rawValue)
            writer.writeByte(record.state.relation.rawValue)
        }
    }

    // MARK: Decoding

    /// Splits bytes holding whole frames (as a spool file does) into the frames' type-and-payload bytes.
    public static func frames(in bytes: [UInt8]) throws(WireError) -> [[UInt8]] {
        var frames = [[UInt8]]()
        var index = 0
        while index < bytes.count {
            guard index + lengthPrefixBytes <= bytes.count else { throw .truncated }
            let length = bytes[index..<index + lengthPrefixBytes].reduce(0) { $0 << 8 | Int($1) }
            index += lengthPrefixBytes
            guard length >= 1, index + length <= bytes.count else { throw .truncated }
            frames.append(Array(bytes[index..<index + length]))
            index += length
        }
        return frames
    }

    /// Decodes one frame's type byte and payload, enforcing `limits` before any allocation.
    ///
    /// - Throws: ``WireError`` naming the first problem; the caller answers with an `ERROR` frame and closes.
    public static func decode(
        _ bytes: [UInt8], limits: WireLimits = .standard, version: UInt8 = ProtocolVersion.maximum
    ) throws(WireError) -> WireMessage {
        var references: ReferenceTable? = nil
        return try decode(bytes, limits: limits, references: &references, version: version)
    }

    /// Decodes one frame whose batch sections may be coded against `references` (the connection's table, updated
    /// as the encoder updated its own). A section that refers to an interface without an entry is malformed.
    ///
    /// - Parameter version: the protocol version of the bytes; only a spool written by an agent of version 1 is
    ///   read with 1 (its batches have no order, interval or heartbeat, its link states no kind).
    public static func decode(
        _ bytes: [UInt8], limits: WireLimits = .standard, references: inout ReferenceTable?,
        version: UInt8 = ProtocolVersion.maximum
    ) throws(WireError) -> WireMessage {
        guard bytes.count <= limits.maximumFrameBytes else {
            throw .limitExceeded("frame of \(bytes.count) bytes, limit \(limits.maximumFrameBytes)")
        }
        var reader = WireReader(bytes)
        let typeByte = try reader.readByte()
        guard let type = FrameType(rawValue: typeByte) else { throw .unknownFrameType(typeByte) }
        let message: WireMessage
        switch type {
        case .hello:
            guard Array(try reader.readBytes(4)) == ProtocolVersion.magic else { throw .malformed("bad HELLO magic") }
            let minimum = try reader.readByte()
            let maximum = try reader.readByte()
            guard minimum <= maximum else { throw .malformed("HELLO version range \(minimum)…\(maximum)") }
            message = .hello(
                Hello(
                    minimumVersion: minimum,
                    maximumVersion: maximum,
                    agentID: try reader.readString(max: maximumStringBytes, "agent id"),
                    hostname: try reader.readString(max: maximumStringBytes, "host name"),
                    agentVersion: try reader.readString(max: maximumStringBytes, "agent version"),
                    capabilities: Capabilities(rawValue: try reader.readVarint())))
        case .welcome:
            let version = try reader.readByte()
            let name = try reader.readString(max: maximumStringBytes, "daemon name")
            let capabilities = Capabilities(rawValue: try reader.readVarint())
            var fields = [Int]()
            for _ in 0..<6 { fields.append(Int(try reader.readVarint(max: 1 << 30, "limit"))) }
            message = .welcome(
                Welcome(
                    version: version, daemonName: name, capabilities: capabilities,
                    limits: WireLimits(
                        maximumFrameBytes: fields[0], maximumTicksPerBatch: fields[1],
                        maximumSectionsPerBatch: fields[2], maximumSamplesPerBatch: fields[3],
                        maximumInterfacesPerDescribe: fields[4], maximumInFlight: fields[5])))
        case .describe, .describeEpochs:
            let stream = try reader.readUInt64()
            let count = try reader.readVarint(
                max: UInt64(limits.maximumInterfacesPerDescribe), "interfaces in DESCRIBE")
            var interfaces = [InterfaceDescriptor]()
            interfaces.reserveCapacity(Int(count))
            for _ in 0..<count {
                var interface = try readDescriptor(from: &reader)
                if type == .describeEpochs {
                    let value = try reader.readVarint(max: UInt64(BatchRules.latestTimestamp) + 1, "epoch start")
                    interface.began = value == 0 ? nil : Int64(value - 1)
                }
                interfaces.append(interface)
            }
            message = .describe(Describe(stream: stream, interfaces: interfaces))
        case .batch:
            message = .batch(try readBatch(from: &reader, limits: limits, references: &references, version: version))
        case .ack:
            let stream = try reader.readUInt64()
            let sequence = try reader.readVarint()
            let flag = try reader.readByte()
            guard flag <= 1 else { throw .malformed("ACK flag \(flag)") }
            message = .ack(Ack(stream: stream, sequence: sequence, duplicate: flag == 1))
        case .pace:
            let sample = try reader.readByte()
            let batch = try reader.readByte()
            guard sample >= 1, batch >= 1 else { throw .malformed("PACE factor 0") }
            message = .pace(Pace(sampleFactor: sample, batchFactor: batch))
        case .error:
            let code = ErrorCode(rawValue: try reader.readUInt16())
            message = .error(ErrorFrame(code, try reader.readString(max: maximumMessageBytes, "error message")))
        case .keepalive:
            message = .keepalive
        case .reject:
            let stream = try reader.readUInt64()
            let sequence = try reader.readVarint()
            let code = ErrorCode(rawValue: try reader.readUInt16())
            let flag = try reader.readByte()
            guard flag <= 1 else { throw .malformed("REJECT flag \(flag)") }
            message = .reject(
                Reject(
                    stream: stream, sequence: sequence, code: code, permanent: flag == 1,
                    message: try reader.readString(max: maximumMessageBytes, "reject message")))
        case .labels:
            let count = try reader.readVarint(max: UInt64(Labels.maximumCount), "labels")
            var pairs = [(key: String, value: String)]()
            for _ in 0..<count {
                let key = try reader.readString(max: 64, "label key")
                guard Labels.isValidKey(key) else { throw .malformed("label key '\(key)' (use \(Labels.keyRule))") }
                let value = try reader.readString(max: maximumStringBytes, "label value")
                guard Labels.isValidValue(value) else {
                    throw .malformed("value of label '\(key)' is empty or has a control character")
                }
                guard !pairs.contains(where: { $0.key == key }) else { throw .malformed("label '\(key)' twice") }
                pairs.append((key, value))
            }
            message = .labels(Labels(pairs))
        case .renew:
            let request = try reader.readLengthPrefixed(max: Renew.maximumRequestBytes, "certificate request")
            guard !request.isEmpty else { throw .malformed("empty certificate request in RENEW") }
            message = .renew(Renew(request: Array(request)))
        case .renewed:
            switch try reader.readByte() {
            case 0:
                let count = try reader.readVarint(max: UInt64(Renewed.maximumChainLength), "certificates in RENEWED")
                guard count >= 1 else { throw .malformed("RENEWED without a certificate") }
                var chain: [[UInt8]] = []
                for _ in 0..<count {
                    chain.append(
                        Array(try reader.readLengthPrefixed(max: Renewed.maximumCertificateBytes, "certificate")))
                }
                message = .renewed(.issued(chain))
            case 1:
                message = .renewed(.refused(try reader.readString(max: maximumMessageBytes, "refusal")))
            case let other:
                throw .malformed("RENEWED status \(other)")
            }
        }
        guard reader.isAtEnd else { throw .malformed("\(reader.remaining) trailing bytes after \(type)") }
        return message
    }

    /// The stream and sequence at the head of a `BATCH` frame (type byte and payload), when they can be read: so a
    /// batch that cannot be decoded can still be refused by name.
    public static func batchName(_ bytes: [UInt8]) -> (stream: UInt64, sequence: UInt64)? {
        var reader = WireReader(bytes)
        guard (try? reader.readByte()) == FrameType.batch.rawValue, let stream = try? reader.readUInt64(),
            let sequence = try? reader.readVarint(), sequence >= 1
        else { return nil }
        return (stream, sequence)
    }

    static func readBatch(
        from reader: inout WireReader, limits: WireLimits, references: inout ReferenceTable?, version: UInt8
    ) throws(WireError) -> WireBatch {
        let stream = try reader.readUInt64()
        let sequence = try reader.readVarint()
        guard sequence >= 1 else { throw .malformed("batch sequence 0") }
        // Version 1 batches (a legacy spool) get their order and settings from the agent that converts them.
        let order = version >= 2 ? try reader.readVarint() : 0
        guard version < 2 || order >= 1 else { throw .malformed("batch order 0") }
        let droppedBefore = try reader.readVarint()
        let interval = version >= 2 ? try reader.readVarint(max: Self.maximumIntervalMilliseconds, "interval") : 0
        guard version < 2 || interval >= 1 else { throw .malformed("batch interval 0") }
        let heartbeat = version >= 2 ? try reader.readVarint(max: Self.maximumIntervalMilliseconds, "heartbeat") : 0
        let tickCount = Int(try reader.readVarint(max: UInt64(limits.maximumTicksPerBatch), "ticks in batch"))
        guard tickCount >= 1 else { throw .malformed("batch without ticks") }
        let timestamps = try ColumnCodec.readTimestamps(count: tickCount, from: &reader)
        let sectionCount = Int(
            try reader.readVarint(max: UInt64(limits.maximumSectionsPerBatch), "interface sections in batch"))
        var sections = [BatchSection]()
        sections.reserveCapacity(sectionCount)
        var samplesSoFar = 0
        var seen = Set<UInt32>()
        for _ in 0..<sectionCount {
            let id = UInt32(try reader.readVarint(max: UInt64(UInt32.max), "interface id"))
            guard seen.insert(id).inserted else { throw .malformed("interface \(id) appears twice in one batch") }
            let flags = try reader.readByte()
            guard flags & ~(SectionFlags.bitmap | SectionFlags.referenced) == 0 else {
                throw .malformed("section flags 0x\(Hex.string(UInt64(flags), width: 2))")
            }
            let key = ReferenceKey(stream: stream, descriptorID: id)
            var reference: CounterReference?
            if flags & SectionFlags.referenced != 0 {
                guard let known = references?.entries[key] else {
                    throw .malformed("interface \(id) is coded against a sample this connection never carried")
                }
                reference = known
            }
            var ticks = [Int]()
            if flags & SectionFlags.bitmap == 0 {
                ticks = Array(0..<tickCount)
            } else {
                let bitmap = try reader.readBytes((tickCount + 7) / 8)
                for (byteIndex, byte) in bitmap.enumerated() where byte != 0 {
                    for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 {
                        let tick = byteIndex * 8 + bit
                        guard tick < tickCount else { throw .malformed("presence bit beyond the last tick") }
                        ticks.append(tick)
                    }
                }
                guard !ticks.isEmpty else { throw .malformed("interface \(id) present at no tick") }
            }
            samplesSoFar += ticks.count
            guard samplesSoFar <= limits.maximumSamplesPerBatch else {
                throw .limitExceeded("more than \(limits.maximumSamplesPerBatch) samples in one batch")
            }
            var values = [UInt64]()
            try ColumnCodec.readCounters(count: ticks.count, reference: reference, from: &reader, into: &values)
            if references != nil {
                references?.entries[key] = CounterReference(after: values, count: ticks.count, previous: reference)
            }
            sections.append(BatchSection(descriptorID: id, ticks: ticks, values: values))
        }
        let linkCount = try reader.readVarint(max: UInt64(limits.maximumSectionsPerBatch), "link-state records")
        var linkStates = [LinkStateRecord]()
        linkStates.reserveCapacity(Int(linkCount))
        for _ in 0..<linkCount {
            let id = UInt32(try reader.readVarint(max: UInt64(UInt32.max), "interface id"))
            let tick = Int(try reader.readVarint(max: UInt64(tickCount - 1), "link-state tick"))
            let speed = try reader.readVarint(max: UInt64(UInt32.max), "link speed")
            let operByte = try reader.readByte()
            guard let operState = OperState(rawValue: operByte) else { throw .malformed("operstate \(operByte)") }
            let carrierByte = try reader.readByte()
            guard carrierByte <= 2 else { throw .malformed("carrier \(carrierByte)") }
            let mtu = try reader.readVarint(max: UInt64(UInt32.max), "mtu")
            var kind = InterfaceKind.unknown
            var relation = InterfaceRelation()
            if version >= 2 {
                let kindByte = try reader.readByte()
                guard let known = InterfaceKind(rawValue: kindByte) else {
                    throw .malformed("interface kind \(kindByte)")
                }
                kind = known
                let relationByte = try reader.readByte()
                guard relationByte & ~InterfaceRelation.all.rawValue == 0 else {
                    throw .malformed("interface relation 0x\(Hex.string(UInt64(relationByte), width: 2))")
                }
                relation = InterfaceRelation(rawValue: relationByte)
            }
            linkStates.append(
                LinkStateRecord(
                    descriptorID: id, tick: tick,
                    state: LinkState(
                        speedMbps: speed == 0 ? nil : UInt32(speed), operState: operState,
                        carrier: carrierByte == 2 ? nil : carrierByte == 1, mtu: UInt32(mtu), kind: kind,
                        relation: relation)))
        }
        return WireBatch(
            stream: stream, sequence: sequence, order: order, droppedBefore: droppedBefore, interval: interval,
            heartbeat: heartbeat, timestamps: timestamps, sections: sections, linkStates: linkStates)
    }
}

/// Bits of a batch section's flags byte.
enum SectionFlags {
    /// A presence bitmap follows (the interface is not present at every tick).
    static let bitmap: UInt8 = 1 << 0
    /// The first sample is coded against the connection's reference for this interface, with no keyframe.
    static let referenced: UInt8 = 1 << 1
}

/// Identifies an interface across a connection's batches.
public struct ReferenceKey: Sendable, Hashable {
    public var stream: UInt64
    public var descriptorID: UInt32

    public init(stream: UInt64, descriptorID: UInt32) {
        self.stream = stream
        self.descriptorID = descriptorID
    }
}

/// Per connection, the last sample of each interface sent on it, so the next batch need not repeat absolute
/// counters. Encoder and decoder each keep one and update it identically; a new connection starts empty.
public struct ReferenceTable: Sendable {
    public var entries: [ReferenceKey: CounterReference] = [:]
    public init() {}

    /// Drops every reference of `stream` (it left the connection's ``StreamWindow``).
    public mutating func forget(stream: UInt64) {
        entries = entries.filter { $0.key.stream != stream }
    }
}

/// The streams whose descriptors and coding references a connection keeps, when both sides announce
/// ``Capabilities/streamWindow`` (`docs/protocol.md`, "References"): the ``capacity`` streams most recently named by
/// a `DESCRIBE` or `BATCH`. A frame naming a stream outside the window makes the least recently named one leave it,
/// and both sides forget that stream's descriptors and references, so an agent replaying many runs' spools keeps
/// the daemon's state for its connection bounded. Both sides see the same frames in the same order, so they evict
/// the same stream at the same frame.
public struct StreamWindow: Sendable {
    public static let capacity = 4

    /// Most recently named last.
    private var streams: [UInt64] = []

    public init() {}

    /// Records that a frame named `stream`; returns the stream that left the window, if one did.
    public mutating func name(_ stream: UInt64) -> UInt64? {
        if let index = streams.firstIndex(of: stream) {
            streams.remove(at: index)
            streams.append(stream)
            return nil
        }
        streams.append(stream)
        return streams.count > Self.capacity ? streams.removeFirst() : nil
    }
}
