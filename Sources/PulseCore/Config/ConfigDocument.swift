/// A parsed configuration file: a small, strict subset of TOML that keeps the line of every value, so errors can
/// say `file:line`.
///
/// Supported: `# comments`, `[table]` headers, `key = value` with basic (`"…"`, escapes `\" \\ \n \t \r \uXXXX`)
/// and literal (`'…'`) strings, integers (with `_` separators), floats, booleans, and arrays of those (which may
/// span lines). Anything else is an error naming the line. Netpulse parses its own configs (rather than using a
/// TOML package) so the agent stays free of Foundation and every error points at a line.
public struct ConfigDocument: Sendable {
    /// The file name used in error messages.
    public let file: String
    /// Values by table (`""` for keys before any header) and key, with their lines.
    public private(set) var tables: [String: [String: ConfigEntry]] = [:]
    /// Table headers with their lines, in file order.
    public private(set) var tableLines: [String: Int] = [:]

    /// Parses `text`; `file` names the file in errors.
    ///
    /// - Throws: ``ConfigError`` with the line of the first syntax error.
    public init(text: String, file: String) throws(ConfigError) {
        self.file = file
        var parser = ConfigParser(text: text, file: file)
        try parser.parse { table, key, entry throws(ConfigError) in
            if self.tables[table]?[key] != nil {
                throw ConfigError(file: file, line: entry.line, key: key, "is set twice in [\(table)]")
            }
            self.tables[table, default: [:]][key] = entry
        } onTable: { table, line throws(ConfigError) in
            if self.tableLines[table] != nil {
                throw ConfigError(file: file, line: line, key: nil, "table [\(table)] appears twice")
            }
            self.tableLines[table] = line
            self.tables[table, default: [:]] = self.tables[table] ?? [:]
        }
    }

    /// Reads and parses a file.
    public init(contentsOf path: String) throws(ConfigError) {
        let text: String
        do {
            text = try FileIO.readString(path)
        } catch {
            throw ConfigError(file: path, line: nil, key: nil, "cannot be read: \(error)")
        }
        try self.init(text: text, file: path)
    }
}

/// One value with the line it was written on.
public struct ConfigEntry: Sendable {
    public var value: ConfigValue
    public var line: Int
}

/// A TOML value of the supported subset.
public enum ConfigValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    case array([ConfigValue])

    var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a number"
        case .boolean: "a boolean"
        case .array: "an array"
        }
    }
}

/// A configuration problem: what, where (file, line, key) and, in the message, what to do.
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int?
    public var key: String?
    public var message: String

    public init(file: String, line: Int?, key: String?, _ message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "'\(key)' " }
        return text + message
    }
}
