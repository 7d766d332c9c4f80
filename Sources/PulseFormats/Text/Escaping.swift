import PulseCore

/// Escaping for the text formats PulseFormats alone writes: CSV and the terminal. (JSON's, which the store and the
/// daemon write too, is ``JSONText`` in PulseCore.)
public enum CSVText {
    /// RFC 4180: quote fields holding a comma, quote or line break; double inner quotes. A text that a spreadsheet
    /// would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return, and not a number) gets
    /// a leading `'`, as OWASP advises against CSV injection: an interface may be named `=1+1`, and a host's labels
    /// are whatever its operator typed.
    public static func field(_ text: String) -> String {
        let text = neutralized(text)
        // Bytes, not characters: a CSV of 10,000 bills is 150,000 fields.
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }

    /// `text`, or `'text` when a spreadsheet would take it for a formula. Numbers (`-12.5`) stay as they are.
    static func neutralized(_ text: String) -> String {
        guard let first = text.utf8.first,
            [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D].contains(first)
        else { return text }
        if first == UInt8(ascii: "-") || first == UInt8(ascii: "+"), Double(text.dropFirst()) != nil,
            text.utf8.dropFirst().allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") })
        {
            return text
        }
        return "'" + text
    }

    public static func row(_ fields: [String]) -> String { fields.map(field).joined(separator: ",") + "\r\n" }
}

/// Control characters shown as `\xNN`, so a hostile interface name cannot drive a terminal.
public enum TerminalText {
    public static func safe(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                out += "\\x" + Hex.string(UInt64(scalar.value), width: 2)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Aligned columns, numbers right-aligned; `numeric` says which columns hold numbers.
    public static func table(_ rows: [[String]], numeric: Set<Int>) -> String {
        guard let header = rows.first else { return "" }
        let widths = (0..<header.count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return numeric.contains(index) ? padding + cell : cell + padding
            }
            out += cells.joined(separator: "  ").trimmingWhitespace() + "\n"
        }
        return out
    }

    /// A rate in milli-bytes per second as bit/s with SI prefixes.
    public static func rate(_ milliBytesPerSecond: Int64?) -> String {
        milliBytesPerSecond.map { Units.formatBitRate(bytesPerSecond: Double($0) / 1_000) } ?? "-"
    }

    public static func bytes(_ value: Int64) -> String { Units.formatBytes(Double(value)) }

    /// Parts per million as a percentage with one decimal.
    public static func percent(ppm: Int64?) -> String {
        ppm.map { FixedPoint.text($0 / 1_000, places: 1) + " %" } ?? "-"
    }
}
