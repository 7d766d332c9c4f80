import PulseCore
import TestSupport
import Testing

@testable import PulseAgent

/// Every key the agent's parser reads is in docs/configuration.md and in config/agent.toml (set or commented), and
/// neither names one it does not read.
@Suite struct AgentSettingsReferenceTests {
    /// What the parser reads: from the example config and from an empty one.
    static func parsed() throws -> [String: Set<String>] {
        try SettingsReference.read(
            [try String(contentsOfFile: SettingsReference.root + "/config/agent.toml", encoding: .utf8), ""],
            file: "agent.toml", by: AgentConfig.settingsRead)
    }

    @Test func theReferenceNamesEverySettingTheParserReads() throws {
        let differences = try SettingsReference.differencesFromReference(try Self.parsed(), section: "Agent")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }

    @Test func theExampleConfigNamesEverySettingTheParserReads() throws {
        let differences = try SettingsReference.differencesFromExample(try Self.parsed(), file: "config/agent.toml")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }
}
