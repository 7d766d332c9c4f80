/// Validation of the names that end up in certificates and file names.
///
/// A certificate name becomes the subject CN, a DNS subject alternative name and the stem of two file names, so
/// one strict rule serves all three: hostname labels (RFC 1123) of ASCII letters, digits and '-', joined by '.'.
/// That alphabet has no '/', and labels cannot be empty, so no name can be `..` or leave the output directory.
enum NameRules {
    /// X.509's upper bound for a common name (`ub-common-name`, RFC 5280), which also keeps
    /// `NAME-key.pem` well under the 255-byte file name limit.
    static let maximumNameLength = 64
    /// The longest DNS name in presentation form (RFC 1035).
    static let maximumDNSNameLength = 253
    static let maximumLabelLength = 63

    /// Checks a certificate name (agent or daemon), which is also used as a file name stem.
    static func validateCertificateName(_ name: String) throws(CertificateAuthorityError) {
        if let reason = problem(withHostname: name, maximumLength: maximumNameLength) {
            throw .invalidName(name, reason: reason)
        }
        if IPAddress(parsing: name) != nil {
            throw .invalidName(
                name,
                reason: "it is an IP address; give a name here and pass the address as an IP address"
            )
        }
    }

    /// Checks an additional DNS subject alternative name for a daemon certificate.
    static func validateDNSName(_ name: String) throws(CertificateAuthorityError) {
        if let reason = problem(withHostname: name, maximumLength: maximumDNSNameLength) {
            throw .invalidDNSName(name, reason: reason)
        }
    }

    /// Checks the CA's common name, which is free text but only ever appears inside the certificate.
    static func validateCommonName(_ name: String) throws(CertificateAuthorityError) {
        if name.isEmpty {
            throw .invalidCommonName(name, reason: "it is empty")
        }
        if name.count > maximumNameLength {
            throw .invalidCommonName(name, reason: "it is longer than \(maximumNameLength) characters")
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidCommonName(name, reason: "it contains control characters")
        }
        if name.first == " " || name.last == " " {
            throw .invalidCommonName(name, reason: "it starts or ends with a space")
        }
    }

    /// Returns why `name` is not an acceptable hostname, or `nil` when it is.
    private static func problem(withHostname name: String, maximumLength: Int) -> String? {
        if name.isEmpty {
            return "it is empty"
        }
        let bytes = Array(name.utf8)
        if bytes.count > maximumLength {
            return "it is longer than \(maximumLength) characters"
        }
        if let bad = bytes.first(where: { !isHostnameByte($0) }) {
            return "it contains \(describe(byte: bad)), which is not allowed"
        }
        for label in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            if label.isEmpty {
                return "it has an empty label (a leading, trailing or doubled '.')"
            }
            if label.count > maximumLabelLength {
                return "a label is longer than \(maximumLabelLength) characters"
            }
            if label.first == UInt8(ascii: "-") || label.last == UInt8(ascii: "-") {
                return "a label starts or ends with '-'"
            }
        }
        return nil
    }

    private static func isHostnameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    private static func describe(byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "/"): return "'/'"
        case UInt8(ascii: " "): return "a space"
        case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0x80...: return "a non-ASCII character"
        default: return "a control character"
        }
    }
}
