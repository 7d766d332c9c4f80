import PulseCore
import TestSupport
import Testing

@testable import PulseSettings

/// Every key netpulsed's parser reads is in docs/configuration.md and in config/netpulsed.toml (set or commented),
/// and neither names one it does not read.
@Suite struct DaemonSettingsReferenceTests {
    /// What the parser reads: from the example config, from an empty one, and from one table of each named kind.
    static func parsed() throws -> [String: Set<String>] {
        try SettingsReference.read(
            [
                try String(contentsOfFile: SettingsReference.root + "/config/netpulsed.toml", encoding: .utf8),
                "",
                "[labels.web-01]\nsite = \"fra1\"\n",
                "[billing.lab]\nmatch = \"site=lab\"\n",
                "[aggregation.lab]\nmatch = \"site=lab\"\n",
                "[dashboard.edge]\npanels = [\"throughput\"]\n",
                "[alert.A]\nexpr = \"absent\"\n[alert.A.labels]\nteam = \"net\"\n[alert.A.annotations]\nsummary = \"s\"\n",
            ], file: "netpulsed.toml", by: DaemonConfig.settingsRead)
    }

    @Test func theReferenceNamesEverySettingTheParserReads() throws {
        let differences = try SettingsReference.differencesFromReference(try Self.parsed(), section: "Daemon")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }

    @Test func theExampleConfigNamesEverySettingTheParserReads() throws {
        let differences = try SettingsReference.differencesFromExample(try Self.parsed(), file: "config/netpulsed.toml")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }
}
