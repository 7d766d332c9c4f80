import PulseAnalytics
import PulseCore
import PulseQuery
import Testing

@testable import PulseDaemon
@testable import PulseSettings

@Suite struct AlertConfigTests {
    @Test func rulesAreReadWithTheirThresholdsAndTemplates() throws {
        let text = """
            [alerts]
            evaluation_interval = "10s"
            [alerts.notify]
            webhook = "https://hooks.example:8443/netpulse"
            group_by = ["alertname", "site"]
            [alert.UplinkBusy]
            expr = "rate_in > 800Mbit/s"
            clear = "600Mbit/s"
            for = "2m"
            hosts = ["edge-*"]
            severity = "critical"
            [alert.UplinkBusy.labels]
            team = "net"
            [alert.UplinkBusy.annotations]
            summary = "{{ $labels.host }} at {{ $value }} over {{ $threshold }}"
            [alert.HostDown]
            expr = "absent"
            for = "5m"
            """
        let config = try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml"))
        #expect(config.alerts.evaluationInterval == 10_000)
        #expect(config.alerts.notify.groupBy == ["alertname", "site"])
        #expect(config.alerts.notify.receivers == ["webhook"])
        let busy = try #require(config.alerts.rules.first)
        #expect(busy.name == "UplinkBusy")
        #expect(busy.condition == AlertCondition(metric: .rateIn, comparison: .above, threshold: 8e8, clear: 6e8))
        #expect(busy.timing.pendingFor == 120_000)
        #expect(busy.labels == ["team": "net"])
        #expect(
            busy.render(busy.annotations["summary"]!, value: 9e8, labels: ["host": "edge-1"])
                == "edge-1 at 900 Mbit/s over 800 Mbit/s")
        #expect(config.alerts.rules[1].condition == .absent)
        #expect(config.alerts.rules[1].scope == .host)
    }

    /// `certificate_expiry` takes a duration, watches hosts by default, and says its figure as a time left.
    @Test func certificateRulesTakeADuration() throws {
        let text = """
            [alert.CertificateExpiring]
            expr = "certificate_expiry < 14d"
            clear = "21d"
            """
        let rule = try #require(try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml")).alerts.rules.first)
        #expect(
            rule.condition
                == AlertCondition(
                    metric: .certificateExpiry, comparison: .below, threshold: 14 * 86_400, clear: 21 * 86_400))
        #expect(rule.scope == .host)
        #expect(rule.condition.description == "certificate_expiry < 14d")
        #expect(AlertMetric.certificateExpiry.format(9 * 86_400 + 5 * 3_600 + 17) == "9d 5h")
        #expect(AlertMetric.certificateExpiry.format(-3_700) == "expired 1h 1m ago")
        #expect(
            rule.render(rule.annotations["summary"]!, value: 9 * 86_400 + 5 * 3_600, labels: ["host": "web-01"])
                == "the certificate of agent web-01 expires in 9d 5h (warned under 14d)")
    }

    @Test func badRulesNameTheLineAndKey() {
        let bad: [(String, ConfigError)] = [
            (
                "[alert.A]\nexpr = \"rate_in >> 5\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "alert.A.expr",
                    "is \"rate_in >> 5\"; write METRIC > THRESHOLD or METRIC < THRESHOLD (metrics: rate_in, rate_out, rate, utilisation, error_ratio, drop_ratio, billing_p95, absent, certificate_expiry), or \"absent\""
                )
            ),
            (
                "[alert.A]\nexpr = \"utilisation > 90\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "alert.A.expr",
                    "has threshold \"90\", not a percentage such as \"90%\"")
            ),
            (
                "[alert.A]\nexpr = \"rate > 1Gbit/s\"\nclear = \"2Gbit/s\"\n",
                ConfigError(
                    file: "d.toml", line: 3, key: "alert.A.clear",
                    "is 2.00 Gbit/s, on the firing side of the threshold 1.00 Gbit/s; a clear threshold must be below it"
                )
            ),
            (
                "[alert.A]\nfor = \"1m\"\n",
                ConfigError(
                    file: "d.toml", line: 1, key: "alert.A.expr",
                    "is missing: say what fires, such as expr = \"rate_in > 800Mbit/s\" or expr = \"absent\"")
            ),
            (
                "[alert.A]\nexpr = \"absent\"\n[alert.A.annotations]\nsummary = \"{{ $valu }}\"\n",
                ConfigError(
                    file: "d.toml", line: 4, key: "alert.A.annotations.summary",
                    "uses {{ $valu }}; known: {{ $value }}, {{ $threshold }}, {{ $clear }}, {{ $window }}, {{ $for }}, {{ $labels.NAME }}"
                )
            ),
            (
                "[alert.A]\nexpr = \"certificate_expiry < 14\"\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "alert.A.expr", "has threshold \"14\", not a duration such as \"14d\""
                )
            ),
            (
                "[alert.A]\nexpr = \"certificate_expiry < 14d\"\nscope = \"interface\"\n",
                ConfigError(
                    file: "d.toml", line: 3, key: "alert.A.scope",
                    "is \"interface\"; certificate_expiry rules watch hosts (scope = \"host\")")
            ),
            (
                "[alerts.notify]\ncommand = [\"page-oncall\"]\n",
                ConfigError(
                    file: "d.toml", line: 2, key: "alerts.notify.command",
                    "must start with an absolute path (it runs without a shell): \"page-oncall\"")
            ),
        ]
        for (text, error) in bad {
            #expect(throws: error) { try DaemonConfig.parse(ConfigDocument(text: text, file: "d.toml")) }
        }
    }
}
