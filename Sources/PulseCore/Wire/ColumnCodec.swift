/// Compresses columns of cumulative counters and timestamps.
///
/// A column's first value is written whole (LEB128); the rest become residuals against a prediction, either the
/// previous value (`delta` mode, best for noisy traffic) or the previous value plus the previous step
/// (`delta-of-delta` mode, best for steady traffic and timestamps). The encoder tries both and every nearby Rice
/// parameter and keeps the cheapest, writing its choice in 7 bits. This is the Gorilla idea adapted to counters
/// that mostly grow: close to the entropy of the traffic.
public enum ColumnCodec {
    enum Mode: UInt64 {
        case delta = 0
        case deltaOfDelta = 1
    }

    // MARK: Counters

    /// Writes `count` samples of sixteen counters (sample-major in `values`, starting at `offset`).
    ///
    /// Without a reference the first sample is a keyframe: a varint mask of its non-zero counters, then those
    /// values. With a reference (the last sample of the same interface sent earlier on the connection) there is no
    /// keyframe: the first sample is coded as a residual against the reference like every other sample. Then a
    /// varint mask of the counters that change, and one bit block holding, per changing counter, its mode, Rice
    /// parameter and residuals.
    public static func writeCounters(
        _ values: [UInt64], offset: Int = 0, count: Int, reference: CounterReference? = nil,
        into writer: inout WireWriter
    ) {
        precondition(count >= 1 && offset + count * Counter.count <= values.count)
        if reference == nil {
            var keyMask: UInt64 = 0
            for counter in 0..<Counter.count where values[offset + counter] != 0 { keyMask |= 1 << UInt64(counter) }
            writer.writeVarint(keyMask)
            for counter in 0..<Counter.count where values[offset + counter] != 0 {
                writer.writeVarint(values[offset + counter])
            }
            guard count > 1 else { return }
        }
        var changeMask: UInt64 = 0
        for counter in 0..<Counter.count {
            let first = reference?.last[counter] ?? values[offset + counter]
            for sample in 0..<count where values[offset + sample * Counter.count + counter] != first {
                changeMask |= 1 << UInt64(counter)
                break
            }
        }
        writer.writeVarint(changeMask)
        guard changeMask != 0 else { return }
        let prefix = reference == nil ? 0 : 1
        var column = [UInt64](repeating: 0, count: count + prefix)
        var scratch = [UInt64](repeating: 0, count: 2 * (count + prefix - 1))
        for counter in 0..<Counter.count where changeMask & (1 << UInt64(counter)) != 0 {
            if let reference { column[0] = reference.last[counter] }
            for sample in 0..<count { column[prefix + sample] = values[offset + sample * Counter.count + counter] }
            writeResiduals(column, priorDelta: reference?.delta[counter] ?? 0, scratch: &scratch, into: &writer)
        }
        writer.alignToByte()
    }

    /// Reads what ``writeCounters(_:offset:count:reference:into:)`` wrote (with the same reference), appending
    /// `count × 16` values to `values`.
    public static func readCounters(
        count: Int, reference: CounterReference? = nil, from reader: inout WireReader, into values: inout [UInt64]
    ) throws(WireError) {
        let offset = values.count
        var first: [UInt64]
        if let reference {
            first = reference.last
        } else {
            first = [UInt64](repeating: 0, count: Counter.count)
            let keyMask = try reader.readVarint(max: 0xFFFF, "counter key mask")
            for counter in 0..<Counter.count where keyMask & (1 << UInt64(counter)) != 0 {
                first[counter] = try reader.readVarint()
                guard first[counter] != 0 else { throw .malformed("zero value marked non-zero in key mask") }
            }
        }
        values.reserveCapacity(offset + count * Counter.count)
        for _ in 0..<count { values.append(contentsOf: first) }
        guard count > 1 || reference != nil else { return }

        let changeMask = try reader.readVarint(max: 0xFFFF, "counter change mask")
        guard changeMask != 0 else { return }
        // With a keyframe the first sample is already in place and `count - 1` residuals follow; with a
        // reference all `count` samples are residuals.
        let coded = reference == nil ? count - 1 : count
        let start = reference == nil ? offset + Counter.count : offset
        try values.withUnsafeMutableBufferPointer { buffer throws(WireError) in
            for counter in 0..<Counter.count where changeMask & (1 << UInt64(counter)) != 0 {
                try readResiduals(
                    count: coded, after: first[counter], priorDelta: reference?.delta[counter] ?? 0, from: &reader,
                    into: buffer, start: start + counter, stride: Counter.count)
            }
        }
        try reader.alignToByte()
    }

    // MARK: Timestamps

    /// Writes strictly increasing millisecond timestamps: the first whole, a nominal interval, then residuals
    /// predicted from that interval (a clock ticking on time costs one or two bits per tick).
    public static func writeTimestamps(_ timestamps: [Int64], into writer: inout WireWriter) {
        precondition(!timestamps.isEmpty && timestamps[0] >= 0)
        writer.writeVarint(UInt64(timestamps[0]))
        guard timestamps.count > 1 else { return }
        let interval = UInt64(bitPattern: timestamps[1] &- timestamps[0])
        writer.writeVarint(interval)
        writeResiduals(timestamps.map { UInt64(bitPattern: $0) }, priorDelta: interval, into: &writer)
        writer.alignToByte()
    }

    /// Reads `count` timestamps and checks that they are valid: not negative, strictly increasing.
    public static func readTimestamps(count: Int, from reader: inout WireReader) throws(WireError) -> [Int64] {
        let first = try reader.readVarint(max: UInt64(Int64.max) / 2, "first timestamp")
        guard count > 1 else { return [Int64(first)] }
        let interval = try reader.readVarint(max: UInt64(Int64.max) / 2, "tick interval")
        var raw = [UInt64](repeating: first, count: count)
        try raw.withUnsafeMutableBufferPointer { buffer throws(WireError) in
            try readResiduals(
                count: count - 1, after: first, priorDelta: interval, from: &reader, into: buffer, start: 1, stride: 1)
        }
        try reader.alignToByte()
        var timestamps = [Int64]()
        timestamps.reserveCapacity(count)
        var previous: UInt64 = 0
        for (index, value) in raw.enumerated() {
            guard value <= UInt64(Int64.max) / 2 else { throw .malformed("timestamp out of range") }
            guard index == 0 || value > previous else { throw .malformed("timestamps are not strictly increasing") }
            previous = value
            timestamps.append(Int64(value))
        }
        return timestamps
    }

    // MARK: Residual blocks

    /// Writes mode (1 bit), Rice parameter (6 bits) and `column.count - 1` residuals, choosing the cheapest.
    static func writeResiduals(_ column: [UInt64], priorDelta: UInt64, into writer: inout WireWriter) {
        var scratch = [UInt64]()
        writeResiduals(column, priorDelta: priorDelta, scratch: &scratch, into: &writer)
    }

    /// The same, with both candidate residual lists in `scratch` (grown when short): the columns of one chunk share
    /// it, so a chunk of sixteen columns makes one allocation rather than thirty-two (daemon profiles showed the
    /// allocations of these small lists).
    static func writeResiduals(
        _ column: [UInt64], priorDelta: UInt64, scratch: inout [UInt64], into writer: inout WireWriter
    ) {
        let count = column.count - 1
        if scratch.count < 2 * count { scratch = [UInt64](repeating: 0, count: 2 * count) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            // Deltas in [0, count), deltas of deltas in [count, 2 × count).
            var previousDelta = priorDelta
            for index in 0..<count {
                let delta = column[index + 1] &- column[index]
                buffer[index] = RiceCode.zigzag(delta)
                buffer[count + index] = RiceCode.zigzag(delta &- previousDelta)
                previousDelta = delta
            }
            let deltas = UnsafeBufferPointer(rebasing: buffer[0..<count])
            let deltasOfDeltas = UnsafeBufferPointer(rebasing: buffer[count..<(2 * count)])
            let (deltaK, deltaCost) = bestParameter(deltas)
            let (dodK, dodCost) = bestParameter(deltasOfDeltas)
            let (mode, k, residuals) =
                dodCost < deltaCost ? (Mode.deltaOfDelta, dodK, deltasOfDeltas) : (Mode.delta, deltaK, deltas)
            writer.writeBits(mode.rawValue, count: 1)
            writer.writeBits(UInt64(k), count: 6)
            for residual in residuals { writer.writeRice(residual, k: k) }
        }
    }

    /// Reads a residual block: the `count` values that follow `first` in a column, written at
    /// `start, start + stride, …` of `buffer`.
    static func readResiduals(
        count: Int, after first: UInt64, priorDelta: UInt64, from reader: inout WireReader,
        into buffer: UnsafeMutableBufferPointer<UInt64>, start: Int, stride: Int
    ) throws(WireError) {
        let mode = try reader.readBits(1)
        let k = Int(try reader.readBits(6))
        guard k <= RiceCode.maximumK else { throw .malformed("Rice parameter \(k)") }
        var value = first
        var previousDelta = priorDelta
        for index in 0..<count {
            let residual = RiceCode.unzigzag(try reader.readRice(k: k))
            let delta = mode == Mode.deltaOfDelta.rawValue ? previousDelta &+ residual : residual
            value = value &+ delta
            previousDelta = delta
            buffer[start + index * stride] = value
        }
    }

    /// The Rice parameter with the fewest total bits, searched around log2 of the mean residual.
    static func bestParameter(_ residuals: UnsafeBufferPointer<UInt64>) -> (k: Int, bits: Int) {
        var sum: UInt64 = 0
        var overflow = false
        for residual in residuals {
            let (next, didOverflow) = sum.addingReportingOverflow(residual)
            sum = next
            overflow = overflow || didOverflow
        }
        let mean = overflow ? UInt64.max : sum / UInt64(max(1, residuals.count))
        let centre = max(0, RiceCode.bitLength(mean) - 1)
        var best = (k: centre, bits: Int.max)
        for k in max(0, centre - 2)...min(RiceCode.maximumK, centre + 2) {
            var bits = 0
            for residual in residuals { bits += RiceCode.cost(residual, k: k) }
            if bits < best.bits { best = (k, bits) }
        }
        return best
    }
}

/// The last sample of an interface sent earlier on the same connection, against which the next section of that
/// interface is coded instead of repeating its absolute counters (see `docs/protocol.md`, "references").
public struct CounterReference: Sendable, Hashable {
    /// The sample's sixteen counters.
    public var last: [UInt64]
    /// Its step from the sample before (wrapping), the prediction of the next step in delta-of-delta mode.
    public var delta: [UInt64]

    public init(last: [UInt64], delta: [UInt64]) {
        self.last = last
        self.delta = delta
    }

    /// The reference a section leaves behind: its last sample, and its last step (from the sample before it, or
    /// from the reference it was coded against).
    public init(after values: [UInt64], count: Int, previous: CounterReference?) {
        let lastStart = (count - 1) * Counter.count
        last = Array(values[lastStart..<lastStart + Counter.count])
        if count >= 2 {
            let before = lastStart - Counter.count
            delta = (0..<Counter.count).map { values[lastStart + $0] &- values[before + $0] }
        } else if let previous {
            delta = (0..<Counter.count).map { values[$0] &- previous.last[$0] }
        } else {
            delta = [UInt64](repeating: 0, count: Counter.count)
        }
    }
}
