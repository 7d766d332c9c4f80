import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore

/// `[alerts]`, `[alerts.notify]` and the rules `[alert.NAME]` (`docs/alerts.md`).
public struct AlertSettings: Sendable, Hashable {
    public var rules: [AlertRule]
    /// How often every rule is evaluated (ms).
    public var evaluationInterval: Int64
    /// Where alert charts and event JSON are written.
    public var directory: String
    /// How long alert history (events) and their files are kept (ms).
    public var history: Int64
    /// After the daemon starts, `absent` rules wait this long (ms) for agents to reconnect.
    public var startupGrace: Int64
    public var notify: NotifySettings

    public init(directory: String) {
        rules = []
        evaluationInterval = 15_000
        self.directory = directory
        history = 90 * 86_400_000
        startupGrace = 300_000
        notify = NotifySettings()
    }

    public var enabled: Bool { !rules.isEmpty }

    static func parse(_ reader: inout ConfigReader, stateDirectory: String) throws(ConfigError) -> AlertSettings {
        var settings = AlertSettings(directory: "\(stateDirectory)/alerts")
        settings.evaluationInterval = try reader.duration(
            "alerts", "evaluation_interval", default: 15_000, range: 1_000...3_600_000)
        let directory = try reader.string("alerts", "directory", default: "alerts")
        settings.directory = directory.hasPrefix("/") ? directory : "\(stateDirectory)/\(directory)"
        settings.history = try reader.duration(
            "alerts", "history", default: 90 * 86_400_000, range: 3_600_000...3_650 * 86_400_000)
        settings.startupGrace = try reader.duration(
            "alerts", "startup_grace", default: 300_000, range: 0...86_400_000)
        settings.notify = try NotifySettings.parse(&reader)
        for (name, _) in reader.subtables(of: "alert") where !name.contains(".") {
            settings.rules.append(try parseRule(&reader, name: name))
        }
        return settings
    }

    /// One `[alert.NAME]` with its `[alert.NAME.labels]` and `[alert.NAME.annotations]`.
    static func parseRule(_ reader: inout ConfigReader, name: String) throws(ConfigError) -> AlertRule {
        let table = "alert.\(name)"
        guard !name.isEmpty, name.utf8.count <= 128,
            name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
        else {
            throw ConfigError(
                file: reader.document.file, line: reader.document.tableLines[table], key: nil,
                "[\(table)]: the rule name \"\(name)\" must be letters, digits, '_' or '-' (at most 128)")
        }
        guard let expression = try reader.optionalString(table, "expr") else {
            throw reader.invalid(
                table, "expr",
                "is missing: say what fires, such as expr = \"rate_in > 800Mbit/s\" or expr = \"absent\"")
        }
        var condition = try parseExpression(expression, &reader, table: table)
        if let clearText = try reader.optionalString(table, "clear") {
            guard condition.metric != .absent, let clear = condition.metric.parseThreshold(clearText) else {
                throw reader.invalid(
                    table, "clear",
                    condition.metric == .absent
                        ? "does not apply to absent rules"
                        : "is \"\(clearText)\", not a \(condition.metric.unitName)")
            }
            let beyond = condition.comparison == .above ? clear > condition.threshold : clear < condition.threshold
            guard !beyond else {
                throw reader.invalid(
                    table, "clear",
                    "is \(condition.metric.format(clear)), on the firing side of the threshold \(condition.metric.format(condition.threshold)); a clear threshold must be \(condition.comparison == .above ? "below" : "above") it"
                )
            }
            condition.clear = clear
        }
        let window = try reader.duration(table, "window", default: 60_000, range: 1_000...31 * 86_400_000)
        let timing = AlertTiming(
            pendingFor: try reader.duration(table, "for", default: 0, range: 0...31 * 86_400_000),
            keepFiringFor: try reader.duration(table, "keep_firing_for", default: 0, range: 0...31 * 86_400_000))
        let hostOnly = condition.metric == .certificateExpiry
        let scopeText = try reader.string(
            table, "scope", default: condition.metric == .absent || hostOnly ? "host" : "interface")
        let scopes: [String: SeriesKind] = ["interface": .interface, "host": .host, "group": .group, "fleet": .fleet]
        guard let scope = scopes[scopeText] else {
            throw reader.invalid(table, "scope", "is \"\(scopeText)\"; use interface, host, group or fleet")
        }
        // A certificate is an agent's: there is one per host, none per interface or group.
        if hostOnly && scope != .host {
            throw reader.invalid(
                table, "scope", "is \"\(scopeText)\"; certificate_expiry rules watch hosts (scope = \"host\")")
        }
        let hosts = try reader.stringArray(table, "hosts", default: [])
        let interfaces = try reader.stringArray(table, "interfaces", default: [])
        let groups = try reader.stringArray(table, "groups", default: [])
        if !interfaces.isEmpty && scope != .interface {
            throw reader.invalid(
                table, "interfaces", "only applies to scope = \"interface\" (this rule's scope is \(scopeText))")
        }
        if !hosts.isEmpty && (scope == .group || scope == .fleet) {
            throw reader.invalid(table, "hosts", "only applies to interface and host scopes")
        }
        for group in groups
        where GroupKey(parsing: group.replacingAll("*", with: "x").replacingAll("?", with: "x")) == nil {
            throw reader.invalid(
                table, "groups", "has \"\(group)\"; name groups as key=value (globs allowed: site=fra*)")
        }
        let severity = try reader.string(table, "severity", default: "warning")
        guard !severity.isEmpty else { throw reader.invalid(table, "severity", "must not be empty") }
        var labels = [String: String]()
        for (key, value) in try reader.labels("\(table).labels", anyText: true).pairs { labels[key] = value }
        var annotations = [String: String]()
        for (key, value) in try reader.stringTable("\(table).annotations") {
            let unknown = AlertRule.unknownPlaceholders(in: value)
            guard unknown.isEmpty else {
                throw reader.invalid(
                    "\(table).annotations", key,
                    "uses {{ \(unknown[0]) }}; known: {{ $value }}, {{ $threshold }}, {{ $clear }}, {{ $window }}, {{ $for }}, {{ $labels.NAME }}"
                )
            }
            annotations[key] = value
        }
        if annotations["summary"] == nil {
            annotations["summary"] =
                condition.metric == .absent
                ? "{{ $labels.host }} has not reported for {{ $window }}"
                : condition.metric == .certificateExpiry
                    ? "the certificate of agent {{ $labels.host }} expires in {{ $value }} (warned under {{ $threshold }})"
                    : "\(condition.metric.rawValue) is {{ $value }} (threshold {{ $threshold }})"
        }
        return AlertRule(
            name: name, condition: condition, window: window, timing: timing, scope: scope, hosts: hosts,
            interfaces: interfaces, groups: groups, severity: severity, labels: labels, annotations: annotations)
    }

    /// `rate_in > 800Mbit/s`, `utilisation > 90%`, `error_ratio > 0.1%`, `billing_p95 > 500Mbit/s`, `absent`.
    static func parseExpression(
        _ text: String, _ reader: inout ConfigReader, table: String
    ) throws(ConfigError) -> AlertCondition {
        let words = text.split(separator: " ", maxSplits: 2).map(String.init)
        let metrics = AlertMetric.allCases.map(\.rawValue).joined(separator: ", ")
        if words == ["absent"] { return .absent }
        guard words.count == 3, let metric = AlertMetric(rawValue: words[0]), metric != .absent,
            let comparison = AlertCondition.Comparison(rawValue: words[1])
        else {
            throw reader.invalid(
                table, "expr",
                "is \"\(text)\"; write METRIC > THRESHOLD or METRIC < THRESHOLD (metrics: \(metrics)), or \"absent\"")
        }
        guard let threshold = metric.parseThreshold(words[2]) else {
            throw reader.invalid(table, "expr", "has threshold \"\(words[2])\", not a \(metric.unitName)")
        }
        return AlertCondition(metric: metric, comparison: comparison, threshold: threshold)
    }
}

extension AlertMetric {
    /// What a threshold of this metric looks like, for error messages.
    var unitName: String {
        switch unit {
        case .bitsPerSecond: "bit rate such as \"800Mbit/s\", \"1.5Gbps\" or \"100MB/s\""
        case .percent: "percentage such as \"90%\""
        case .seconds: "duration such as \"14d\""
        case .none: "value"
        }
    }
}

/// `[alerts.notify]`: where notifications go and how they are grouped (as Alertmanager's route and receivers).
public struct NotifySettings: Sendable, Hashable {
    /// Labels that make a group: alerts sharing them go in one notification.
    public var groupBy: [String]
    public var groupWait: Int64
    public var groupInterval: Int64
    public var repeatInterval: Int64
    /// A webhook taking Alertmanager's payload (version 4), http or https.
    public var webhook: String?
    public var bearerTokenFile: String?
    /// Sends the bearer token to an `http://` webhook, in clear text (refused unless set; a warning at each start).
    public var allowInsecureCredentials: Bool
    /// CA certificates (PEM) to verify an https webhook with; the system's when not set.
    public var webhookCA: String?
    /// A program and its arguments, run without a shell, the payload on its stdin.
    public var command: [String]
    public var timeout: Int64
    /// After this long (ms) an undelivered notification is dropped, logged and counted.
    public var giveUpAfter: Int64
    /// Sent as `externalURL`; links in notifications start with it.
    public var externalURL: String

    public init() {
        groupBy = ["alertname"]
        groupWait = 30_000
        groupInterval = 300_000
        repeatInterval = 4 * 3_600_000
        webhook = nil
        bearerTokenFile = nil
        allowInsecureCredentials = false
        webhookCA = nil
        command = []
        timeout = 10_000
        giveUpAfter = 86_400_000
        externalURL = ""
    }

    /// What the daemon says at start when the webhook's credentials go in clear text (allowed by
    /// `allow_insecure_credentials`); nil otherwise.
    public var insecureCredentialsWarning: String? {
        guard let webhook, bearerTokenFile != nil else { return nil }
        return InsecureCredentials.warning(webhook, table: "alerts.notify", setting: "bearer_token_file")
    }

    /// The receivers configured, by name (`webhook`, `command`).
    public var receivers: [String] { (webhook == nil ? [] : ["webhook"]) + (command.isEmpty ? [] : ["command"]) }

    static func parse(_ reader: inout ConfigReader) throws(ConfigError) -> NotifySettings {
        let table = "alerts.notify"
        var settings = NotifySettings()
        settings.groupBy = try reader.stringArray(table, "group_by", default: ["alertname"])
        settings.groupWait = try reader.duration(table, "group_wait", default: 30_000, range: 0...3_600_000)
        settings.groupInterval = try reader.duration(
            table, "group_interval", default: 300_000, range: 1_000...86_400_000)
        settings.repeatInterval = try reader.duration(
            table, "repeat_interval", default: 4 * 3_600_000, range: 60_000...30 * 86_400_000)
        let webhook = try HTTPDestinationKeys.read(&reader, table: table, urlKey: "webhook", example: "with a host")
        settings.webhook = webhook.url
        settings.bearerTokenFile = webhook.bearerTokenFile
        settings.allowInsecureCredentials = webhook.allowInsecureCredentials
        settings.webhookCA = webhook.ca
        settings.command = try reader.stringArray(table, "command", default: [])
        if let program = settings.command.first, !program.hasPrefix("/") {
            throw reader.invalid(
                table, "command", "must start with an absolute path (it runs without a shell): \"\(program)\"")
        }
        settings.timeout = try reader.duration(table, "timeout", default: 10_000, range: 100...600_000)
        settings.giveUpAfter = try reader.duration(
            table, "give_up_after", default: 86_400_000, range: 60_000...30 * 86_400_000)
        settings.externalURL = try reader.string(table, "external_url", default: "")
        return settings
    }
}
