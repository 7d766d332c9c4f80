import PulseAnalytics
import PulseCore
import PulseStore

/// A transition found by an evaluation, with what the alert chart needs.
public struct AlertTransition: Sendable {
    public var rule: AlertRule
    public var event: AlertEvent
    /// The phase the transition ends (for `.resolved`) or starts; its times shade the chart.
    public var phase: AlertPhase
}

/// What one evaluation found: the changes to store and the transitions to announce.
public struct AlertRound: Sendable {
    public var update = AlertUpdate()
    public var transitions = [AlertTransition]()
    /// Instances evaluated (series × rules).
    public var evaluated = 0
}

/// Evaluates alert rules against the store's rollups (`docs/alerts.md`): each rule's series, their figure over
/// the finest buckets the rule's window touches, and each instance's phase.
public struct AlertEvaluator: Sendable {
    public let engine: WindowEngine

    public init(engine: WindowEngine) {
        self.engine = engine
    }

    /// One evaluation of every rule at `now`, from the instances the store holds.
    ///
    /// Instances of rules that were removed or changed, and of series the rule no longer covers, end: firing ones
    /// resolve (so receivers are not left with an alert that never ends), pending ones are dropped.
    ///
    /// - Parameter holdAbsent: `absent` rules are not evaluated (the daemon just started: agents are still
    ///   reconnecting), their instances kept as they are.
    public func evaluate(
        _ rules: [AlertRule], instances: [AlertInstance], now: Int64, holdAbsent: Bool = false
    ) async throws -> AlertRound {
        var round = AlertRound()
        var existing = [AlertKey: AlertInstance]()
        for instance in instances {
            existing[AlertKey(rule: instance.rule, fingerprint: instance.fingerprint)] = instance
        }
        let byName = Dictionary(rules.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

        // Instances whose rule is gone or changed.
        for (key, instance) in existing.sorted(by: {
            $0.key.rule < $1.key.rule || ($0.key.rule == $1.key.rule && $0.key.fingerprint < $1.key.fingerprint)
        }) {
            guard let rule = byName[key.rule], rule.digest == instance.ruleDigest else {
                end(
                    instance, rule: byName[key.rule], reason: byName[key.rule] == nil ? "rule removed" : "rule changed",
                    now: now, into: &round)
                existing[key] = nil
                continue
            }
        }

        let agents = Dictionary(engine.catalogue.agents.map { ($0.name, $0) }) { first, _ in first }
        for rule in rules {
            if holdAbsent && rule.condition.metric == .absent { continue }
            let window = self.window(of: rule, at: now)
            let targets = self.targets(of: rule, during: window)
            let values = try await self.values(rule, targets: targets, window: window, now: now)
            // The series this rule has instances of: a target without one that stays inactive needs no labels.
            // (Labels name the series, so an instance of a target always has that target's series.)
            let tracked = Set(existing.values.filter { $0.rule == rule.name }.map(\.series))
            var seen = Set<String>()
            for target in targets {
                round.evaluated += 1
                let value = values[target.id]
                if !tracked.contains(target.id) {
                    let (phase, transition) = AlertPhase.advance(
                        nil, value: value, condition: rule.condition, timing: rule.timing, now: now)
                    if phase == nil && transition == nil { continue }
                }
                let labels = self.labels(rule, target, agents: agents)
                let fingerprint = AlertFingerprint.of(labels)
                seen.insert(fingerprint)
                let key = AlertKey(rule: rule.name, fingerprint: fingerprint)
                let previous = existing[key]
                let (phase, transition) = AlertPhase.advance(
                    previous?.phase, value: value, condition: rule.condition, timing: rule.timing, now: now)
                guard phase != nil || transition != nil else {
                    if previous != nil { round.update.removed.append(key) }
                    continue
                }
                let annotations = rule.annotations.mapValues { rule.render($0, value: value, labels: labels) }
                if let phase {
                    round.update.instances.append(
                        AlertInstance(
                            rule: rule.name, fingerprint: fingerprint, series: target.id, labels: labels,
                            annotations: annotations, phase: phase, value: value ?? previous?.value, evaluatedAt: now,
                            ruleDigest: rule.digest))
                } else if previous != nil {
                    round.update.removed.append(key)
                }
                guard let transition else { continue }
                let ended = previous?.phase ?? AlertPhase(status: .firing, activeSince: now, firedAt: now)
                let at = transition == .resolved ? ended : phase!
                round.transitions.append(
                    AlertTransition(
                        rule: rule,
                        event: AlertEvent(
                            rule: rule.name, fingerprint: fingerprint, series: target.id, status: transition, at: now,
                            value: value, labels: labels, annotations: annotations,
                            startsAt: at.firedAt ?? at.activeSince, endsAt: transition == .resolved ? now : nil,
                            chart: nil),
                        phase: at))
            }
            // Instances of series the rule no longer covers (a host taken out of its scope, a group that emptied).
            for (key, instance) in existing where key.rule == rule.name && !seen.contains(key.fingerprint) {
                end(instance, rule: rule, reason: "no longer in the rule's scope", now: now, into: &round)
            }
        }
        round.update.events = round.transitions.map(\.event)
        return round
    }

    /// Ends an instance outside the normal course: resolved if it was firing, dropped if pending.
    private func end(
        _ instance: AlertInstance, rule: AlertRule?, reason: String, now: Int64, into round: inout AlertRound
    ) {
        round.update.removed.append(AlertKey(rule: instance.rule, fingerprint: instance.fingerprint))
        guard instance.phase.status == .firing else { return }
        var annotations = instance.annotations
        annotations["resolved_because"] = reason
        let placeholder = AlertRule(name: instance.rule, condition: .absent)
        round.transitions.append(
            AlertTransition(
                rule: rule ?? placeholder,
                event: AlertEvent(
                    rule: instance.rule, fingerprint: instance.fingerprint, series: instance.series, status: .resolved,
                    at: now, value: instance.value, labels: instance.labels, annotations: annotations,
                    startsAt: instance.phase.firedAt ?? instance.phase.activeSince, endsAt: now, chart: nil),
                phase: instance.phase))
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
    func labels(_ rule: AlertRule, _ series: SeriesRecord, agents: [String: AgentRecord]) -> [String: String] {
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
    func members(of target: SeriesRecord, during window: Window) -> [SeriesRecord] {
        target.kind == .interface ? [target] : engine.catalogue.members(of: target, during: window)
    }

    // MARK: Values

    /// Each target's figure over the window (absent from the result: no data).
    func values(
        _ rule: AlertRule, targets: [SeriesRecord], window: Window, now: Int64
    ) async throws -> [Int64: Double] {
        guard !targets.isEmpty else { return [:] }
        var values = [Int64: Double]()
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
        let metric: AlertMetric = rule.condition.metric == .billingP95 ? .rate : rule.condition.metric
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

/// A shell glob (fnmatch) on any name: rule scopes and silences match with it.
public func glob(_ pattern: String, _ text: String) -> Bool { InterfaceFilter.matches(pattern, InterfaceName(text)) }

extension Silence {
    /// A silence matches an alert when every matcher's glob matches the value of its label (a missing label is
    /// the empty text, so `team=""`-style matchers work as in Alertmanager).
    public func matches(_ labels: [String: String]) -> Bool {
        matchers.allSatisfy { name, pattern in glob(pattern, labels[name] ?? "") }
    }
}
