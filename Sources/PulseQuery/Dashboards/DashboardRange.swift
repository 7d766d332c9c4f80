import PulseAnalytics

/// A time range a dashboard is drawn for: the window ending at the last complete bucket, and the rollup level it is
/// read at.
///
/// A range always ends at a bucket boundary at or before the time of rendering, so every bucket drawn has ended and
/// its rate is its bytes over its whole width; the bucket still filling is left for the next render.
public struct DashboardRange: Sendable, Hashable {
    /// The name in file names and the index (`hour`, `day`, `week`, `month`).
    public var name: String
    /// How people read it: `Last hour`.
    public var title: String
    /// The window's length, ms.
    public var length: Int64
    /// The level the range is read at when the store keeps it for the whole window; else the nearest level that
    /// is kept (``DashboardQuery`` says which it used).
    public var resolution: RollupLevel

    /// A range; `length` is rounded up to whole buckets of `resolution`.
    public init(name: String, title: String, length: Int64, resolution: RollupLevel) {
        self.name = name
        self.title = title
        self.resolution = resolution
        self.length = max(1, (length + resolution.width - 1) / resolution.width) * resolution.width
    }

    /// The last 60 minutes at 1-minute buckets.
    public static let hour = DashboardRange(
        name: "hour", title: "Last hour", length: 3_600_000, resolution: .oneMinute)
    /// The last 24 hours at 5-minute buckets.
    public static let day = DashboardRange(
        name: "day", title: "Last 24 hours", length: 86_400_000, resolution: .fiveMinutes)
    /// The last 7 days at 1-hour buckets.
    public static let week = DashboardRange(
        name: "week", title: "Last 7 days", length: 7 * 86_400_000, resolution: .oneHour)
    /// The last 30 days at 1-hour buckets.
    public static let month = DashboardRange(
        name: "month", title: "Last 30 days", length: 30 * 86_400_000, resolution: .oneHour)

    /// Hour, day, week and month: what the index shows.
    public static let standard: [DashboardRange] = [.hour, .day, .week, .month]
}
