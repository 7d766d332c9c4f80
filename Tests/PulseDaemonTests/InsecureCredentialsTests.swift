import PulseCore
import Testing

@testable import PulseDaemon
@testable import PulseSettings

/// A bearer token toward a plain `http://` webhook or remote-write receiver is a config error naming the line and
/// the setting that allows it; with that setting the config loads and says what it gives away.
@Suite struct InsecureCredentialsTests {
    func parse(_ text: String) throws(ConfigError) -> DaemonConfig {
        try DaemonConfig.parse(ConfigDocument(text: text, file: "/etc/netpulse/netpulsed.toml"))
    }

    @Test func aTokenOverPlainHTTPIsRefusedAtItsLine() {
        let cases: [(String, ConfigError)] = [
            (
                "[alerts.notify]\nwebhook = \"http://hooks.example/netpulse\"\nbearer_token_file = \"/etc/netpulse/hook.token\"\n",
                ConfigError(
                    file: "/etc/netpulse/netpulsed.toml", line: 3, key: "alerts.notify.bearer_token_file",
                    "would be sent in clear text to http://hooks.example/netpulse (plain http://, readable by anyone on the path); use an https:// URL, or set allow_insecure_credentials = true in [alerts.notify] to send it anyway"
                )
            ),
            (
                "[remote_write]\nbearer_token_file = \"/etc/netpulse/rw.token\"\nurl = \"http://mimir.example:9009/api/v1/push\"\n",
                ConfigError(
                    file: "/etc/netpulse/netpulsed.toml", line: 2, key: "remote_write.bearer_token_file",
                    "would be sent in clear text to http://mimir.example:9009/api/v1/push (plain http://, readable by anyone on the path); use an https:// URL, or set allow_insecure_credentials = true in [remote_write] to send it anyway"
                )
            ),
        ]
        for (text, expected) in cases {
            #expect(throws: expected) { try parse(text) }
        }
        // The message as netpulsed and check-config print it: file, line, key, what to do.
        #expect(
            cases[0].1.description.hasPrefix(
                "/etc/netpulse/netpulsed.toml:3: 'alerts.notify.bearer_token_file' would be sent in clear text"))
    }

    @Test func httpsAndTokenlessReceiversNeedNoSetting() throws {
        let config = try parse(
            """
            [alerts.notify]
            webhook = "https://hooks.example/netpulse"
            bearer_token_file = "/etc/netpulse/hook.token"
            [remote_write]
            url = "http://127.0.0.1:9090/api/v1/write"
            """)
        #expect(config.warnings.isEmpty)
        #expect(config.alerts.notify.bearerTokenFile == "/etc/netpulse/hook.token")
    }

    @Test func allowingItPerReceiverLoadsAndWarns() throws {
        let config = try parse(
            """
            [alerts.notify]
            webhook = "http://hooks.example/netpulse"
            bearer_token_file = "/etc/netpulse/hook.token"
            allow_insecure_credentials = true
            [remote_write]
            url = "https://mimir.example/api/v1/push"
            bearer_token_file = "/etc/netpulse/rw.token"
            """)
        #expect(
            config.warnings == [
                "[alerts.notify] sends the token of bearer_token_file in clear text to http://hooks.example/netpulse (allow_insecure_credentials = true): anyone on the path can read it; use https://"
            ])
        // The setting is per receiver: allowing it for the webhook does not allow it for remote write.
        #expect(throws: ConfigError.self) {
            try parse(
                """
                [alerts.notify]
                webhook = "http://hooks.example/netpulse"
                bearer_token_file = "/etc/netpulse/hook.token"
                allow_insecure_credentials = true
                [remote_write]
                url = "http://mimir.example/api/v1/push"
                bearer_token_file = "/etc/netpulse/rw.token"
                """)
        }
    }
}
