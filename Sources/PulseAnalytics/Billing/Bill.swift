/// How a 95th-percentile bill reads the two directions (`docs/windows.md`, "95th-percentile billing").
public enum BillingMethod: String, Sendable, Hashable, CaseIterable {
    case inbound = "in"
    case outbound = "out"
    /// The larger of the inbound and outbound percentiles: the usual default.
    case max
    /// The percentile of inbound + outbound per interval.
    case sum
}

/// A 95th-percentile bill of one series for one billing period.
public struct Bill: Sendable, Hashable {
    public var period: Window
    public var method: BillingMethod
    /// `n`: the intervals that count (ended, with data, not excluded by the terms); and the ended intervals without
    /// data (none, or only an outage's spread), which are left out, never taken as zero.
    public var intervals: Int
    public var missing: Int
    /// What the ended intervals with data were: measured, interpolated, flagged (`docs/windows.md`); nil for a bill
    /// issued before the store recorded it.
    public var classes: IntervalClasses?
    /// How the percentile's rank was taken.
    public var rank: RankConvention
    /// The percentiles of each direction and of the sum, milli-bytes per second.
    public var inbound: Int64?
    public var outbound: Int64?
    public var sum: Int64?
    /// The highest revision of the buckets read.
    public var revision: Int64

    public init(
        period: Window, method: BillingMethod, intervals: Int, missing: Int, classes: IntervalClasses?,
        rank: RankConvention = .round, inbound: Int64?, outbound: Int64?, sum: Int64?, revision: Int64
    ) {
        self.period = period
        self.method = method
        self.intervals = intervals
        self.missing = missing
        self.classes = classes
        self.rank = rank
        self.inbound = inbound
        self.outbound = outbound
        self.sum = sum
        self.revision = revision
    }

    /// What the method bills, milli-bytes per second.
    public var value: Int64? {
        switch method {
        case .inbound: inbound
        case .outbound: outbound
        case .max: inbound.flatMap { rx in outbound.map { Swift.max(rx, $0) } }
        case .sum: sum
        }
    }

    /// The rank of the rate the percentile is among the `n` sorted ascending (1 is the smallest); nil without any.
    public var rankPosition: Int? {
        intervals > 0 ? RateMath.percentileIndex(count: intervals, percent: 95, rank: rank) + 1 : nil
    }

    /// The billing interval.
    public static let interval: Int64 = 300_000

    /// The rate of one 5-minute interval: ⌊bytes × 10⁶ / 300,000⌋ milli-bytes per second.
    public static func intervalRate(bytes: Int64) -> Int64 {
        RateMath.rate(bytes: bytes, milliseconds: interval)!
    }

    /// Intervals of the period that have ended by `now`.
    public static func endedIntervals(in period: Window, now: Int64) -> Int {
        Int(max(0, min(now, period.to) - period.from) / interval)
    }

    /// The bill of a series from its 5-minute buckets in the period (any order; others are ignored).
    public static func compute(
        buckets: [Bucket], period: Window, now: Int64, method: BillingMethod, terms: IntervalTerms = IntervalTerms(),
        rank: RankConvention = .round
    ) -> Bill {
        let tracker = BillTracker.rebuilt(from: buckets, period: period, now: now, terms: terms)
        var revision: Int64 = 0
        for bucket in buckets where BillTracker.isEnded(bucket, in: period, now: now) && bucket.values.hasData {
            revision = Swift.max(revision, bucket.revision)
        }
        return tracker.bill(period: period, now: now, method: method, rank: rank, revision: revision)
    }
}

/// What the ended intervals with data of a bill were (`docs/windows.md`, "95th-percentile billing").
public struct IntervalClasses: Sendable, Hashable {
    /// Intervals with measured time.
    public var measured: Int
    /// Intervals whose data is only spread from short gaps.
    public var interpolated: Int
    /// Intervals (measured or interpolated) that hold an implausible step.
    public var flagged: Int

    public init(measured: Int = 0, interpolated: Int = 0, flagged: Int = 0) {
        self.measured = measured
        self.interpolated = interpolated
        self.flagged = flagged
    }

    /// Adds (`sign` 1) or takes out (−1) one interval.
    mutating func count(_ interval: BillInterval, sign: Int) {
        if interval.isMeasured { measured += sign } else { interpolated += sign }
        if interval.isFlagged { flagged += sign }
    }
}

/// One 5-minute interval as a bill reads it: its rates, and whether it was measured and flagged.
public struct BillInterval: Sendable, Hashable {
    public var inbound: Int64
    public var outbound: Int64
    public var isMeasured: Bool
    public var isFlagged: Bool

    /// The interval of these figures; nil when it has no data (missing for bills).
    public init?(
        rxBytes: Int64, txBytes: Int64, measuredMilliseconds: Int64, coveredMilliseconds: Int64, flagged: Bool
    ) {
        guard coveredMilliseconds > 0 else { return nil }
        inbound = Bill.intervalRate(bytes: rxBytes)
        outbound = Bill.intervalRate(bytes: txBytes)
        isMeasured = measuredMilliseconds > 0
        isFlagged = flagged
    }

    /// The interval a 5-minute bucket is; nil when it has no data.
    public init?(_ values: BucketValues) {
        self.init(
            rxBytes: values.traffic[.rxBytes], txBytes: values.traffic[.txBytes],
            measuredMilliseconds: values.measuredMilliseconds, coveredMilliseconds: values.coveredMilliseconds,
            flagged: values.isFlagged)
    }
}

/// Whether a kind of interval counts toward a bill's percentile.
public enum IntervalUse: String, Sendable, Hashable, CaseIterable {
    case count
    case exclude
}

/// Which intervals with data a bill counts (`[billing] interpolated`, `flagged`).
public struct IntervalTerms: Sendable, Hashable {
    public var interpolated: IntervalUse
    public var flagged: IntervalUse

    public init(interpolated: IntervalUse = .count, flagged: IntervalUse = .count) {
        self.interpolated = interpolated
        self.flagged = flagged
    }

    /// Whether `interval` counts under these terms.
    public func counts(_ interval: BillInterval) -> Bool {
        (interval.isMeasured || interpolated == .count) && (!interval.isFlagged || flagged == .count)
    }
}

/// The terms one scope is billed by.
public struct BillingTerms: Sendable, Hashable {
    public var day: Int
    public var method: BillingMethod
    public var intervals: IntervalTerms
    public var rank: RankConvention

    public init(
        day: Int = 1, method: BillingMethod = .max, intervals: IntervalTerms = IntervalTerms(),
        rank: RankConvention = .round
    ) {
        self.day = day
        self.method = method
        self.intervals = intervals
        self.rank = rank
    }
}

/// The billing terms of the fleet, with overrides for groups, hosts and single interfaces.
public struct BillingPolicy: Sendable, Hashable {
    public var day: Int
    public var method: BillingMethod
    /// Which intervals count, and the percentile's rank, unless an override says otherwise.
    public var intervals: IntervalTerms
    public var rank: RankConvention
    public var calendar: CivilCalendar
    /// How long after its end a period's bill is issued and frozen (ms).
    public var closeAfter: Int64
    /// Label keys whose groups are billed; their values come only from the daemon's config.
    public var groupBy: [String]
    public var overrides: [BillingOverride]

    public init(
        day: Int = 1, method: BillingMethod = .max, intervals: IntervalTerms = IntervalTerms(),
        rank: RankConvention = .round, calendar: CivilCalendar = .utc, closeAfter: Int64 = 3_600_000,
        groupBy: [String] = [], overrides: [BillingOverride] = []
    ) {
        self.day = day
        self.method = method
        self.intervals = intervals
        self.rank = rank
        self.calendar = calendar
        self.closeAfter = closeAfter
        self.groupBy = groupBy
        self.overrides = overrides
    }

    /// The terms of a scope: each of the first override that matches it, else the fleet's.
    public func terms(for scope: BilledScope) -> BillingTerms {
        let fleet = BillingTerms(day: day, method: method, intervals: intervals, rank: rank)
        guard let override = overrides.first(where: { $0.match == scope }) else { return fleet }
        return BillingTerms(
            day: override.day ?? day, method: override.method ?? method,
            intervals: IntervalTerms(
                interpolated: override.interpolated ?? intervals.interpolated,
                flagged: override.flagged ?? intervals.flagged),
            rank: override.rank ?? rank)
    }
}

/// What a billing override applies to.
public enum BilledScope: Sendable, Hashable, CustomStringConvertible {
    case fleet
    case group(GroupKey)
    case host(String)
    case interface(agent: String, name: String)

    /// `fleet`, `site=fra1`, `web-01`, `web-01/eth0`.
    public init?(parsing text: String) {
        if text == "fleet" {
            self = .fleet
        } else if text.contains("=") {
            guard let group = GroupKey(parsing: text) else { return nil }
            self = .group(group)
        } else if let slash = text.firstIndex(of: "/") {
            let agent = String(text[..<slash])
            let name = String(text[text.index(after: slash)...])
            guard !agent.isEmpty, !name.isEmpty else { return nil }
            self = .interface(agent: agent, name: name)
        } else {
            guard !text.isEmpty else { return nil }
            self = .host(text)
        }
    }

    public var description: String {
        switch self {
        case .fleet: "fleet"
        case .group(let group): group.description
        case .host(let agent): agent
        case .interface(let agent, let name): "\(agent)/\(name)"
        }
    }
}

/// One `[billing.NAME]` table: other terms for one scope.
public struct BillingOverride: Sendable, Hashable {
    public var name: String
    public var match: BilledScope
    public var day: Int?
    public var method: BillingMethod?
    public var interpolated: IntervalUse?
    public var flagged: IntervalUse?
    public var rank: RankConvention?

    public init(
        name: String, match: BilledScope, day: Int?, method: BillingMethod?, interpolated: IntervalUse? = nil,
        flagged: IntervalUse? = nil, rank: RankConvention? = nil
    ) {
        self.name = name
        self.match = match
        self.day = day
        self.method = method
        self.interpolated = interpolated
        self.flagged = flagged
        self.rank = rank
    }
}
