/// Typed access to a ``ConfigDocument`` that remembers which keys were read, so that a misspelt or unknown key is
/// an error instead of being silently ignored.
public struct ConfigReader: Sendable {
    public let document: ConfigDocument
    private var known: [String: Set<String>] = [:]

    public init(_ document: ConfigDocument) {
        self.document = document
    }

    private func entry(_ table: String, _ key: String) -> ConfigEntry? { document.tables[table]?[key] }

    private mutating func note(_ table: String, _ key: String) { known[table, default: []].insert(key) }

    /// The settings read so far, by table (`""` for keys outside any table): after a whole parse, every key the
    /// program knows for the tables the document has or implies. The test that holds docs/configuration.md and the
    /// example configs to the parsers compares with it.
    public var settingsRead: [String: Set<String>] { known }

    /// Every setting `parse` reads from `document`, by table, whether or not the document is valid.
    public static func settingsRead<Parsed>(
        _ document: ConfigDocument, by parse: (inout ConfigReader) throws(ConfigError) -> Parsed
    ) -> [String: Set<String>] {
        var reader = ConfigReader(document)
        _ = try? parse(&reader)
        return reader.settingsRead
    }

    private func fail(_ table: String, _ key: String, _ entry: ConfigEntry?, _ message: String) -> ConfigError {
        ConfigError(
            file: document.file, line: entry?.line ?? document.tableLines[table], key: qualified(table, key), message)
    }

    private func qualified(_ table: String, _ key: String) -> String { table.isEmpty ? key : "\(table).\(key)" }

    /// The value of `key` in `table` as `convert` reads it, with its entry; nil when the key is absent. A value
    /// `convert` cannot read (it returns nil) fails with "must be `expected`, not" its kind. Every scalar is read
    /// here, so each notes its key and words a wrong kind alike.
    private mutating func typed<Value>(
        _ table: String, _ key: String, expected: String, _ convert: (ConfigValue) -> Value?
    ) throws(ConfigError) -> (value: Value, entry: ConfigEntry)? {
        note(table, key)
        guard let entry = entry(table, key) else { return nil }
        guard let value = convert(entry.value) else {
            throw fail(table, key, entry, "must be \(expected), not \(entry.value.typeName)")
        }
        return (value, entry)
    }

    /// `found`'s value when it lies in `range`; otherwise fails with the value as `shown` (by default as `bound`
    /// writes it) and the range's ends as `bound` writes them.
    private func within<Value: Comparable>(
        _ range: ClosedRange<Value>, _ found: (value: Value, entry: ConfigEntry), _ table: String, _ key: String,
        shown: String? = nil, bound: (Value) -> String
    ) throws(ConfigError) -> Value {
        let (value, entry) = found
        guard range.contains(value) else {
            throw fail(
                table, key, entry,
                "is \(shown ?? bound(value)); it must be between \(bound(range.lowerBound)) and \(bound(range.upperBound))"
            )
        }
        return value
    }

    // MARK: Scalars

    public mutating func string(_ table: String, _ key: String, default fallback: String) throws(ConfigError) -> String
    {
        try optionalString(table, key) ?? fallback
    }

    public mutating func optionalString(_ table: String, _ key: String) throws(ConfigError) -> String? {
        try typed(table, key, expected: "a string in quotes") {
            if case .string(let value) = $0 { value } else { nil }
        }?.value
    }

    public mutating func integer(
        _ table: String, _ key: String, default fallback: Int64, range: ClosedRange<Int64>
    ) throws(ConfigError) -> Int64 {
        let found = try typed(table, key, expected: "a whole number") {
            if case .integer(let value) = $0 { value } else { nil }
        }
        guard let found else { return fallback }
        return try within(range, found, table, key) { "\($0)" }
    }

    /// A whole number within `range`, or nil when the key is absent.
    public mutating func optionalInteger(
        _ table: String, _ key: String, range: ClosedRange<Int64>
    ) throws(ConfigError) -> Int64? {
        note(table, key)
        guard entry(table, key) != nil else { return nil }
        return try integer(table, key, default: range.lowerBound, range: range)
    }

    public mutating func number(
        _ table: String, _ key: String, default fallback: Double, range: ClosedRange<Double>
    ) throws(ConfigError) -> Double {
        let found = try typed(table, key, expected: "a number") { value -> Double? in
            switch value {
            case .integer(let integer): Double(integer)
            case .float(let float): float
            default: nil
            }
        }
        guard let found else { return fallback }
        return try within(range, found, table, key) { "\($0)" }
    }

    public mutating func boolean(_ table: String, _ key: String, default fallback: Bool) throws(ConfigError) -> Bool {
        try typed(table, key, expected: "true or false") { if case .boolean(let value) = $0 { value } else { nil } }?
            .value ?? fallback
    }

    /// A duration written as a string with a unit: `"250ms"`, `"1s"`, `"5m"`, `"2h"`, `"7d"`; returns milliseconds.
    public mutating func duration(
        _ table: String, _ key: String, default fallback: Int64, range: ClosedRange<Int64>
    ) throws(ConfigError) -> Int64 {
        note(table, key)
        guard let entry = entry(table, key) else { return fallback }
        guard case .string(let text) = entry.value, let value = Units.parseDuration(text) else {
            throw fail(
                table, key, entry, "must be a duration in quotes such as \"500ms\", \"10s\", \"5m\", \"48h\" or \"30d\""
            )
        }
        return try within(range, (value, entry), table, key, shown: text, bound: Units.formatDuration)
    }

    /// A size in bytes written as a number or as a string with a unit: `"256KiB"`, `"64MiB"`, `"1GB"`.
    public mutating func byteSize(
        _ table: String, _ key: String, default fallback: Int64, range: ClosedRange<Int64>
    ) throws(ConfigError) -> Int64 {
        note(table, key)
        guard let entry = entry(table, key) else { return fallback }
        let value: Int64
        switch entry.value {
        case .integer(let integer): value = integer
        case .string(let text):
            guard let parsed = Units.parseByteSize(text) else {
                throw fail(table, key, entry, "must be a size such as 65536, \"256KiB\", \"64MiB\" or \"1GB\"")
            }
            value = parsed
        default: throw fail(table, key, entry, "must be a size such as 65536 or \"64MiB\", not \(entry.value.typeName)")
        }
        return try within(range, (value, entry), table, key, shown: "\(value) bytes") { "\($0)" }
    }

    public mutating func stringArray(
        _ table: String, _ key: String, default fallback: [String], allowEmpty: Bool = true
    ) throws(ConfigError) -> [String] {
        note(table, key)
        guard let entry = entry(table, key) else { return fallback }
        guard case .array(let items) = entry.value else {
            throw fail(table, key, entry, "must be an array of strings such as [\"a\", \"b\"]")
        }
        var strings = [String]()
        for item in items {
            guard case .string(let string) = item else {
                throw fail(table, key, entry, "must hold only strings in quotes, found \(item.typeName)")
            }
            strings.append(string)
        }
        guard allowEmpty || !strings.isEmpty else { throw fail(table, key, entry, "must not be empty") }
        return strings
    }

    /// A list of `host:port` endpoints (`[::1]:7420` for IPv6).
    public mutating func endpoints(
        _ table: String, _ key: String, default fallback: [Endpoint]
    ) throws(ConfigError) -> [Endpoint] {
        guard entry(table, key) != nil else {
            note(table, key)
            return fallback
        }
        let texts = try stringArray(table, key, default: [], allowEmpty: false)
        var endpoints = [Endpoint]()
        for text in texts {
            guard let endpoint = Endpoint(parsing: text) else {
                throw fail(
                    table, key, entry(table, key), "has \"\(text)\", which is not host:port (for IPv6: [::1]:7420)")
            }
            endpoints.append(endpoint)
        }
        return endpoints
    }

    /// Every key of a free-form table as a label (`site = "fra1"`), in file order.
    ///
    /// - Parameter anyText: values may hold control characters (an alert rule's labels, which travel only as JSON);
    ///   an agent's labels may not (`Labels/isValidValue(_:)`).
    public mutating func labels(_ table: String, anyText: Bool = false) throws(ConfigError) -> Labels {
        known[table, default: []].formUnion(document.tables[table]?.keys.map { $0 } ?? [])
        var pairs = [(key: String, value: String)]()
        for (key, entry) in (document.tables[table] ?? [:]).sorted(by: { $0.value.line < $1.value.line }) {
            guard Labels.isValidKey(key) else {
                throw fail(table, key, entry, "is not a label name: use \(Labels.keyRule)")
            }
            guard case .string(let value) = entry.value, anyText ? !value.isEmpty : Labels.isValidValue(value) else {
                throw fail(
                    table, key, entry,
                    "must be a non-empty string in quotes (at most 255 bytes, no control characters)")
            }
            pairs.append((key, value))
        }
        guard pairs.count <= Labels.maximumCount else {
            throw ConfigError(
                file: document.file, line: document.tableLines[table], key: nil,
                "[\(table)] has \(pairs.count) labels; at most \(Labels.maximumCount) are allowed")
        }
        return Labels(pairs)
    }

    /// Every key of a free-form table of strings (annotations), in file order; values of any length.
    public mutating func stringTable(_ table: String) throws(ConfigError) -> [(key: String, value: String)] {
        known[table, default: []].formUnion(document.tables[table]?.keys.map { $0 } ?? [])
        var pairs = [(key: String, value: String)]()
        for (key, entry) in (document.tables[table] ?? [:]).sorted(by: { $0.value.line < $1.value.line }) {
            guard case .string(let value) = entry.value else {
                throw fail(table, key, entry, "must be a string in quotes, not \(entry.value.typeName)")
            }
            pairs.append((key, value))
        }
        return pairs
    }

    /// The names of tables `prefix.NAME` (for example `labels.web-01`), with their lines, in file order.
    public func subtables(of prefix: String) -> [(name: String, line: Int)] {
        document.tableLines.filter { $0.key.hasPrefix(prefix + ".") }.sorted { $0.value < $1.value }
            .map { (String($0.key.dropFirst(prefix.count + 1)), $0.value) }
    }

    /// Throws for a value the program then finds invalid, with the value's line.
    public func invalid(_ table: String, _ key: String, _ message: String) -> ConfigError {
        fail(table, key, entry(table, key), message)
    }

    /// Rejects tables and keys that nothing read: they are typos or options of another program.
    public func rejectUnknown() throws(ConfigError) {
        for (table, line) in document.tableLines.sorted(by: { $0.value < $1.value }) where known[table] == nil {
            let tables = known.keys.filter { !$0.isEmpty }.sorted().map { "[\($0)]" }.joined(separator: ", ")
            throw ConfigError(
                file: document.file, line: line, key: nil, "unknown table [\(table)]; known tables: \(tables)")
        }
        let unknown = document.tables.flatMap { table, entries in
            entries.filter { known[table]?.contains($0.key) != true }.map { (table, $0.key, $0.value.line) }
        }.sorted { $0.2 < $1.2 }
        if let (table, key, line) = unknown.first {
            let keys = (known[table] ?? []).sorted().joined(separator: ", ")
            throw ConfigError(
                file: document.file, line: line, key: qualified(table, key),
                "is not a known setting\(table.isEmpty ? "" : " of [\(table)]"); known: \(keys)")
        }
    }
}

/// A `host:port` to connect to or listen on.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether the host is a loopback address (127.0.0.0/8, ::1) or `localhost`: reachable from this machine only.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1"
            || host.split(separator: ".").first == "127"
                && host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }
}
