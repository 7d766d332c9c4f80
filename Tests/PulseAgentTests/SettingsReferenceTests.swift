import PulseCore
import TestSupport
import Testing

@testable import PulseAgent

/// Every key the agent's parser reads is in docs/configuration.md and in config/agent.toml (set or commented), and
/// neither names one it does not read.
@Suite struct AgentSettingsReferenceTests {
    static func parsed() throws -> [String: Set<String>] {
        var read = [String: Set<String>]()
        for text in [try String(contentsOfFile: SettingsReference.root + "/config/agent.toml", encoding: .utf8), ""] {
            for (table, keys) in AgentConfig.settingsRead(try ConfigDocument(text: text, file: "agent.toml")) {
                read[table, default: []].formUnion(keys)
            }
        }
        return SettingsReference.normalised(read)
    }

    @Test func theReferenceNamesEverySettingTheParserReads() throws {
        let differences = SettingsReference.differences(
            try Self.parsed(), "the parser", try SettingsReference.documented(section: "Agent"),
            "docs/configuration.md")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }

    @Test func theExampleConfigNamesEverySettingTheParserReads() throws {
        let differences = SettingsReference.differences(
            try Self.parsed(), "the parser", try SettingsReference.exampled("config/agent.toml"),
            "config/agent.toml")
        #expect(differences.isEmpty, "\n\(differences.joined(separator: "\n"))")
    }
}
