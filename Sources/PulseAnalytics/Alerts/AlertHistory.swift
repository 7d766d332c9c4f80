/// One alert instance that is pending or firing: a rule applied to one series, with its labels. Kept in the store
/// so a restarted daemon, the CLI and reports see the same alerts.
public struct AlertInstance: Sendable, Hashable {
    public var rule: String
    /// ``AlertFingerprint`` of `labels`.
    public var fingerprint: String
    /// The series the instance watches.
    public var series: Int64
    public var labels: [String: String]
    public var annotations: [String: String]
    public var phase: AlertPhase
    /// The last value seen (nil: no data yet) and when the instance was last evaluated.
    public var value: Double?
    public var evaluatedAt: Int64
    /// A digest of the rule's definition: a rule whose definition changed starts again from inactive.
    public var ruleDigest: String

    public init(
        rule: String, fingerprint: String, series: Int64, labels: [String: String], annotations: [String: String],
        phase: AlertPhase, value: Double?, evaluatedAt: Int64, ruleDigest: String
    ) {
        self.rule = rule
        self.fingerprint = fingerprint
        self.series = series
        self.labels = labels
        self.annotations = annotations
        self.phase = phase
        self.value = value
        self.evaluatedAt = evaluatedAt
        self.ruleDigest = ruleDigest
    }
}

/// A transition of an alert instance, kept as history (with a retention).
public struct AlertEvent: Sendable, Hashable {
    /// Assigned by the store (0 before).
    public var id: Int64
    public var rule: String
    public var fingerprint: String
    public var series: Int64
    /// `.pending`, `.firing` or `.resolved`.
    public var status: AlertStatus
    public var at: Int64
    public var value: Double?
    public var labels: [String: String]
    public var annotations: [String: String]
    /// When it started firing (Alertmanager's `startsAt`), and for a resolved alert when it ended.
    public var startsAt: Int64
    public var endsAt: Int64?
    /// The alert chart written for the event, if any.
    public var chart: String?

    public init(
        id: Int64 = 0, rule: String, fingerprint: String, series: Int64, status: AlertStatus, at: Int64,
        value: Double?, labels: [String: String], annotations: [String: String], startsAt: Int64, endsAt: Int64?,
        chart: String?
    ) {
        self.id = id
        self.rule = rule
        self.fingerprint = fingerprint
        self.series = series
        self.status = status
        self.at = at
        self.value = value
        self.labels = labels
        self.annotations = annotations
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.chart = chart
    }
}

/// A silence: alerts whose labels match every matcher are not notified until `endsAt` (they are still evaluated,
/// kept and charted).
public struct Silence: Sendable, Hashable {
    public var id: String
    /// Label name → shell glob of the value (`host = "web-*"`).
    public var matchers: [String: String]
    public var startsAt: Int64
    public var endsAt: Int64
    public var createdBy: String
    public var comment: String

    public init(
        id: String, matchers: [String: String], startsAt: Int64, endsAt: Int64, createdBy: String, comment: String
    ) {
        self.id = id
        self.matchers = matchers
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.createdBy = createdBy
        self.comment = comment
    }

    public func isActive(at time: Int64) -> Bool { startsAt <= time && time < endsAt }
}
