import PulseCore

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

    /// The validity `--days` or `--validity` (a duration in whole seconds: `90d`, `12h`, `3m`) asks for: one of
    /// them, or a year (``CertificateAuthority/defaultLeafValidityDays``) without either.
    /// - Throws: ``CertificateAuthorityError`` (``CertificateAuthorityError/Code/invalidValidity``) for both at once
    ///   or a duration that is not one.
    public static func chosen(days: Int?, duration: String?) throws(CertificateAuthorityError) -> Validity {
        switch (days, duration) {
        case (nil, nil): return .days(CertificateAuthority.defaultLeafValidityDays)
        case (let days?, nil): return .days(days)
        case (nil, let text?):
            guard let milliseconds = Units.parseDuration(text), milliseconds % 1000 == 0, milliseconds > 0 else {
                throw .invalidValidityText(text)
            }
            return Validity(seconds: Int(milliseconds / 1000))
        case (_?, _?): throw .validityTwice
        }
    }
}
