import PulseCore
import TestSupport
import Testing

@testable import PulseSettings

/// Every key netpulsed's parser reads is in docs/configuration.md and in config/netpulsed.toml (set or commented),
/// and neither names one it does not read.
@Suite struct DaemonSettingsReferenceTests {
    /// What the parser reads: from the example config, from an empty one, and from one table of each named kind.
    static func parsed() throws -> [String: Set<String>] {
        let documents = [
            try String(contentsOfFile: SettingsReference.root + "/config/netpulsed.toml", encoding: .utf8),
            "",
            "[labels.web-01]\nsite = \"fra1\"\n",
            "[billing.lab]\nmatch = \"site=lab\"\n",
            "[aggregation.lab]\nmatch = \"site=lab\"\n",
            "[dashboard.edge]\npanels = [\"throughput\"]\n",
            "[alert.A]\nexpr = \"absent\"\n[alert.A.labels]\nteam = \"net\"\n[alert.A.annotations]\nsummary = \"s\"\n",
        ]
        var read = [String: Set<String>]()
        for text in documents {
            for (table, keys) in DaemonConfig.settingsRead(try ConfigDocument(text: text, file: "netpulsed.toml")) {
                read[table, default: []].formUnion(keys)
            }
        }
        return SettingsReference.normalised(read)
    }

    @Test func theReferenceNamesEverySettingTheParserReads() throws {
        let differences = SettingsReference.differences(
            try Self.parsed(), "the parser", try SettingsReference.documented(section: "Daemon"),
            "docs/configuration.md")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }

    @Test func theExampleConfigNamesEverySettingTheParserReads() throws {
        let differences = SettingsReference.differences(
            try Self.parsed(), "the parser", try SettingsReference.exampled("config/netpulsed.toml"),
            "config/netpulsed.toml")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }
}
