import Foundation

/// Figures of `/proc/PID/status`.
public enum ProcessStatus {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    /// A memory figure (`VmRSS`, `VmHWM`, …), in bytes.
    public static func bytes(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { throw Missing(description: "no \(field) in /proc/\(pid)/status") }
        return kilobytes * 1_024
    }
}
