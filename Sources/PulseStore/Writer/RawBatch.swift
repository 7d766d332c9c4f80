import PulseAnalytics
import PulseCore

/// The stored form of a batch's raw samples: per section, its series, epoch, first tick and ``SeriesChunk``.
package struct RawBatch {
    package var bytes = [UInt8]()

    package mutating func append(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8]) {
        var writer = WireWriter(reservingCapacity: 24)
        writer.writeVarint(UInt64(bitPattern: series))
        writer.writeVarint(UInt64(bitPattern: epoch))
        writer.writeVarint(UInt64(UInt32(bitPattern: firstTick)))
        writer.writeVarint(UInt64(chunk.count))
        bytes += writer.bytes
        bytes += chunk
    }

    /// Each section: (series, epoch, first tick, chunk).
    static func sections(_ bytes: [UInt8]) throws -> [(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8])] {
        var reader = WireReader(bytes)
        var sections = [(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8])]()
        while !reader.isAtEnd {
            let series = Int64(bitPattern: try reader.readVarint())
            let epoch = Int64(bitPattern: try reader.readVarint())
            let tick = Int32(bitPattern: UInt32(truncatingIfNeeded: try reader.readVarint()))
            let length = Int(try reader.readVarint(max: UInt64(bytes.count), "raw chunk"))
            sections.append((series, epoch, tick, Array(try reader.readBytes(length))))
        }
        return sections
    }

    /// Appends the samples of `series` with (shifted) timestamps in `range` from one stored raw batch.
    package static func appendSamples(
        of series: Int64, from bytes: [UInt8], order: Int64, shift: Int64, in range: Range<Int64>,
        epochs: [Int64: CounterEpoch], to samples: inout [RawSample]
    ) throws {
        for section in try sections(bytes) where section.series == series {
            guard let epoch = epochs[section.epoch] else { throw StoreError.damaged("raw samples of an unknown epoch") }
            let chunk = try SeriesChunk.decode(section.chunk)
            for (index, timestamp) in chunk.timestamps.enumerated() where range.contains(timestamp + shift) {
                let start = index * Counter.count
                samples.append(
                    RawSample(
                        order: order, timestamp: timestamp + shift, epoch: epoch,
                        counters: CounterValues(Array(chunk.values[start..<start + Counter.count]))!))
            }
        }
    }

    package init(bytes: [UInt8] = [UInt8]()) {
        self.bytes = bytes
    }
}
