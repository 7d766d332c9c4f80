import PulseCore

/// Programs for ``IngestProgram`` that reach its interesting states at once, written op by op in the layout it reads
/// (agent byte, op byte, then the op's own bytes): the committed corpus (`Fuzz/corpus/ingest/`) starts from these.
enum Seeds {
    static var all: [[UInt8]] {
        [ordinary(), clockIn1970(), farAhead(), lateAndAgain(), extremeCounts(), withoutTheWindow()]
    }

    static func connect(_ agent: UInt8, window: Bool = true) -> [UInt8] { [agent, 0, window ? 0 : 1, 1] }

    /// Describes the first four interfaces (the two names the protocol refuses are left out).
    static func describe(_ agent: UInt8, stream: UInt8) -> [UInt8] { [agent, 1, stream, 1, 1, 1, 1, 0, 0] }

    /// A batch of `ticks` ticks, first at the time `time` chooses, one second apart, of the first two interfaces,
    /// each counter growing by `increment` (a byte, or that byte << 54 with `huge`).
    static func make(
        _ agent: UInt8, stream: UInt8, ticks: UInt8, time: [UInt8], increment: UInt8 = 100, huge: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [agent, 2, stream, ticks - 1] + time + [0]
        for position in 0..<6 {
            guard position < 2 else {
                bytes.append(1)
                continue
            }
            bytes.append(0)
            for _ in 0..<(Int(ticks) * Counter.count) { bytes += [huge ? 4 : 1, increment] }
        }
        return bytes + [0, 0, 0]
    }

    static func send(_ agent: UInt8, which: UInt8) -> [UInt8] { [agent, 3, which, 1] }
    static func commit(advance: UInt8 = 1) -> [UInt8] { [0, 6, advance] }

    /// Times as ``IngestProgram/time()`` reads them.
    static let recent: [UInt8] = [0, 10]
    static let in1970: [UInt8] = [2, 10]
    static let latest: [UInt8] = [3, 0]
    static let twoToTheSixtyTwo: [UInt8] = [5, 0]
    static let yearsAhead: [UInt8] = [6]
    static let weeksLate: [UInt8] = [1, 20]

    static func ordinary() -> [UInt8] {
        var program = connect(0) + describe(0, stream: 0)
        for index in 0..<4 { program += make(0, stream: 0, ticks: 3, time: recent) + send(0, which: UInt8(index)) }
        return program + commit() + connect(1) + describe(1, stream: 1) + make(1, stream: 1, ticks: 2, time: recent)
            + send(1, which: 0) + commit()
    }

    /// The spool of a host that booted in 1970, then its first batches after NTP.
    static func clockIn1970() -> [UInt8] {
        connect(0) + describe(0, stream: 0) + make(0, stream: 0, ticks: 4, time: in1970)
            + make(0, stream: 0, ticks: 4, time: in1970) + make(0, stream: 0, ticks: 3, time: recent)
            + send(0, which: 2) + commit() + send(0, which: 0) + send(0, which: 1) + commit(advance: 2)
    }

    /// A batch ending three years ahead, one at the latest time the protocol takes, one at 2⁶², then ordinary ones.
    static func farAhead() -> [UInt8] {
        connect(0) + describe(0, stream: 0) + make(0, stream: 0, ticks: 2, time: yearsAhead)
            + make(0, stream: 0, ticks: 1, time: latest) + make(0, stream: 0, ticks: 2, time: twoToTheSixtyTwo)
            + make(0, stream: 0, ticks: 2, time: recent) + send(0, which: 0) + send(0, which: 1)
            + send(0, which: 2) + commit() + send(0, which: 3) + commit()
    }

    /// Batches delivered late, out of order, twice, and weeks old.
    static func lateAndAgain() -> [UInt8] {
        var program = connect(0) + describe(0, stream: 0)
        for _ in 0..<5 { program += make(0, stream: 0, ticks: 2, time: recent) }
        program += make(0, stream: 0, ticks: 2, time: weeksLate)
        return program + send(0, which: 4) + commit() + send(0, which: 1) + send(0, which: 3) + commit(advance: 3)
            + send(0, which: 1) + send(0, which: 0) + send(0, which: 5) + commit(advance: 2) + send(0, which: 2)
            + commit()
    }

    /// Counters that jump by 2⁶² at a step.
    static func extremeCounts() -> [UInt8] {
        connect(2) + describe(2, stream: 0) + make(2, stream: 0, ticks: 3, time: recent, increment: 255, huge: true)
            + make(2, stream: 0, ticks: 2, time: recent, increment: 200, huge: true) + send(2, which: 0)
            + send(2, which: 1) + commit()
    }

    /// Many streams on a connection without the stream window, and with it.
    static func withoutTheWindow() -> [UInt8] {
        var program = connect(1, window: false)
        for stream in UInt8(0)..<3 {
            program +=
                describe(1, stream: stream) + make(1, stream: stream, ticks: 1, time: recent)
                + send(1, which: stream)
        }
        return program + commit() + connect(1) + send(1, which: 0) + send(1, which: 2) + commit()
    }
}
