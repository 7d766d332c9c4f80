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
    /// Intervals that ended and have data, and ended intervals without data (excluded, not taken as zero).
    public var intervals: Int
    public var missing: Int
    /// The percentiles of each direction and of the sum, milli-bytes per second.
    public var inbound: Int64?
    public var outbound: Int64?
    public var sum: Int64?
    /// The highest revision of the buckets read.
    public var revision: Int64

    public init(
        period: Window, method: BillingMethod, intervals: Int, missing: Int, inbound: Int64?, outbound: Int64?,
        sum: Int64?, revision: Int64
    ) {
        self.period = period
        self.method = method
        self.intervals = intervals
        self.missing = missing
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
        buckets: [Bucket], period: Window, now: Int64, method: BillingMethod
    ) -> Bill {
        var inbound = [Int64]()
        var outbound = [Int64]()
        var sums = [Int64]()
        var revision: Int64 = 0
        for bucket in buckets
        where bucket.level.width == interval && bucket.start >= period.from && bucket.end <= min(now, period.to)
            && bucket.values.hasData
        {
            let rx = intervalRate(bytes: bucket.values.traffic[.rxBytes])
            let tx = intervalRate(bytes: bucket.values.traffic[.txBytes])
            inbound.append(rx)
            outbound.append(tx)
            sums.append(Saturating.sum(rx, tx))
            revision = Swift.max(revision, bucket.revision)
        }
        inbound.sort()
        outbound.sort()
        sums.sort()
        return Bill(
            period: period, method: method, intervals: inbound.count,
            missing: endedIntervals(in: period, now: now) - inbound.count,
            inbound: RateMath.percentile(inbound, 95), outbound: RateMath.percentile(outbound, 95),
            sum: RateMath.percentile(sums, 95), revision: revision)
    }
}

/// The billing terms of the fleet, with overrides for groups, hosts and single interfaces.
public struct BillingPolicy: Sendable, Hashable {
    public var day: Int
    public var method: BillingMethod
    public var calendar: CivilCalendar
    /// How long after its end a period's bill is issued and frozen (ms).
    public var closeAfter: Int64
    /// Label keys whose groups are billed; their values come only from the daemon's config.
    public var groupBy: [String]
    public var overrides: [BillingOverride]

    public init(
        day: Int = 1, method: BillingMethod = .max, calendar: CivilCalendar = .utc, closeAfter: Int64 = 3_600_000,
        groupBy: [String] = [], overrides: [BillingOverride] = []
    ) {
        self.day = day
        self.method = method
        self.calendar = calendar
        self.closeAfter = closeAfter
        self.groupBy = groupBy
        self.overrides = overrides
    }

    /// The day and method for a scope: the first override that matches it, else the fleet's.
    public func terms(for scope: BilledScope) -> (day: Int, method: BillingMethod) {
        guard let override = overrides.first(where: { $0.match == scope }) else { return (day, method) }
        return (override.day ?? day, override.method ?? method)
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

    public init(name: String, match: BilledScope, day: Int?, method: BillingMethod?) {
        self.name = name
        self.match = match
        self.day = day
        self.method = method
    }
}
