/// The line-oriented parser behind ``ConfigDocument``.
struct ConfigParser {
    private let bytes: [UInt8]
    private let file: String
    private var index = 0
    private var line = 1

    init(text: String, file: String) {
        bytes = Array(text.utf8)
        self.file = file
    }

    mutating func parse(
        onValue: (String, String, ConfigEntry) throws(ConfigError) -> Void,
        onTable: (String, Int) throws(ConfigError) -> Void
    ) throws(ConfigError) {
        var table = ""
        while true {
            skipBlankAndComments()
            guard let byte = peek() else { return }
            if byte == UInt8(ascii: "[") {
                index += 1
                skipSpaces()
                let name = try readKey(what: "table name")
                skipSpaces()
                guard peek() == UInt8(ascii: "]") else { throw error("expected ']' to close the table header") }
                index += 1
                try expectEndOfLine()
                table = name
                try onTable(name, line)
                continue
            }
            let keyLine = line
            let key = try readKey(what: "key")
            skipSpaces()
            guard peek() == UInt8(ascii: "=") else { throw error("expected '=' after key '\(key)'") }
            index += 1
            skipSpaces()
            let value = try readValue()
            try expectEndOfLine()
            try onValue(table, key, ConfigEntry(value: value, line: keyLine))
        }
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func error(_ message: String) -> ConfigError {
        ConfigError(file: file, line: line, key: nil, message)
    }

    private mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
    }

    private mutating func skipComment() {
        if peek() == UInt8(ascii: "#") {
            while let byte = peek(), byte != UInt8(ascii: "\n") { index += 1 }
        }
    }

    /// Skips whitespace, newlines and comments (used between statements and inside arrays).
    private mutating func skipBlankAndComments() {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
            case UInt8(ascii: "#"): skipComment()
            default: return
            }
        }
    }

    private mutating func expectEndOfLine() throws(ConfigError) {
        skipSpaces()
        skipComment()
        if peek() == UInt8(ascii: "\r") { index += 1 }
        guard let byte = peek() else { return }
        guard byte == UInt8(ascii: "\n") else {
            throw error("unexpected '\(String(decoding: [byte], as: UTF8.self))' after the value; one setting per line")
        }
    }

    private mutating func readKey(what: String) throws(ConfigError) -> String {
        var parts = [String]()
        repeat {
            if !parts.isEmpty { index += 1 }
            let start = index
            while let byte = peek(), Self.isBareKeyByte(byte) { index += 1 }
            guard index > start else { throw error("expected a \(what) (letters, digits, '_' or '-')") }
            parts.append(String(decoding: bytes[start..<index], as: UTF8.self))
        } while peek() == UInt8(ascii: ".")
        return parts.joined(separator: ".")
    }

    private static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private mutating func readValue() throws(ConfigError) -> ConfigValue {
        guard let byte = peek() else { throw error("expected a value") }
        switch byte {
        case UInt8(ascii: "\""): return .string(try readBasicString())
        case UInt8(ascii: "'"): return .string(try readLiteralString())
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return try readBoolean()
        default: return try readNumber()
        }
    }

    private mutating func readBasicString() throws(ConfigError) -> String {
        index += 1
        var out = [UInt8]()
        while true {
            guard let byte = peek(), byte != UInt8(ascii: "\n") else { throw error("string is not closed on its line") }
            index += 1
            if byte == UInt8(ascii: "\"") { break }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard let escape = peek() else { throw error("string is not closed") }
            index += 1
            switch escape {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "n"): out.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
            case UInt8(ascii: "r"): out.append(UInt8(ascii: "\r"))
            case UInt8(ascii: "u"):
                guard index + 4 <= bytes.count,
                    let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(code)
                else { throw error("\\u needs four hex digits naming a Unicode scalar") }
                index += 4
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw error("unknown escape '\\\(String(decoding: [escape], as: UTF8.self))' in string")
            }
        }
        guard let string = String(validating: out, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return string
    }

    private mutating func readLiteralString() throws(ConfigError) -> String {
        index += 1
        let start = index
        while let byte = peek(), byte != UInt8(ascii: "'") {
            guard byte != UInt8(ascii: "\n") else { throw error("string is not closed on its line") }
            index += 1
        }
        guard peek() == UInt8(ascii: "'") else { throw error("string is not closed") }
        let string = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        return string
    }

    private mutating func readArray() throws(ConfigError) -> ConfigValue {
        index += 1
        var items = [ConfigValue]()
        while true {
            skipBlankAndComments()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            items.append(try readValue())
            skipBlankAndComments()
            if peek() == UInt8(ascii: ",") {
                index += 1
            } else if peek() != UInt8(ascii: "]") {
                throw error("expected ',' or ']' in array")
            }
        }
    }

    private mutating func readBoolean() throws(ConfigError) -> ConfigValue {
        for (word, value) in [("true", true), ("false", false)] {
            let utf8 = Array(word.utf8)
            if index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 {
                index += utf8.count
                return .boolean(value)
            }
        }
        throw error("expected a value: a \"string\", a number, true/false or [an, array]")
    }

    private mutating func readNumber() throws(ConfigError) -> ConfigValue {
        let start = index
        while let byte = peek(), Self.isNumberByte(byte) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self).replacingAll("_", with: "")
        guard !text.isEmpty else {
            throw error("expected a value: a \"string\", a number, true/false or [an, array] (strings need quotes)")
        }
        if let integer = Int64(text) { return .integer(integer) }
        if let float = Double(text), float.isFinite { return .float(float) }
        throw error("'\(text)' is not a number (strings need quotes)")
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }
}

extension String {
    /// Every occurrence of `target` replaced (no Foundation).
    public func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
