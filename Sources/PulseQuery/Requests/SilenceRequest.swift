import PulseAnalytics
import PulseCore

/// A silence asked for: by `netpulse alerts silence` on the daemon's host, or by `POST /api/v1/silences` (the
/// body's fields are the command's options by the same names: `match`, `for`, `comment`, `author`). Checked by the
/// same code wherever it is asked, and bounded: a client with the right to silence must still not be able to grow
/// the store without limit.
public struct SilenceRequest: Sendable, Hashable {
    /// Label name → shell glob of its value.
    public var matchers: [String: String]
    /// How long, in milliseconds.
    public var length: Int64
    public var comment: String
    public var author: String

    public static let mostMatchers = 32
    /// The longest label name, glob, comment or author, in bytes of UTF-8.
    public static let longestText = 1_024
    /// The longest silence: a year and a day.
    public static let longest: Int64 = 366 * 86_400_000

    public init(matchers: [String: String], for text: String, comment: String, author: String) throws(QueryError) {
        guard !matchers.isEmpty else {
            throw QueryError(parameter: "match", "is missing: name at least one label, such as alertname=UplinkBusy")
        }
        guard matchers.count <= Self.mostMatchers else {
            throw QueryError(parameter: "match", "names \(matchers.count) labels; at most \(Self.mostMatchers)")
        }
        for (name, glob) in matchers {
            guard !name.isEmpty, !name.contains("="), name.utf8.count <= Self.longestText,
                glob.utf8.count <= Self.longestText
            else {
                throw QueryError(
                    parameter: "match",
                    "\(name.prefix(64)): a label name and a glob of its value, each at most "
                        + "\(Self.longestText) bytes (host=web-*)")
            }
        }
        guard let length = Units.parseDuration(text), length > 0, length <= Self.longest else {
            throw QueryError(parameter: "for", value: text, "not a duration of at most 366d; use 30m, 2h or 7d")
        }
        guard comment.utf8.count <= Self.longestText else {
            throw QueryError(parameter: "comment", "is longer than \(Self.longestText) bytes")
        }
        guard author.utf8.count <= Self.longestText else {
            throw QueryError(parameter: "author", "is longer than \(Self.longestText) bytes")
        }
        self.matchers = matchers
        self.length = length
        self.comment = comment
        self.author = author
    }

    /// The silence, from `now` for its length.
    public func silence(id: String, now: Int64) -> Silence {
        Silence(id: id, matchers: matchers, startsAt: now, endsAt: now + length, createdBy: author, comment: comment)
    }
}
