import PulseCore

/// The stored form of one interface's samples from one batch: the same column coding as the wire (see
/// ``ColumnCodec``), so a stored sample costs about what it cost to send, and decoding is the wire decoder.
///
/// Layout: varint sample count, the timestamp column, the counter columns.
public enum SeriesChunk {
    public static func encode(timestamps: [Int64], values: [UInt64]) -> [UInt8] {
        precondition(!timestamps.isEmpty && values.count == timestamps.count * Counter.count)
        var writer = WireWriter(reservingCapacity: 16 + timestamps.count * 12)
        writer.writeVarint(UInt64(timestamps.count))
        ColumnCodec.writeTimestamps(timestamps, into: &writer)
        ColumnCodec.writeCounters(values, count: timestamps.count, into: &writer)
        return writer.bytes
    }

    /// Decodes a chunk, checking it the way a frame is checked: a damaged database gives an error, not a trap.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> (timestamps: [Int64], values: [UInt64]) {
        var reader = WireReader(bytes)
        let count = Int(
            try reader.readVarint(max: UInt64(WireLimits.standard.maximumTicksPerBatch * 4), "chunk samples"))
        guard count >= 1 else { throw .malformed("empty chunk") }
        let timestamps = try ColumnCodec.readTimestamps(count: count, from: &reader)
        var values = [UInt64]()
        try ColumnCodec.readCounters(count: count, from: &reader, into: &values)
        guard reader.isAtEnd else { throw .malformed("trailing bytes in chunk") }
        return (timestamps, values)
    }
}
