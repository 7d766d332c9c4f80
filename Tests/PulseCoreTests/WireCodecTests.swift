import TestSupport
import Testing

@testable import PulseCore

/// Synthetic traffic used by the codec tests and (with the same generator) by the wire-size benchmark.
enum Traffic {
    /// A busy interface: about 200 Mbit/s in, 40 Mbit/s out, each second ±30%, mixed packet sizes, an error
    /// now and then.
    static func busy(ticks: Int, seed: UInt64, start: CounterValues? = nil) -> [CounterValues] {
        var generator = SplitMix64(seed: seed)
        var counters =
            start ?? CounterValues([
                8_123_456_789_012, 7_345_678_901, 12, 3_456, 0, 7, 0, 98_765, 1_234_567_890_123, 2_345_678_901, 0, 17,
                0, 0,
                0, 0,
            ])!
        var out = [counters]
        for _ in 1..<ticks {
            let rxBytes = UInt64(25_000_000 * Double.random(in: 0.7...1.3, using: &generator))
            let txBytes = UInt64(5_000_000 * Double.random(in: 0.7...1.3, using: &generator))
            counters[.rxBytes] += rxBytes
            counters[.rxPackets] += rxBytes / UInt64.random(in: 900...1_100, using: &generator)
            counters[.txBytes] += txBytes
            counters[.txPackets] += txBytes / UInt64.random(in: 400...600, using: &generator)
            if Int.random(in: 0..<20, using: &generator) == 0 { counters[.rxDropped] += 1 }
            if Int.random(in: 0..<10, using: &generator) == 0 { counters[.rxMulticast] += 1 }
            out.append(counters)
        }
        return out
    }

    /// Millisecond timestamps of 1 Hz ticks read a few milliseconds late, as a real sampler does.
    static func ticks(_ count: Int, seed: UInt64) -> [Int64] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { 1_763_800_000_000 + Int64($0) * 1_000 + Int64.random(in: 0...3, using: &generator) }
    }
}

@Suite struct ColumnCodecTests {
    /// The bytes the column codec writes for fixed inputs (busy traffic, every size of section, with and without a
    /// reference, and timestamps), pinned by their FNV-1a digest: an agent and a daemon of different builds must
    /// agree on them, so a change to the encoder that still round-trips is caught here (the digest was taken from
    /// the encoder before its scratch buffers were shared, 2026-11-24).
    @Test func theEncodingOfFixedInputsNeverChanges() {
        var bytes = [UInt8]()
        for (index, count) in [1, 2, 3, 10, 60, 600].enumerated() {
            let ticks = Traffic.busy(ticks: count + 1, seed: UInt64(index))
            let values = ticks.dropFirst().flatMap(\.values)
            var writer = WireWriter()
            ColumnCodec.writeCounters(values, count: count, into: &writer)
            let first = ticks[0].values
            let second = ticks.count > 1 ? ticks[1].values : first
            let reference = CounterReference(last: first, delta: zip(second, first).map { $0 &- $1 })
            ColumnCodec.writeCounters(values, count: count, reference: reference, into: &writer)
            ColumnCodec.writeTimestamps(Traffic.ticks(count, seed: UInt64(index)), into: &writer)
            bytes += writer.bytes
        }
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
        #expect(
            bytes.count == 13_744 && digest == 0x2846_4131_9734_5695,
            "\(bytes.count) bytes, digest \(String(digest, radix: 16))")
    }

    @Test func countersRoundTrip() throws {
        var generator = SplitMix64(seed: 11)
        for count in [1, 2, 3, 10, 60, 600] {
            var values = [UInt64]()
            var current = (0..<Counter.count).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
            for _ in 0..<count {
                for counter in 0..<Counter.count where Bool.random(using: &generator) {
                    // Any move at all, wraps and resets included: the coding is lossless for every value.
                    current[counter] =
                        Bool.random(using: &generator)
                        ? current[counter] &+ UInt64.random(in: 0...1_000_000, using: &generator)
                        : UInt64.random(in: 0...UInt64.max, using: &generator)
                }
                values.append(contentsOf: current)
            }
            var writer = WireWriter()
            ColumnCodec.writeCounters(values, count: count, into: &writer)
            var reader = WireReader(writer.bytes)
            var decoded = [UInt64]()
            try ColumnCodec.readCounters(count: count, from: &reader, into: &decoded)
            #expect(decoded == values)
            #expect(reader.isAtEnd)
        }
    }

    @Test func timestampsRoundTripAndMustIncrease() throws {
        let timestamps = Traffic.ticks(100, seed: 3)
        var writer = WireWriter()
        ColumnCodec.writeTimestamps(timestamps, into: &writer)
        // A tick a few milliseconds late costs a few bits, not bytes: under 5 bits each after the 8-byte header.
        #expect(writer.bytes.count < 8 + 100 * 5 / 8)
        var reader = WireReader(writer.bytes)
        #expect(try ColumnCodec.readTimestamps(count: 100, from: &reader) == timestamps)

        var backwards = WireWriter()
        ColumnCodec.writeTimestamps([2_000, 1_000], into: &backwards)
        var badReader = WireReader(backwards.bytes)
        #expect(throws: WireError.self) { try ColumnCodec.readTimestamps(count: 2, from: &badReader) }
        var flat = WireWriter()
        ColumnCodec.writeTimestamps([1_000, 2_000, 2_000], into: &flat)
        var flatReader = WireReader(flat.bytes)
        #expect(throws: WireError.malformed("timestamps are not strictly increasing")) {
            try ColumnCodec.readTimestamps(count: 3, from: &flatReader)
        }
    }
}

@Suite struct WireCodecTests {
    static let descriptor = InterfaceDescriptor(
        id: 3, name: InterfaceName("a<b&c"),
        epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: 7, width: .bits64))

    static func batch(ticks: Int = 10) -> WireBatch {
        let samples = Traffic.busy(ticks: ticks, seed: 1)
        return WireBatch(
            stream: 0xDEAD_BEEF_0000_0001, sequence: 42, order: 1_763_856_000_123, droppedBefore: 2, interval: 1_000,
            heartbeat: 60_000, timestamps: Traffic.ticks(ticks, seed: 2),
            sections: [
                BatchSection(descriptorID: 3, ticks: Array(0..<ticks), values: samples.flatMap(\.values)),
                BatchSection(
                    descriptorID: 4, ticks: [0, ticks - 1],
                    values: CounterValues().values
                        + CounterValues([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])!.values),
            ],
            linkStates: [
                LinkStateRecord(
                    descriptorID: 3, tick: 0,
                    state: LinkState(
                        speedMbps: 10_000, operState: .up, carrier: true, mtu: 1500, kind: .physical,
                        relation: .bondSlave)),
                LinkStateRecord(
                    descriptorID: 4, tick: 1,
                    state: LinkState(speedMbps: nil, operState: .down, carrier: nil, mtu: 9000, kind: .veth)),
            ])
    }

    static let messages: [WireMessage] = [
        .hello(Hello(agentID: "web-01", hostname: "p\"q>", agentVersion: "0.1.0")),
        .welcome(Welcome(version: 2, daemonName: "netpulsed", capabilities: .all, limits: .standard)),
        .labels(Labels([("site", "fra1"), ("role", "edge <&> \"core\"")])),
        .labels(Labels([])),
        .describe(Describe(stream: 9, interfaces: [descriptor])),
        .describe(
            Describe(
                stream: 9,
                interfaces: [
                    InterfaceDescriptor(
                        id: 4, name: "eth0",
                        epoch: CounterEpoch(bootID: BootID(high: 3, low: 4), ifindex: 2, width: .bits64),
                        began: 1_773_655_160_000),
                    descriptor,
                ])),
        .batch(batch()),
        .ack(Ack(stream: 9, sequence: 12, duplicate: true)),
        .pace(Pace(sampleFactor: 2, batchFactor: 4)),
        .error(ErrorFrame(.malformedFrame, "bad <input> & more")),
        .reject(Reject(stream: 9, sequence: 300, code: .invalidBatch, permanent: true, message: "order <too> high")),
        .reject(Reject(stream: 1, sequence: 1, code: .storageFailure, permanent: false, message: "")),
        .keepalive,
        .renew(Renew(request: Array(repeating: 0x30, count: 300))),
        .renewed(.issued([Array(repeating: 1, count: 500), Array(repeating: 2, count: 420)])),
        .renewed(.refused("the request names \"web-02\", not <web-01>")),
    ]

    @Test(arguments: messages)
    func roundTrip(_ message: WireMessage) throws {
        let frame = WireCodec.encode(message)
        let length = frame[0..<4].reduce(0) { $0 << 8 | Int($1) }
        #expect(length == frame.count - 4)
        #expect(try WireCodec.decode(Array(frame.dropFirst(4))) == message)
    }

    @Test(arguments: messages)
    func everyTruncationIsRejected(_ message: WireMessage) {
        let body = Array(WireCodec.encode(message).dropFirst(4))
        for cut in 0..<body.count {
            #expect(throws: WireError.self) { try WireCodec.decode(Array(body[0..<cut])) }
        }
    }

    /// `epoch-start` (docs/protocol.md, "Interface descriptors"): without a known start, `DESCRIBE` is laid out as
    /// before (an older daemon reads it); with one, `DESCRIBE_EPOCHS` carries each descriptor's start, 0 for none,
    /// and a start after 9999 is malformed.
    @Test func epochStartsTravelInTheirOwnFrame() throws {
        let plain = Array(WireCodec.encode(.describe(Describe(stream: 9, interfaces: [Self.descriptor]))).dropFirst(4))
        #expect(plain[0] == 0x03)
        var writer = WireWriter()
        writer.writeByte(0x03)
        writer.writeUInt64(9)
        writer.writeVarint(1)
        WireCodec.writeDescriptor(Self.descriptor, into: &writer)
        #expect(plain == writer.bytes)
        var started = Self.descriptor
        started.began = 0
        let frame = Array(
            WireCodec.encode(.describe(Describe(stream: 9, interfaces: [started, Self.descriptor]))).dropFirst(4))
        #expect(frame[0] == 0x0B)
        guard case .describe(let decoded) = try WireCodec.decode(frame) else {
            Issue.record("not a DESCRIBE")
            return
        }
        #expect(decoded.interfaces.map(\.began) == [0, nil])
        var late = Self.descriptor
        late.began = BatchRules.latestTimestamp + 1
        let tooLate = Array(WireCodec.encode(.describe(Describe(stream: 9, interfaces: [late]))).dropFirst(4))
        #expect(throws: WireError.self) { try WireCodec.decode(tooLate) }
    }

    @Test func longErrorMessagesAreCutBetweenCharacters() throws {
        let message = String(repeating: "é", count: 600)  // 1,200 bytes
        let frame = Array(WireCodec.encode(.error(ErrorFrame(.malformedFrame, message))).dropFirst(4))
        guard case .error(let error) = try WireCodec.decode(frame) else {
            Issue.record("not an error frame")
            return
        }
        #expect(error.message == String(repeating: "é", count: 512))
        var invalid = WireWriter()
        invalid.writeByte(FrameType.error.rawValue)
        invalid.writeUInt16(1)
        invalid.writeLengthPrefixed([0xC3])
        #expect(throws: WireError.malformed("error message is not UTF-8")) { try WireCodec.decode(invalid.bytes) }
    }

    @Test func rejectFlagsOtherThanZeroOrOneAreMalformed() {
        var frame = Array(
            WireCodec.encode(
                .reject(Reject(stream: 9, sequence: 3, code: .invalidBatch, permanent: true, message: "x"))
            ).dropFirst(4))
        // type, stream (8), sequence (1), code (2), then the flag.
        frame[12] = 2
        #expect(throws: WireError.malformed("REJECT flag 2")) { try WireCodec.decode(frame) }
    }

    @Test func aBatchIsNamedFromItsHeadEvenWhenTheRestCannotBeDecoded() {
        var frame = Array(WireCodec.encode(.batch(Self.batch())).dropFirst(4))
        frame.append(0xFF)
        #expect(throws: WireError.self) { try WireCodec.decode(frame) }
        let name = WireCodec.batchName(frame)
        #expect(name?.stream == Self.batch().stream && name?.sequence == Self.batch().sequence)
        #expect(WireCodec.batchName(Array(frame.prefix(5))) == nil)
        #expect(WireCodec.batchName(Array(WireCodec.encode(.keepalive).dropFirst(4))) == nil)
    }

    /// What an agent sends to renew is bounded before it is read: a request of at most 4 KiB; and the daemon's answer
    /// carries a chain of one to four certificates of at most 8 KiB each.
    @Test func renewalFramesAreBounded() {
        func body(_ message: WireMessage) -> [UInt8] { Array(WireCodec.encode(message).dropFirst(4)) }
        #expect(throws: WireError.self) {
            try WireCodec.decode(body(.renew(Renew(request: Array(repeating: 0, count: 4097)))))
        }
        #expect(throws: WireError.malformed("empty certificate request in RENEW")) {
            try WireCodec.decode(body(.renew(Renew(request: []))))
        }
        #expect(throws: WireError.self) {
            try WireCodec.decode(body(.renewed(.issued(Array(repeating: [1], count: 5)))))
        }
        #expect(throws: WireError.malformed("RENEWED without a certificate")) {
            try WireCodec.decode(body(.renewed(.issued([]))))
        }
        #expect(throws: WireError.self) {
            try WireCodec.decode(body(.renewed(.issued([Array(repeating: 1, count: 8193)]))))
        }
        #expect(throws: WireError.malformed("RENEWED status 2")) { try WireCodec.decode([0x0D, 2]) }
    }

    @Test func trailingBytesAreRejected() {
        let body = Array(WireCodec.encode(.keepalive).dropFirst(4)) + [0]
        #expect(throws: WireError.self) { try WireCodec.decode(body) }
    }

    /// Random bytes and random corruptions of valid frames either decode or throw; nothing traps or hangs.
    @Test func hostileBytesNeverCrash() {
        var generator = SplitMix64(seed: 99)
        var decoded = 0
        let valid = Self.messages.map { Array(WireCodec.encode($0).dropFirst(4)) }
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                if !bytes.isEmpty { bytes[0] = UInt8.random(in: 1...8, using: &generator) }
            } else {
                bytes = valid[Int.random(in: 0..<valid.count, using: &generator)]
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            if (try? WireCodec.decode(bytes)) != nil { decoded += 1 }
        }
        #expect(decoded < 20_000)
    }

    @Test func limitsAreCheckedBeforeAllocation() {
        // A batch claiming a million ticks, or a frame larger than the limit.
        var writer = WireWriter()
        writer.writeByte(FrameType.batch.rawValue)
        writer.writeUInt64(1)
        // Sequence, order, dropped, interval, heartbeat.
        for header: UInt64 in [1, 1, 0, 1_000, 0] { writer.writeVarint(header) }
        writer.writeVarint(1_000_000)
        #expect(throws: WireError.limitExceeded("ticks in batch is 1000000, limit 3600")) {
            try WireCodec.decode(writer.bytes)
        }
        let tight = WireLimits(maximumFrameBytes: 16)
        #expect(throws: WireError.self) { try WireCodec.decode([UInt8](repeating: 8, count: 17), limits: tight) }

        // Many sections with no bits each would decode to far more samples than the frame holds.
        var greedy = WireWriter()
        greedy.writeByte(FrameType.batch.rawValue)
        greedy.writeUInt64(1)
        for header: UInt64 in [1, 1, 0, 1_000, 0] { greedy.writeVarint(header) }
        greedy.writeVarint(3_600)
        ColumnCodec.writeTimestamps((0..<3_600).map { Int64($0) * 1_000 }, into: &greedy)
        greedy.writeVarint(1_000)
        for id in 0..<1_000 {
            greedy.writeVarint(UInt64(id))
            greedy.writeByte(0)
            greedy.writeVarint(0)
            greedy.writeVarint(0)
        }
        greedy.writeVarint(0)
        #expect(throws: WireError.limitExceeded("more than 65536 samples in one batch")) {
            try WireCodec.decode(greedy.bytes)
        }
    }

    @Test func duplicateSectionsAndBadPresenceAreRejected() {
        var batch = Self.batch()
        batch.sections.append(batch.sections[0])
        #expect(throws: WireError.malformed("interface 3 appears twice in one batch")) {
            try WireCodec.decode(Array(WireCodec.encode(.batch(batch)).dropFirst(4)))
        }
    }

    /// Sections coded against the connection's references decode to the same values, batch after batch, and a
    /// section that claims a reference the decoder does not have is rejected.
    @Test func referencesRoundTripAcrossBatches() throws {
        var encoderTable: ReferenceTable? = ReferenceTable()
        var decoderTable: ReferenceTable? = ReferenceTable()
        let samples = Traffic.busy(ticks: 50, seed: 4)
        let timestamps = Traffic.ticks(50, seed: 5)
        var referencedFrame: [UInt8] = []
        for index in 0..<5 {
            // Interface 2 is idle and sent only in some batches, with gaps in its presence.
            var sections = [
                BatchSection(
                    descriptorID: 1, ticks: Array(0..<10),
                    values: samples[index * 10..<index * 10 + 10].flatMap(\.values))
            ]
            if index % 2 == 0 {
                sections.append(
                    BatchSection(
                        descriptorID: 2, ticks: [3],
                        values: CounterValues([5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, UInt64(index)])!.values))
            }
            let batch = WireBatch(
                stream: 8, sequence: UInt64(index + 1), timestamps: Array(timestamps[index * 10..<index * 10 + 10]),
                sections: sections)
            let frame = WireCodec.encode(.batch(batch), references: &encoderTable)
            #expect(try WireCodec.decode(Array(frame.dropFirst(4)), references: &decoderTable) == .batch(batch))
            if index > 0 { #expect(frame.count < WireCodec.encode(.batch(batch)).count) }
            if index == 1 { referencedFrame = Array(frame.dropFirst(4)) }
        }
        #expect(throws: WireError.malformed("interface 1 is coded against a sample this connection never carried")) {
            try WireCodec.decode(referencedFrame)
        }
    }

    /// The wire-size aims: ≤ 12 bytes per busy interface per tick and ≤ 2 per idle one (idle suppression off, so
    /// the idle interface is in every tick), timestamps, headers and framing included, for 10-second batches of
    /// 1 Hz samples of 16 interfaces on one connection. `scripts/bench.sh` prints the same figures.
    @Test func compactness() {
        func bytesPerInterfaceTick(_ make: (_ interface: Int, _ batch: Int) -> [UInt64]) -> Double {
            var references: ReferenceTable? = ReferenceTable()
            var total = 0
            let batches = 30
            for index in 0..<batches {
                let sections = (0..<16).map {
                    BatchSection(descriptorID: UInt32($0), ticks: Array(0..<10), values: make($0, index))
                }
                let batch = WireBatch(
                    stream: 77, sequence: UInt64(index + 1), timestamps: Traffic.ticks(10, seed: UInt64(index)),
                    sections: sections)
                total += WireCodec.encode(.batch(batch), references: &references).count
            }
            return Double(total) / Double(batches * 10 * 16)
        }
        let streams = (0..<16).map { Traffic.busy(ticks: 300, seed: UInt64($0)) }
        let busy = bytesPerInterfaceTick { interface, batch in
            streams[interface][batch * 10..<batch * 10 + 10].flatMap(\.values)
        }
        let idleCounters = CounterValues([123_456_789, 98_765, 0, 0, 0, 0, 0, 12, 45_678_901, 54_321, 0, 0, 0, 0, 0, 0]
        )!
        let idle = bytesPerInterfaceTick { _, _ in Array(repeating: idleCounters.values, count: 10).flatMap { $0 } }
        #expect(busy <= 12, "busy interface: \(busy) bytes per tick")
        #expect(idle <= 2, "idle interface: \(idle) bytes per tick")
    }
}

extension CounterValues {
    subscript(_ counter: Counter, default _: Void = ()) -> UInt64 {
        get { values[counter.rawValue] }
        set { values[counter.rawValue] = newValue }
    }
}
