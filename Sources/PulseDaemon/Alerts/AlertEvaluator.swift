import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// A transition found by an evaluation, with what the alert chart needs.
struct AlertTransition: Sendable {
    var rule: AlertRule
    var event: AlertEvent
    /// The phase the transition ends (for `.resolved`) or starts; its times shade the chart.
    var phase: AlertPhase
}

/// What one evaluation found: the changes to store and the transitions to announce.
struct AlertRound: Sendable {
    var update = AlertUpdate()
    var transitions = [AlertTransition]()
    /// Instances evaluated (series × rules).
    var evaluated = 0
}

/// Evaluates alert rules (`docs/alerts.md`): reads each rule's series and figures through ``AlertQuery`` and steps
/// each instance's phase from the instances the store holds; the result is what ``AlertService`` stores and
/// announces.
struct AlertEvaluator: Sendable {
    let query: AlertQuery

    init(engine: WindowEngine, certificateExpiries: @escaping @Sendable () -> [String: Int64] = { [:] }) {
        query = AlertQuery(engine: engine, certificateExpiries: certificateExpiries)
    }

    /// One evaluation of every rule at `now`, from the instances the store holds.
    ///
    /// Instances of rules that were removed or changed, and of series the rule no longer covers, end: firing ones
    /// resolve (so receivers are not left with an alert that never ends), pending ones are dropped.
    ///
    /// - Parameter holdAbsent: `absent` rules are not evaluated (the daemon just started: agents are still
    ///   reconnecting), their instances kept as they are.
    func evaluate(
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

        let agents = Dictionary(query.engine.catalogue.agents.map { ($0.name, $0) }) { first, _ in first }
        for rule in rules {
            if holdAbsent && rule.condition.metric == .absent { continue }
            let window = query.window(of: rule, at: now)
            let targets = query.targets(of: rule, during: window)
            let values = try await query.values(rule, targets: targets, window: window, now: now)
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
                let labels = query.labels(rule, target, agents: agents)
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
}
