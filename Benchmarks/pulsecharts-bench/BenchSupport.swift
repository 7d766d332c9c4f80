#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum BenchClock {
    /// Milliseconds on the monotonic clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1_000_000
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
}

enum BenchIO {
    static func write(_ text: String, to path: String) throws {
        guard let file = fopen(path, "w") else {
            throw BenchError(description: "cannot open \(path) for writing: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        let written =
            text.utf8.withContiguousStorageIfAvailable { fwrite($0.baseAddress, 1, $0.count, file) }
            ?? Array(text.utf8).withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == text.utf8.count else {
            throw BenchError(description: "short write to \(path)")
        }
    }
}
