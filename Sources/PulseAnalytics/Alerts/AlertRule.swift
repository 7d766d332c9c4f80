import PulseCore

/// One alerting rule from the daemon's config (`[alert.NAME]`, `docs/alerts.md`), shaped like a Prometheus rule:
/// a condition on a window figure, a scope, `for`, hysteresis or `keep_firing_for`, a severity, labels and
/// annotations (templates with the value filled in).
public struct AlertRule: Sendable, Hashable {
    public var name: String
    public var condition: AlertCondition
    /// How far back the figure looks: the finest rollup buckets the last `window` touches (milliseconds).
    public var window: Int64
    public var timing: AlertTiming
    public var scope: SeriesKind
    /// Shell globs on agent names, interface names and groups (`site=fra*`); empty matches every one.
    public var hosts: [String]
    public var interfaces: [String]
    public var groups: [String]
    public var severity: String
    public var labels: [String: String]
    /// Templates: `{{ $value }}`, `{{ $threshold }}`, `{{ $clear }}`, `{{ $window }}`, `{{ $labels.NAME }}`.
    public var annotations: [String: String]

    public init(
        name: String, condition: AlertCondition, window: Int64 = 60_000, timing: AlertTiming = AlertTiming(),
        scope: SeriesKind = .interface, hosts: [String] = [], interfaces: [String] = [], groups: [String] = [],
        severity: String = "warning", labels: [String: String] = [:], annotations: [String: String] = [:]
    ) {
        self.name = name
        self.condition = condition
        self.window = window
        self.timing = timing
        self.scope = scope
        self.hosts = hosts
        self.interfaces = interfaces
        self.groups = groups
        self.severity = severity
        self.labels = labels
        self.annotations = annotations
    }

    /// Changes when anything that decides the rule's alerts changes: such a rule starts again from inactive on
    /// reload, while unchanged rules keep their pending and firing alerts.
    public var digest: String {
        let parts: [String] = [
            name, condition.metric.rawValue, condition.comparison.rawValue, "\(condition.threshold)",
            "\(condition.clear)", "\(window)", "\(timing.pendingFor)", "\(timing.keepFiringFor)", "\(scope)",
            hosts.joined(separator: ","), interfaces.joined(separator: ","), groups.joined(separator: ","), severity,
            labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","),
        ]
        return AlertFingerprint.of(["rule": parts.joined(separator: "\u{1F}")])
    }

    /// The placeholders annotations may use.
    public static let placeholders: Set<String> = ["$value", "$threshold", "$clear", "$window", "$for"]

    /// The names a template uses that are not placeholders (`$labels.NAME` is always allowed), for config checks.
    public static func unknownPlaceholders(in template: String) -> [String] {
        placeholderNames(template).filter { !placeholders.contains($0) && !$0.hasPrefix("$labels.") }
    }

    /// Fills an annotation template.
    public func render(_ template: String, value: Double?, labels: [String: String]) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                output += rest[open.lowerBound...]
                return output
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingWhitespace()
            switch name {
            case "$value": output += value.map(condition.metric.format) ?? "no data"
            case "$threshold": output += condition.metric.format(condition.threshold)
            case "$clear": output += condition.metric.format(condition.clear)
            case "$window": output += Units.formatDuration(window)
            case "$for": output += Units.formatDuration(timing.pendingFor)
            default:
                if name.hasPrefix("$labels.") { output += labels[String(name.dropFirst(8))] ?? "" }
            }
            rest = rest[close.upperBound...]
        }
        return output + rest
    }

    private static func placeholderNames(_ template: String) -> [String] {
        var names = [String]()
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            names.append(rest[open.upperBound..<close.lowerBound].trimmingWhitespace())
            rest = rest[close.upperBound...]
        }
        return names
    }
}

extension Substring {
    fileprivate func range(of needle: String) -> Range<Index>? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(needle) {
                return index..<self.index(index, offsetBy: needle.count)
            }
            index = self.index(after: index)
        }
        return nil
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
