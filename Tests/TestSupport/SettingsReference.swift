import Foundation
import PulseCore

/// The settings docs/configuration.md and the example configs under config/ name, read as text, for the tests that
/// hold them to what the parsers read (`ConfigReader.settingsRead`): every key a parser knows is documented and in
/// its example config (set or commented), and neither names a key the parser does not know.
///
/// Settings are sets of keys by table. Tables of one kind with a name of the operator's (`[alert.UplinkBusy]`,
/// `[labels.web-01]`) are folded into one (`alert.NAME`, `labels.AGENT`), as the reference writes them.
public enum SettingsReference {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The tables whose keys are the operator's own (labels and annotations): only the table itself is compared.
    public static let freeForm: Set<String> = ["labels", "labels.AGENT", "alert.NAME.labels", "alert.NAME.annotations"]

    /// `alert.UplinkBusy` → `alert.NAME`, `labels.web-01` → `labels.AGENT`, and so on; other tables as they are.
    public static func fold(_ table: String) -> String {
        let parts = table.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2 else { return table }
        let placeholder: [String: String] = [
            "alert": "NAME", "labels": "AGENT", "billing": "NAME", "aggregation": "NAME", "dashboard": "NAME",
        ]
        guard let name = placeholder[parts[0]] else { return table }
        // `alerts.notify` is a table of its own, not an alert named "notify".
        if parts[0] == "alert" || parts.count == 2 {
            return ([parts[0], name] + parts.dropFirst(2)).joined(separator: ".")
        }
        return table
    }

    /// What a parser reads from each of `texts` (its `settingsRead`), together, folded as the text's are.
    public static func read(
        _ texts: [String], file: String, by settingsRead: (ConfigDocument) -> [String: Set<String>]
    ) throws -> [String: Set<String>] {
        var read = [String: Set<String>]()
        for text in texts {
            for (table, keys) in settingsRead(try ConfigDocument(text: text, file: file)) {
                read[table, default: []].formUnion(keys)
            }
        }
        return normalised(read)
    }

    /// What `parsed` and the section `## heading…` of docs/configuration.md name that the other does not.
    public static func differencesFromReference(_ parsed: [String: Set<String>], section heading: String) throws
        -> [String]
    {
        differences(parsed, "the parser", try documented(section: heading), "docs/configuration.md")
    }

    /// What `parsed` and the example config `file` name that the other does not.
    public static func differencesFromExample(_ parsed: [String: Set<String>], file: String) throws -> [String] {
        differences(parsed, "the parser", try exampled(file), file)
    }

    /// Folds settings' tables (idempotent), keeping only the tables' names for free-form ones.
    public static func normalised(_ settings: [String: Set<String>]) -> [String: Set<String>] {
        var folded = [String: Set<String>]()
        for (table, keys) in settings {
            let name = fold(table)
            folded[name, default: []].formUnion(freeForm.contains(name) ? [] : keys)
        }
        return folded
    }

    /// The settings of the section `## heading…` of docs/configuration.md: the first cell of each table row names
    /// `[table] key` (or a free-form `[table]`), and further keys of the same table as `key`.
    public static func documented(section heading: String) throws -> [String: Set<String>] {
        let text = try String(contentsOfFile: root + "/docs/configuration.md", encoding: .utf8)
        var settings = [String: Set<String>]()
        var inSection = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inSection = line.hasPrefix("## " + heading) }
            guard inSection, line.hasPrefix("| `[") else { continue }
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            var table: String?
            for item in cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where item.offset % 2 == 1 {
                let words = item.element.split(separator: " ").map(String.init)
                if let first = words.first, first.hasPrefix("["), first.hasSuffix("]") {
                    table = fold(String(first.dropFirst().dropLast()))
                    settings[table!, default: []].formUnion(words.dropFirst())
                } else if let table {
                    settings[table, default: []].formUnion(words)
                }
            }
        }
        return normalised(settings)
    }

    /// The settings of an example config (`config/agent.toml`), set or commented out: `[table]` or `# [table]`
    /// headers, then `key = …` or `# key = …` lines.
    public static func exampled(_ file: String) throws -> [String: Set<String>] {
        let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
        var settings = [String: Set<String>]()
        var table = ""
        for raw in text.split(separator: "\n") {
            var line = Substring(raw)
            if line.hasPrefix("#") { line = line.dropFirst().drop { $0 == " " } }
            if line.hasPrefix("["), let end = line.firstIndex(of: "]"),
                line[line.index(after: line.startIndex)..<end].allSatisfy({
                    $0.isLetter || $0.isNumber || "._-".contains($0)
                })
            {
                table = fold(String(line[line.index(after: line.startIndex)..<end]))
                settings[table, default: []].formUnion([])
                continue
            }
            let key = line.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !key.isEmpty, line.dropFirst(key.count).hasPrefix(" = ") {
                settings[table, default: []].insert(String(key))
            }
        }
        return normalised(settings)
    }

    /// What one side names that the other does not, one line per table: empty when they agree.
    public static func differences(
        _ left: [String: Set<String>], _ leftName: String, _ right: [String: Set<String>], _ rightName: String
    ) -> [String] {
        var lines = [String]()
        for table in Set(left.keys).union(right.keys).sorted() {
            let title = table.isEmpty ? "(no table)" : "[\(table)]"
            guard let leftKeys = left[table] else {
                lines.append("\(title): in \(rightName), not in \(leftName)")
                continue
            }
            guard let rightKeys = right[table] else {
                lines.append("\(title): in \(leftName), not in \(rightName)")
                continue
            }
            let onlyLeft = leftKeys.subtracting(rightKeys).sorted()
            let onlyRight = rightKeys.subtracting(leftKeys).sorted()
            if !onlyLeft.isEmpty { lines.append("\(title) \(onlyLeft.joined(separator: ", ")): in \(leftName) only") }
            if !onlyRight.isEmpty {
                lines.append("\(title) \(onlyRight.joined(separator: ", ")): in \(rightName) only")
            }
        }
        return lines
    }
}
