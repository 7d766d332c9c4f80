import PulseCharts

/// Series sampled at the same instants: the benchmark's data in memory, and on disk the counterpart of an RRD,
/// which `pulsecharts-bench graph` reads as `rrdtool graph` reads its RRD.
///
/// On disk the layout is columnar, so loading takes a few large `read` calls straight into the arrays the chart
/// takes; an RRD holds its values as doubles too. All numbers are little-endian:
///
///     8 bytes           "PCBENCH1"
///     UInt32            point count n
///     UInt32            series count s
///     s times           UInt32 name length, then the name in UTF-8
///     n × Int64         instants, seconds since the Unix epoch
///     s × n × Float64   values, one series after another
struct BenchTable {
    static let magic = Array("PCBENCH1".utf8)

    /// Whole seconds, as rrdtool stores them.
    var times: [ChartDate]
    var series: [(name: String, values: [Double])]

    /// Writes the file in one go.
    func write(to path: String) throws {
        var bytes = Self.magic
        Self.append(UInt32(times.count), to: &bytes)
        Self.append(UInt32(series.count), to: &bytes)
        for s in series {
            Self.append(UInt32(s.name.utf8.count), to: &bytes)
            bytes += s.name.utf8
        }
        for t in times { Self.append(UInt64(bitPattern: Int64(t.secondsSinceEpoch)), to: &bytes) }
        for s in series {
            precondition(s.values.count == times.count, "series \(s.name) has a different length")
            for v in s.values { Self.append(v.bitPattern, to: &bytes) }
        }
        try BenchIO.write(bytes, to: path)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    /// Reads a file written by `write(to:)`.
    ///
    /// - Throws: `BenchError` if the file cannot be read, is not a benchmark data file or is cut short.
    static func read(from path: String) throws -> BenchTable {
        var file = try BenchFileReader(path: path)
        defer { file.closeFile() }
        let magic = try file.readBytes(count: 8)
        guard magic == Self.magic else {
            throw BenchError(description: "\(path) is not a benchmark data file: run `pulsecharts-bench data DIR`")
        }
        let count = Int(try file.readInteger(UInt32.self))
        let seriesCount = Int(try file.readInteger(UInt32.self))
        var names: [String] = []
        for _ in 0..<seriesCount {
            let length = Int(try file.readInteger(UInt32.self))
            names.append(String(decoding: try file.readBytes(count: length), as: UTF8.self))
        }
        let times = try file.readTimes(count: count)
        var series: [(name: String, values: [Double])] = []
        series.reserveCapacity(seriesCount)
        for name in names {
            series.append((name, try file.readArray(of: Double.self, count: count)))
        }
        return BenchTable(times: times, series: series)
    }
}
