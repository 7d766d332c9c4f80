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
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0), to: path) }
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try bytes.withUnsafeBytes { try write($0, to: path) }
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, to path: String) throws {
        guard let file = fopen(path, "w") else {
            throw BenchError(description: "cannot open \(path) for writing: \(String(cString: strerror(errno)))")
        }
        let written = bytes.isEmpty ? 0 : fwrite(bytes.baseAddress, 1, bytes.count, file)
        guard fclose(file) == 0, written == bytes.count else {
            throw BenchError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
