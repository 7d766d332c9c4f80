import PulseCore

/// What an alert rule watches, over the buckets the last `window` touches (`docs/alerts.md`).
public enum AlertMetric: String, Sendable, Hashable, CaseIterable {
    /// Receive, transmit, and the larger of the two: bits per second.
    case rateIn = "rate_in"
    case rateOut = "rate_out"
    case rate
    /// The larger direction's rate as a percentage of the link speed (a scope: of its members' speeds).
    case utilisation
    /// Errors and drops as a percentage of packets.
    case errorRatio = "error_ratio"
    case dropRatio = "drop_ratio"
    /// The 95th percentile of the billing period so far (the bill the store keeps), bits per second.
    case billingP95 = "billing_p95"
    /// 1 when no interface of the scope reported anything over the window, else 0.
    case absent
    /// Seconds until the host's agent certificate expires (negative once it has), from its connection: known while
    /// the agent is connected to the daemon that evaluates (host scope only).
    case certificateExpiry = "certificate_expiry"

    public enum Unit: Sendable { case bitsPerSecond, percent, seconds, none }

    public var unit: Unit {
        switch self {
        case .rateIn, .rateOut, .rate, .billingP95: .bitsPerSecond
        case .utilisation, .errorRatio, .dropRatio: .percent
        case .certificateExpiry: .seconds
        case .absent: .none
        }
    }

    /// The metric's value from the interfaces of a scope, each merged over the window: rates are each interface's
    /// bytes over the time its data covers, summed (so a partly arrived current minute is not diluted); nil when
    /// nothing covers the window (no data is not a value: the rule neither fires nor resolves on it).
    ///
    /// `billingP95` and `certificateExpiry` are not computed here: they come from the kept bill and the agents'
    /// connections.
    public func value(of members: [BucketValues]) -> Double? {
        func rate(_ field: TrafficCounter) -> Double? {
            var total = 0.0
            var any = false
            for member in members where member.coveredMilliseconds > 0 {
                any = true
                total += Double(member.traffic[field]) * 8_000 / Double(member.coveredMilliseconds)
            }
            return any ? total : nil
        }
        func ratio(_ parts: [TrafficCounter]) -> Double? {
            var part: Int64 = 0
            var packets: Int64 = 0
            for member in members {
                part += parts.reduce(0) { $0 + member.traffic[$1] }
                packets += member.traffic[.rxPackets] + member.traffic[.txPackets]
            }
            return packets > 0 ? Double(part) * 100 / Double(packets) : nil
        }
        switch self {
        case .rateIn: return rate(.rxBytes)
        case .rateOut: return rate(.txBytes)
        case .rate:
            guard let rx = rate(.rxBytes), let tx = rate(.txBytes) else { return nil }
            return max(rx, tx)
        case .utilisation:
            let speed = members.filter(\.hasData).reduce(0.0) { $0 + Double($1.speedMbps) * 1_000_000 }
            guard speed > 0, let rx = rate(.rxBytes), let tx = rate(.txBytes) else { return nil }
            return max(rx, tx) * 100 / speed
        case .errorRatio: return ratio([.rxErrors, .txErrors])
        case .dropRatio: return ratio([.rxDropped, .txDropped])
        case .absent: return members.contains(where: \.hasData) ? 0 : 1
        case .billingP95, .certificateExpiry: return nil
        }
    }

    /// A value of this metric for people: `812 Mbit/s`, `93.5 %`, `absent`.
    public func format(_ value: Double) -> String {
        switch unit {
        case .bitsPerSecond: Units.formatBitRate(bytesPerSecond: value / 8)
        case .percent: "\(Units.fixed(value, significant: 3)) %"
        case .seconds:
            value < 0
                ? "expired \(Units.formatAge(Int64(-value * 1_000))) ago"
                : value.truncatingRemainder(dividingBy: 86_400) == 0
                    ? Units.formatDuration(Int64(value * 1_000)) : Units.formatAge(Int64(value * 1_000))
        case .none: value >= 1 ? "absent" : "reporting"
        }
    }

    /// Parses a threshold in this metric's unit: rates as `800Mbit/s`, `800Mbps`, `100MB/s` (bytes) or a plain
    /// number of bits per second; percentages as `90%`.
    public func parseThreshold(_ text: String) -> Double? {
        let trimmed = text.trimmingWhitespace()
        switch unit {
        case .percent:
            guard trimmed.hasSuffix("%"), let value = Double(String(trimmed.dropLast()).trimmingWhitespace()),
                value.isFinite, value >= 0
            else { return nil }
            return value
        case .bitsPerSecond:
            return Self.parseBitRate(trimmed)
        case .seconds:
            return Units.parseDuration(trimmed).map { Double($0) / 1_000 }
        case .none:
            return nil
        }
    }

    /// `800Mbit/s`, `800 Mbps`, `1.5Gbit/s`, `100MB/s`, `250000` → bits per second.
    static func parseBitRate(_ text: String) -> Double? {
        let suffixes: [(String, Double)] = [
            ("bit/s", 1), ("bps", 1), ("b/s", 1), ("B/s", 8), ("Bps", 8),
        ]
        var number = Substring(text)
        var scale = 1.0
        for (suffix, factor) in suffixes where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = factor
            break
        }
        number = Substring(String(number).trimmingWhitespace())
        let prefixes: [Character: Double] = ["k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12]
        if let last = number.last, let prefix = prefixes[last] {
            number = number.dropLast()
            scale *= prefix
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        return value * scale
    }
}

/// A rule's condition: the metric, which side of the threshold fires, and the clear threshold that resolves
/// (hysteresis; the fire threshold when not set).
public struct AlertCondition: Sendable, Hashable, CustomStringConvertible {
    public enum Comparison: String, Sendable, Hashable {
        case above = ">"
        case below = "<"
    }

    public var metric: AlertMetric
    public var comparison: Comparison
    public var threshold: Double
    public var clear: Double

    public init(metric: AlertMetric, comparison: Comparison, threshold: Double, clear: Double? = nil) {
        self.metric = metric
        self.comparison = comparison
        self.threshold = threshold
        self.clear = clear ?? threshold
    }

    /// A rule that fires when the scope stops reporting.
    public static let absent = AlertCondition(metric: .absent, comparison: .above, threshold: 0.5)

    /// The value is past the fire threshold: an inactive alert goes pending, a pending one stays.
    public func breaches(_ value: Double) -> Bool {
        comparison == .above ? value > threshold : value < threshold
    }

    /// The value is still past the clear threshold: a firing alert stays firing.
    public func holds(_ value: Double) -> Bool {
        comparison == .above ? value > clear : value < clear
    }

    public var description: String {
        metric == .absent ? "absent" : "\(metric.rawValue) \(comparison.rawValue) \(metric.format(threshold))"
    }
}
