import PulseAnalytics
import PulseCore
import PulseStore

/// What alert rules are evaluated on, read through the window engine (`docs/alerts.md`): each rule's series, their
/// labels, their figure over the finest buckets the rule's window touches, and the figure bucket by bucket for an
/// alert's chart. The daemon's ``AlertEvaluator`` steps each instance's phase from these.
public struct AlertQuery: Sendable {
    public let engine: WindowEngine
    /// When each agent's certificate expires (Unix seconds), for `certificate_expiry` rules: those connected to
    /// the evaluating daemon.
    public let certificateExpiries: @Sendable () -> [String: Int64]

    public init(engine: WindowEngine, certificateExpiries: @escaping @Sendable () -> [String: Int64] = { [:] }) {
        self.engine = engine
        self.certificateExpiries = certificateExpiries
    }

    /// The finest buckets a rule's window touches at `now`, the current (partial) one included.
    public func window(of rule: AlertRule, at now: Int64) -> Window {
        let level = engine.finest
        return Window(from: level.bucketStart(now - rule.window), to: level.bucketStart(now) + level.width)
    }

    // MARK: Scope

    /// The series a rule watches, by its scope and globs. Interface rules without interface globs watch the
    /// interfaces that count toward host totals (no loopback, no bond slaves); with globs, any that match.
    public func targets(of rule: AlertRule, during window: Window) -> [SeriesRecord] {
        let catalogue = engine.catalogue
        func hostMatches(_ agent: String?) -> Bool {
            rule.hosts.isEmpty || rule.hosts.contains { glob($0, agent ?? "") }
        }
        func groupMatches(_ agent: String?) -> Bool {
            guard !rule.groups.isEmpty else { return true }
            let groups = catalogue.memberships.filter { $0.agent == agent && $0.to == nil }.map(\.group.description)
            return groups.contains { group in rule.groups.contains { glob($0, group) } }
        }
        switch rule.scope {
        case .interface:
            return catalogue.interfaces.filter { interface in
                guard hostMatches(interface.agent), groupMatches(interface.agent),
                    let name = interface.interface
                else { return false }
                if rule.interfaces.isEmpty { return catalogue.counts(interface, catalogue.rules.standard) }
                return rule.interfaces.contains { InterfaceFilter.matches($0, name) }
            }
        case .host:
            return catalogue.hosts.filter { hostMatches($0.agent) && groupMatches($0.agent) }
        case .group:
            return catalogue.groups.filter { group in
                rule.groups.isEmpty || rule.groups.contains { glob($0, group.group?.description ?? "") }
            }
        case .fleet:
            return catalogue.fleet.map { [$0] } ?? []
        }
    }

    /// An instance's labels: the rule's name and severity, the series (host, interface, group), the agent's own
    /// labels (so notifications can be grouped by site), then the rule's labels, which win.
    public func labels(_ rule: AlertRule, _ series: SeriesRecord) -> [String: String] {
        labels(rule, series, agents: Dictionary(engine.catalogue.agents.map { ($0.name, $0) }) { first, _ in first })
    }

    /// ``labels(_:_:)`` with the agents by name, looked up once per evaluation rather than once per series.
    public func labels(_ rule: AlertRule, _ series: SeriesRecord, agents: [String: AgentRecord]) -> [String: String] {
        var labels = [String: String]()
        if let agent = series.agent, let record = agents[agent] {
            for (key, value) in record.labels.pairs { labels[key] = value }
        }
        labels["alertname"] = rule.name
        labels["severity"] = rule.severity
        labels["scope"] = "\(series.kind)"
        if let agent = series.agent { labels["host"] = agent }
        if let interface = series.interface { labels["interface"] = interface.description }
        if let group = series.group { labels["group"] = group.description }
        for (key, value) in rule.labels { labels[key] = value }
        return labels
    }

    /// The members whose rollups make a scope's figure.
    public func members(of target: SeriesRecord, during window: Window) -> [SeriesRecord] {
        target.kind == .interface ? [target] : engine.catalogue.members(of: target, during: window)
    }

    // MARK: Values

    /// Each target's figure over the window (absent from the result: no data).
    public func values(
        _ rule: AlertRule, targets: [SeriesRecord], window: Window, now: Int64
    ) async throws -> [Int64: Double] {
        guard !targets.isEmpty else { return [:] }
        var values = [Int64: Double]()
        if rule.condition.metric == .certificateExpiry {
            let expiries = certificateExpiries()
            for target in targets {
                if let agent = target.agent, let notAfter = expiries[agent] {
                    values[target.id] = Double(notAfter - now / 1_000)
                }
            }
            return values
        }
        if rule.condition.metric == .billingP95 {
            for bill in try await engine.bills(targets, containing: { _ in now }, now: now) {
                if let value = bill.bill.value { values[bill.series.id] = Double(value) * 8 / 1_000 }
            }
            return values
        }
        // An interface is its own only member: a rule over 10,000 of them builds no lists of members.
        let members: [[Int64]]? =
            targets.allSatisfy { $0.kind == .interface }
            ? nil : targets.map { self.members(of: $0, during: window).map(\.id) }
        let ids = members.map { Array(Set($0.joined())) } ?? targets.map(\.id)
        let sums =
            ids.isEmpty
            ? [:]
            : try await engine.store.sums(
                level: engine.finest, series: ids, from: window.from, to: window.to, fields: .all)
        let metric = rule.condition.metric
        for (index, target) in targets.enumerated() {
            let value =
                members.map { metric.value(of: $0[index].map { sums[$0] ?? .empty }) }
                ?? metric.value(of: [sums[target.id] ?? .empty])
            if let value { values[target.id] = value }
        }
        return values
    }

    /// The rule's figure per bucket of `[from, to)` for one series, for the alert chart: nil where there is no
    /// data. A billing rule charts the larger direction's 5-minute rate, the figure its percentile is taken of.
    public func history(
        _ rule: AlertRule, series: SeriesRecord, from: Int64, to: Int64, now: Int64
    ) async throws -> (level: RollupLevel, points: [(start: Int64, value: Double?)]) {
        let metric: AlertMetric =
            rule.condition.metric == .billingP95 || rule.condition.metric == .certificateExpiry
            ? .rate : rule.condition.metric
        let candidates = engine.levels.map(\.level).filter { $0.aligns(from) && $0.aligns(to) }
        let level =
            rule.condition.metric == .billingP95 && candidates.contains(.fiveMinutes)
            ? .fiveMinutes : (candidates.first { (to - from) / $0.width <= 1_500 } ?? candidates.last ?? engine.finest)
        let span = Window(from: from, to: to)
        let members = self.members(of: series, during: span)
        let buckets = try await engine.store.buckets(level: level, series: members.map(\.id), from: from, to: to)
        var byStart = [Int64: [BucketValues]]()
        for list in buckets.values {
            for bucket in list { byStart[bucket.start, default: []].append(bucket.values) }
        }
        var points = [(start: Int64, value: Double?)]()
        var start = from
        while start < min(to, now) {
            points.append((start, byStart[start].flatMap { metric.value(of: $0) }))
            start += level.width
        }
        return (level, points)
    }
}
