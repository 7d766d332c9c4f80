#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes a line to standard error (for command-line errors, before logging is set up); without `newline`, the
/// text only (a progress bar redrawing its line).
public func printError(_ message: String, newline: Bool = true) {
    let line = Array((message + (newline ? "\n" : "")).utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
