import PulseCharts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sequential reads from a file with plain `read(2)` calls, straight into the caller's memory.
struct BenchFileReader {
    private let path: String
    private var descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw BenchError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
    }

    mutating func closeFile() {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = -1
    }

    mutating func readBytes(count: Int) throws -> [UInt8] {
        try readArray(of: UInt8.self, count: count)
    }

    mutating func readInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        var value = T.zero
        try withUnsafeMutableBytes(of: &value) { try fill($0) }
        return T(littleEndian: value)
    }

    /// `count` numbers stored little-endian, read in one go.
    mutating func readArray<T: BitwiseCopyable>(of type: T.Type, count: Int) throws -> [T] {
        try [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            try fill(raw)
            #if _endian(big)
                let size = MemoryLayout<T>.size
                for start in stride(from: 0, to: raw.count, by: size) { raw[start..<start + size].reverse() }
            #endif
            initialized = count
        }
    }

    /// `count` Int64 seconds as instants, converted a block at a time so the integers never need an array.
    mutating func readTimes(count: Int) throws -> [ChartDate] {
        var times: [ChartDate] = []
        times.reserveCapacity(count)
        try withUnsafeTemporaryAllocation(of: Int64.self, capacity: 4096) { block in
            while times.count < count {
                let n = min(block.count, count - times.count)
                let part = UnsafeMutableBufferPointer(rebasing: block[..<n])
                try fill(UnsafeMutableRawBufferPointer(part))
                for seconds in part { times.append(ChartDate(secondsSinceEpoch: Double(Int64(littleEndian: seconds)))) }
            }
        }
        return times
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            let n = read(descriptor, base + done, buffer.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = n < 0 ? String(cString: strerror(errno)) : "the file ends early"
                throw BenchError(description: "cannot read \(path): \(reason)")
            }
            done += n
        }
    }
}
