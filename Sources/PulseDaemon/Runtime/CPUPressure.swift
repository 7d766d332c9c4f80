import PulseCore

/// How long tasks have waited for a CPU, from the kernel's pressure stall information (`/proc/pressure/cpu`, Linux
/// 4.20 and later unless booted with `psi=0`): the time during which at least one runnable task had no core to run
/// on. Its growth over an interval, divided by the interval, is the share of that interval the CPUs were contended.
///
/// The daemon's dashboards rest while the CPUs are contended (`DashboardService.Pacer`): a core that drawing holds
/// then is a core something else waits for.
public enum CPUPressure {
    /// The system-wide file: `some avg10=0.00 avg60=0.10 avg300=1.95 total=8168184097` (and a `full` line).
    public static let path = "/proc/pressure/cpu"

    /// Microseconds since boot during which some task waited for a CPU; nil when the kernel does not say (no such
    /// file, PSI switched off: reading then fails with `EOPNOTSUPP`).
    public static func stalledMicroseconds(path: String = path) -> UInt64? {
        guard let text = try? FileIO.readString(path) else { return nil }
        return stalledMicroseconds(in: text)
    }

    /// The `total=` of the `some` line of a pressure file's text.
    public static func stalledMicroseconds(in text: String) -> UInt64? {
        for line in text.split(separator: "\n") where line.hasPrefix("some ") {
            for field in line.split(separator: " ") where field.hasPrefix("total=") {
                return UInt64(field.dropFirst(6))
            }
        }
        return nil
    }
}
