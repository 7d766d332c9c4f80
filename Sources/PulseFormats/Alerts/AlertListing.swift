import PulseAnalytics
import PulseCore
import PulseQuery

/// What `netpulse alerts` prints.
public struct AlertListing: Sendable {
    public var now: Int64
    public var rules: [String: AlertRule]
    public var instances: [AlertInstance]
    public var events: [AlertEvent]
    public var silences: [Silence]
    public var queued: Int

    public init(
        now: Int64, rules: [String: AlertRule], instances: [AlertInstance], events: [AlertEvent], silences: [Silence],
        queued: Int
    ) {
        self.now = now
        self.rules = rules
        self.instances = instances
        self.events = events
        self.silences = silences
        self.queued = queued
    }

    /// Firing before pending, then the oldest first.
    public var current: [AlertInstance] {
        instances.sorted {
            ($0.phase.status == .firing ? 0 : 1, $0.phase.activeSince, $0.rule, $0.fingerprint)
                < ($1.phase.status == .firing ? 0 : 1, $1.phase.activeSince, $1.rule, $1.fingerprint)
        }
    }

    func silencedBy(_ labels: [String: String]) -> [String] {
        silences.filter { $0.isActive(at: now) && $0.matches(labels) }.map(\.id)
    }

    func valueText(_ rule: String, _ value: Double?) -> String {
        guard let value else { return "no data" }
        return rules[rule]?.condition.metric.format(value) ?? "\(value)"
    }

    /// What an alert watches: its host, interface or group, or the fleet.
    public static func target(_ labels: [String: String]) -> String {
        let parts = ["host", "interface", "group"].compactMap { labels[$0] }
        return parts.isEmpty ? "fleet" : parts.joined(separator: " ")
    }

    public static func matchersText(_ matchers: [String: String]) -> String {
        matchers.sorted { $0.key < $1.key }.map { "\($0.key)=\(JSONText.string($0.value))" }.joined(
            separator: ", ")
    }

    public func table(_ calendar: CivilCalendar) -> String {
        var out = ""
        if current.isEmpty {
            out += "no alerts pending or firing\n"
        } else {
            var rows = [["STATUS", "SINCE", "RULE", "SEVERITY", "TARGET", "VALUE", "SILENCED"]]
            for instance in current {
                rows.append([
                    instance.phase.status.rawValue,
                    calendar.localText(instance.phase.firedAt ?? instance.phase.activeSince),
                    TerminalText.safe(instance.rule), TerminalText.safe(instance.labels["severity"] ?? ""),
                    TerminalText.safe(Self.target(instance.labels)), valueText(instance.rule, instance.value),
                    silencedBy(instance.labels).isEmpty ? "" : "yes",
                ])
            }
            out += TerminalText.table(rows, numeric: [])
        }
        if !events.isEmpty { out += "\nrecent events, newest first\n" + eventsTable(calendar) }
        if !current.isEmpty || !events.isEmpty || !silences.isEmpty { out += "(times in \(calendar.name))\n" }
        if !silences.isEmpty {
            out += "\nsilences\n"
            var rows = [["ID", "MATCHERS", "FROM", "UNTIL", "BY", "COMMENT"]]
            for silence in silences.sorted(by: { $0.endsAt < $1.endsAt }) {
                rows.append([
                    silence.id, TerminalText.safe(Self.matchersText(silence.matchers)),
                    calendar.localText(silence.startsAt), calendar.localText(silence.endsAt),
                    TerminalText.safe(silence.createdBy), TerminalText.safe(silence.comment),
                ])
            }
            out += TerminalText.table(rows, numeric: [])
        }
        if queued > 0 { out += "\n\(queued) notification(s) waiting for delivery\n" }
        return out
    }

    public var json: String {
        JSONText.object([
            ("now", JSONText.string(RFC3339.text(now))),
            (
                "alerts",
                JSONText.array(
                    current.map { instance in
                        JSONText.object([
                            ("rule", JSONText.string(instance.rule)),
                            ("status", JSONText.string(instance.phase.status.rawValue)),
                            ("fingerprint", JSONText.string(instance.fingerprint)),
                            ("activeSince", JSONText.string(RFC3339.text(instance.phase.activeSince))),
                            ("firingSince", Self.time(instance.phase.firedAt)),
                            ("value", Self.number(instance.value)),
                            ("valueText", JSONText.string(valueText(instance.rule, instance.value))),
                            ("evaluatedAt", JSONText.string(RFC3339.text(instance.evaluatedAt))),
                            ("labels", Self.map(instance.labels)), ("annotations", Self.map(instance.annotations)),
                            ("silencedBy", JSONText.array(silencedBy(instance.labels).map(JSONText.string))),
                        ])
                    })
            ),
            ("events", String(eventsJSON.dropLast())),
            (
                "silences",
                JSONText.array(
                    silences.map { silence in
                        JSONText.object([
                            ("id", JSONText.string(silence.id)), ("matchers", Self.map(silence.matchers)),
                            ("startsAt", JSONText.string(RFC3339.text(silence.startsAt))),
                            ("endsAt", JSONText.string(RFC3339.text(silence.endsAt))),
                            ("createdBy", JSONText.string(silence.createdBy)),
                            ("comment", JSONText.string(silence.comment)),
                            ("active", silence.isActive(at: now) ? "true" : "false"),
                        ])
                    })
            ),
            ("queuedNotifications", "\(queued)"),
        ]) + "\n"
    }

    /// The recent events alone (`netpulse alerts events`), newest first.
    public func eventsTable(_ calendar: CivilCalendar) -> String {
        guard !events.isEmpty else { return "no alert events in this time\n" }
        var rows = [["TIME", "STATUS", "RULE", "TARGET", "VALUE", "CHART"]]
        for event in events {
            rows.append([
                calendar.localText(event.at), event.status.rawValue, TerminalText.safe(event.rule),
                TerminalText.safe(Self.target(event.labels)), valueText(event.rule, event.value),
                TerminalText.safe(event.chart ?? ""),
            ])
        }
        return TerminalText.table(rows, numeric: [])
    }

    /// The recent events as a JSON array, newest first: the `events` of ``json``.
    public var eventsJSON: String {
        JSONText.array(
            events.map { event in
                JSONText.object([
                    ("id", "\(event.id)"), ("rule", JSONText.string(event.rule)),
                    ("status", JSONText.string(event.status.rawValue)),
                    ("at", JSONText.string(RFC3339.text(event.at))), ("value", Self.number(event.value)),
                    ("valueText", JSONText.string(valueText(event.rule, event.value))),
                    ("fingerprint", JSONText.string(event.fingerprint)),
                    ("startsAt", JSONText.string(RFC3339.text(event.startsAt))),
                    ("endsAt", Self.time(event.endsAt)), ("labels", Self.map(event.labels)),
                    ("annotations", Self.map(event.annotations)),
                    ("chart", event.chart.map(JSONText.string) ?? "null"),
                ])
            }) + "\n"
    }

    /// The recent events as CSV, newest first: labels and annotations as one JSON object each.
    public var eventsCSV: String {
        var out = CSVText.row([
            "at_utc", "status", "rule", "target", "value", "fingerprint", "starts_at_utc", "ends_at_utc", "labels",
            "annotations", "chart",
        ])
        for event in events {
            out += CSVText.row([
                RFC3339.text(event.at), event.status.rawValue, event.rule, Self.target(event.labels),
                Self.number(event.value) == "null" ? "" : Self.number(event.value), event.fingerprint,
                RFC3339.text(event.startsAt), event.endsAt.map(RFC3339.text) ?? "", Self.map(event.labels),
                Self.map(event.annotations), event.chart ?? "",
            ])
        }
        return out
    }

    static func map(_ pairs: [String: String]) -> String {
        JSONText.object(pairs.sorted { $0.key < $1.key }.map { ($0.key, JSONText.string($0.value)) })
    }

    static func time(_ value: Int64?) -> String { value.map { JSONText.string(RFC3339.text($0)) } ?? "null" }

    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return "\(value)"
    }
}
