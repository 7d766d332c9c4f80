/// A read's parameters by name, as text: the CLI's options (`--agent web-1`) and the HTTP API's query parameters
/// (`agent=web-1`) are the same names and values, parsed and checked by the same code, so a command gives the same
/// answer (and the same mistake the same error) on the daemon's host and over HTTP.
public struct ReadParameters: Sendable, Hashable {
    public struct Item: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    /// In the order given.
    public private(set) var items: [Item]

    /// Items whose value is nil (an option not given) are left out.
    public init(_ pairs: [(String, String?)]) {
        items = pairs.compactMap { name, value in value.map { Item(name: name, value: $0) } }
    }

    public subscript(_ name: String) -> String? { items.first { $0.name == name }?.value }

    /// A flag: absent, or `true`/`false` (`1`/`0`, `yes`/`no`; the bare name in a URL, `?members`, is true).
    public func flag(_ name: String) throws(QueryError) -> Bool {
        guard let text = self[name] else { return false }
        switch text {
        case "", "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw QueryError(parameter: name, value: text, "use true or false")
        }
    }

    /// A whole number in `range`, or `fallback` when absent.
    public func integer(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(QueryError) -> Int {
        guard let text = self[name] else { return fallback }
        guard let value = Int(text) else { throw QueryError(parameter: name, value: text, "not a whole number") }
        guard range.contains(value) else {
            throw QueryError(
                parameter: name,
                range.upperBound == .max
                    ? "must be at least \(range.lowerBound)" : "must be \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// One of a type's raw values, or `fallback` when absent.
    public func choice<T: RawRepresentable & CaseIterable>(_ name: String, default fallback: T) throws(QueryError) -> T
    where T.RawValue == String {
        guard let text = self[name] else { return fallback }
        guard let value = T(rawValue: text) else {
            throw QueryError(
                parameter: name, value: text, "use \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// Only these names, each once: a name the read does not know (a typo, `agnet=web-1`) is an error rather than
    /// a read of everything.
    public func check(known: Set<String>) throws(QueryError) {
        var seen = Set<String>()
        for item in items {
            guard known.contains(item.name) else {
                throw QueryError(
                    "unknown parameter '\(item.name)'; this read takes \(known.sorted().joined(separator: ", "))",
                    about: item.name)
            }
            guard seen.insert(item.name).inserted else {
                throw QueryError("'\(item.name)' is given more than once", about: item.name)
            }
        }
    }
}
