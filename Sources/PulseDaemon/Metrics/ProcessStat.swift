import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A process's CPU time and resident memory, from `/proc/PID/stat` (Linux): for the daemon's `process_…` metrics
/// and the benchmarks that measure other processes.
public struct ProcessStat: Sendable, Hashable {
    /// User and system CPU time, in seconds.
    public var cpuSeconds: Double
    public var residentBytes: Int64

    /// The figures of `pid` (nil: this process); nil when they cannot be read.
    public init?(pid: Int32? = nil) {
        guard let stat = try? FileIO.readString("/proc/\(pid.map(String.init) ?? "self")/stat"),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // The command name is in parentheses and may hold spaces: fields count from after it. Fields 14 and 15
        // (utime, stime, in clock ticks) and 24 (rss, in pages) are the 12th, 13th and 22nd after the name.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 21, let user = Int64(fields[11]), let system = Int64(fields[12]),
            let pages = Int64(fields[21])
        else { return nil }
        cpuSeconds = Double(user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        residentBytes = pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
