/// A query that cannot be answered as asked: one line saying why and what to do.
///
/// One about a parameter names it, so each front end says it in its own words: the CLI as its option
/// (`--last 5x: not a duration; …`), the HTTP API as its query parameter (`last=5x: …`, and the name in the error's
/// `parameter` field).
public struct QueryError: Error, Sendable, CustomStringConvertible {
    /// The parameter at fault, if one is (`last`, `top`).
    public var parameter: String?
    /// The value it was given, when the message quotes it.
    public var value: String?
    /// Why, and what to do.
    public var reason: String
    /// Whether `reason` is the whole message (it says what it is about itself).
    public var standsAlone: Bool

    /// An error whose message is whole (`unknown agent 'x'; known: …`); `parameter` names what it is about.
    public init(_ message: String, about parameter: String? = nil) {
        reason = message
        self.parameter = parameter
        standsAlone = true
    }

    /// An error about a parameter: said as `--name value: reason` (or `--name reason` without a value).
    public init(parameter: String, value: String? = nil, _ reason: String) {
        self.parameter = parameter
        self.value = value
        self.reason = reason
        standsAlone = false
    }

    /// As the CLI says it: `--last 5x: not a duration; …`.
    public var description: String { text(prefix: "--", separator: " ") }

    /// As the HTTP API says it: `last=5x: not a duration; …`.
    public var parameterText: String { text(prefix: "", separator: "=") }

    private func text(prefix: String, separator: String) -> String {
        guard let parameter, !standsAlone else { return reason }
        guard let value else { return "\(prefix)\(parameter) \(reason)" }
        return "\(prefix)\(parameter)\(separator)\(value): \(reason)"
    }
}
