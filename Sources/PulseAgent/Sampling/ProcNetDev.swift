import PulseCore

/// Parses `/proc/net/dev`: two header lines, then one line per interface, `NAME: ` followed by sixteen counters
/// (eight receive, eight transmit) in ``Counter`` order.
///
/// Interface names are taken as raw bytes: Linux allows anything but `/`, `:`, whitespace and NUL, so names such
/// as `a<b&c` or `p"q>` are valid and must survive untouched.
public enum ProcNetDev {
    public struct Row: Sendable, Hashable {
        public var name: InterfaceName
        public var counters: CounterValues
    }

    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var line: Int
        public var problem: String
        public var description: String { "/proc/net/dev line \(line): \(problem)" }
    }

    public static let path = "/proc/net/dev"

    /// Parses the file's bytes.
    ///
    /// - Throws: ``ParseError`` for a line that does not have a name and sixteen decimal counters.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> [Row] {
        var rows = [Row]()
        var lineNumber = 0
        var lineStart = 0
        let end = bytes.count
        while lineStart < end {
            var lineEnd = lineStart
            while lineEnd < end && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            lineNumber += 1
            defer { lineStart = lineEnd + 1 }
            if lineNumber <= 2 || lineEnd == lineStart { continue }
            rows.append(try parseLine(bytes, lineStart, lineEnd, lineNumber))
        }
        return rows
    }

    private static func parseLine(_ bytes: [UInt8], _ start: Int, _ end: Int, _ lineNumber: Int) throws(ParseError)
        -> Row
    {
        var index = start
        while index < end && bytes[index] == UInt8(ascii: " ") { index += 1 }
        let nameStart = index
        while index < end && bytes[index] != UInt8(ascii: ":") { index += 1 }
        guard index < end, index > nameStart else { throw ParseError(line: lineNumber, problem: "no 'name:' prefix") }
        let name = InterfaceName(bytes: Array(bytes[nameStart..<index]))
        index += 1
        var counters = CounterValues()
        for slot in 0..<Counter.count {
            while index < end && (bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t")) {
                index += 1
            }
            var value: UInt64 = 0
            var digits = 0
            while index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = shifted.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflowA && !overflowB else {
                    throw ParseError(line: lineNumber, problem: "counter \(slot + 1) of \(name) overflows 64 bits")
                }
                value = sum
                digits += 1
                index += 1
            }
            guard digits > 0 else {
                throw ParseError(line: lineNumber, problem: "\(name) has \(slot) counters, expected \(Counter.count)")
            }
            counters.values[slot] = value
        }
        return Row(name: name, counters: counters)
    }
}
