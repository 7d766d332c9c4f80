import PulseAnalytics
import PulseCore

/// How the store counts and rolls up (`docs/windows.md`); the daemon's config sets it.
public struct StoreSettings: Sendable, Hashable {
    /// Rollup levels, finest first; each width divides the next. 5 minutes is required for billing.
    public var levels: [RollupLevel]
    /// Bytes per second assumed possible on a link of unknown speed (`[ingest] max_rate`).
    public var maximumRate: UInt64
    /// How far ahead of the daemon's clock a batch may end before it is moved back (`[ingest] clock_tolerance`).
    public var clockTolerance: Int64
    /// How far ahead a batch may end and still be moved back (`[ingest] max_skew`); one further ahead is not moved,
    /// and its samples after the daemon's clock cannot be placed (`docs/windows.md`, "Clocks").
    public var maximumSkew: Int64
    /// How old a sample may be when it arrives and still be placed in time, and the longest step that is spread
    /// (`[ingest] max_age`; `docs/windows.md`, "Time that cannot be placed").
    public var maximumAge: Int64
    /// The longest gap between two samples whose time counts as covered (interpolated); a longer one is an outage
    /// (`[ingest] outage_after`; `docs/windows.md`, "Time classes and spreading").
    public var outageAfter: Int64
    /// The most separate ranges of sequence numbers one stream may have stored (`[limits]
    /// sequence_ranges_per_stream`): a batch that would open one more is refused. Holes come from batches an
    /// agent's spool dropped or the daemon refused, a few in a stream's life; a hostile agent sending every other
    /// sequence number would make the deduplication rows grow without end.
    public var maximumSequenceRanges = 4_096
    /// What counts toward host, group and fleet totals.
    public var rules: ScopeRules
    /// `FULL` fsyncs every commit before anything is acknowledged; `NORMAL` survives crashes of the process only.
    public var synchronous: Synchronous

    public enum Synchronous: String, Sendable, Hashable {
        case full = "FULL"
        case normal = "NORMAL"
    }

    public init(
        levels: [RollupLevel] = RollupLevel.standard, maximumRate: UInt64 = 50_000_000_000,
        clockTolerance: Int64 = 30_000, maximumSkew: Int64 = 86_400_000, maximumAge: Int64 = 14 * 86_400_000,
        outageAfter: Int64 = 15 * 60_000, rules: ScopeRules = ScopeRules(), synchronous: Synchronous = .full
    ) {
        self.levels = levels
        self.maximumRate = maximumRate
        self.clockTolerance = clockTolerance
        self.maximumSkew = maximumSkew
        self.maximumAge = maximumAge
        self.outageAfter = outageAfter
        self.rules = rules
        self.synchronous = synchronous
    }

    public static let standard = StoreSettings()
}

/// How long each kind of data is kept (milliseconds; `nil` = for ever).
public struct RetentionPolicy: Sendable, Hashable {
    /// Raw samples (the batches as received).
    public var raw: Int64
    public var levels: [RollupLevel: Int64?]
    /// How long after its end a gap can still be filled by late data (`docs/windows.md`); then its spread is
    /// written into the rollups for good.
    public var lateData: Int64

    public init(raw: Int64, levels: [RollupLevel: Int64?], lateData: Int64 = 14 * 86_400_000) {
        self.raw = raw
        self.levels = levels
        self.lateData = lateData
    }

    /// Raw 48 h, 1 min 30 days, 5 min 400 days (billing needs a year and a month), 1 h two years, 1 day for ever.
    public static let standard = RetentionPolicy(
        raw: 48 * 3_600_000,
        levels: [
            .oneMinute: 30 * 86_400_000, .fiveMinutes: 400 * 86_400_000, .oneHour: 730 * 86_400_000, .oneDay: nil,
        ])

    /// How long `level` is kept; levels not named are kept for ever.
    public func keeps(_ level: RollupLevel) -> Int64? { levels[level] ?? nil }
}
