/// How long a certificate is valid, in whole seconds from when it is issued: days for the certificates a fleet
/// runs on, minutes for the short ones renewal is tried with.
public struct Validity: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let seconds: Int

    public init(seconds: Int) {
        self.seconds = seconds
    }

    public static func days(_ days: Int) -> Validity {
        Validity(seconds: days.multipliedReportingOverflow(by: 86_400).overflow ? .max : days * 86_400)
    }

    public static func < (left: Validity, right: Validity) -> Bool { left.seconds < right.seconds }

    /// "365 days", "3 minutes", "1 hour", "90 seconds": the largest unit that divides it.
    public var description: String {
        for (unit, size) in [("day", 86_400), ("hour", 3600), ("minute", 60)] where seconds != 0 && seconds % size == 0
        {
            let count = seconds / size
            return "\(count) \(unit)\(count == 1 ? "" : "s")"
        }
        return "\(seconds) second\(seconds == 1 ? "" : "s")"
    }
}
