import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate and its private key, as `CertificateAuthority.issue` wrote them to disk.
public struct IssuedCertificate: Sendable {
    /// Whether this is an agent (client) or daemon (server) certificate.
    public let role: CertificateRole
    /// The name given at issue: the subject CN and the first DNS subject alternative name.
    public let name: String
    /// `NAME.pem`: the leaf certificate alone (see ``CertificateAuthority`` for why the CA is not appended).
    public let certificatePath: String
    /// `NAME-key.pem`: the PKCS#8 PEM private key, mode 0600.
    public let keyPath: String
    /// All DNS subject alternative names, the name first.
    public let dnsNames: [String]
    /// All IP address subject alternative names, in canonical text form.
    public let ipAddresses: [String]
    /// The signed certificate.
    public let certificate: Certificate

    /// The serial number as colon-separated uppercase hex bytes.
    public var serialNumber: String { HexFormat.colonSeparated(certificate.serialNumber.bytes) }
    /// The first moment the certificate is valid (backdated a little for clock skew).
    public var notValidBefore: Date { certificate.notValidBefore }
    /// The moment the certificate expires.
    public var notValidAfter: Date { certificate.notValidAfter }
}
