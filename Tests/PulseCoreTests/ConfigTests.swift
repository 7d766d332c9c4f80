import Testing

@testable import PulseCore

@Suite struct ConfigTests {
    @Test func parsesTheSupportedSubset() throws {
        let text = """
            # comment
            top = 1
            [agent]
            id = "a<b&c"   # trailing comment
            path = 'C:\\literal'
            escaped = "tab\\there \\u00e9"
            [sampling]
            include = [
              "eth*",  # first
              'wl?',
            ]
            ratio = 0.25
            big = 1_000_000
            flag = true
            """
        let document = try ConfigDocument(text: text, file: "agent.toml")
        #expect(document.tables[""]?["top"]?.value == .integer(1))
        #expect(document.tables["agent"]?["id"]?.value == .string("a<b&c"))
        #expect(document.tables["agent"]?["id"]?.line == 4)
        #expect(document.tables["agent"]?["path"]?.value == .string("C:\\literal"))
        #expect(document.tables["agent"]?["escaped"]?.value == .string("tab\there é"))
        #expect(document.tables["sampling"]?["include"]?.value == .array([.string("eth*"), .string("wl?")]))
        #expect(document.tables["sampling"]?["ratio"]?.value == .float(0.25))
        #expect(document.tables["sampling"]?["big"]?.value == .integer(1_000_000))
        #expect(document.tables["sampling"]?["flag"]?.value == .boolean(true))
    }

    @Test(arguments: [
        (
            "[agent]\nid = web\n",
            "agent.toml:2: expected a value: a \"string\", a number, true/false or [an, array] (strings need quotes)"
        ),
        ("[agent]\nid = \"open\n", "agent.toml:2: string is not closed on its line"),
        ("[agent]\nid = \"a\"\nid = \"b\"\n", "agent.toml:3: 'id' is set twice in [agent]"),
        ("[agent]\n[agent]\n", "agent.toml:2: table [agent] appears twice"),
        ("[agent\n", "agent.toml:1: expected ']' to close the table header"),
        ("a = 1 2\n", "agent.toml:1: unexpected '2' after the value; one setting per line"),
        ("a = [1, 2\n", "agent.toml:2: expected ',' or ']' in array"),
    ])
    func syntaxErrorsNameTheLine(_ text: String, _ message: String) {
        #expect(throws: ConfigError.self) { try ConfigDocument(text: text, file: "agent.toml") }
        do {
            _ = try ConfigDocument(text: text, file: "agent.toml")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func typedReadsReportKeyAndLine() throws {
        let document = try ConfigDocument(
            text: "[sampling]\ninterval = 5\nlimit = 99999\n[mystery]\nx = 1\n", file: "a.toml")
        var reader = ConfigReader(document)
        #expect(
            throws: ConfigError(
                file: "a.toml", line: 2, key: "sampling.interval",
                "must be a duration in quotes such as \"500ms\", \"10s\", \"5m\", \"48h\" or \"30d\"")
        ) {
            try reader.duration("sampling", "interval", default: 1_000, range: 100...10_000)
        }
        #expect(
            throws: ConfigError(
                file: "a.toml", line: 3, key: "sampling.limit", "is 99999; it must be between 1 and 100")
        ) {
            try reader.integer("sampling", "limit", default: 1, range: 1...100)
        }
        #expect(
            throws: ConfigError(file: "a.toml", line: 4, key: nil, "unknown table [mystery]; known tables: [sampling]")
        ) {
            try reader.rejectUnknown()
        }
    }

    @Test func unknownKeysAreErrors() throws {
        let document = try ConfigDocument(text: "[sampling]\nintervall = \"1s\"\n", file: "a.toml")
        var reader = ConfigReader(document)
        _ = try reader.duration("sampling", "interval", default: 1_000, range: 100...10_000)
        #expect(
            throws: ConfigError(
                file: "a.toml", line: 2, key: "sampling.intervall",
                "is not a known setting of [sampling]; known: interval")
        ) {
            try reader.rejectUnknown()
        }
    }
}
