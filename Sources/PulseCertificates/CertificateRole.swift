import X509

/// What a leaf certificate is for, which decides its extended key usage and subject alternative names.
public enum CertificateRole: String, Sendable, Hashable, CaseIterable {
    /// An agent: a TLS client (EKU clientAuth) whose only name is its own.
    case agent
    /// The daemon: a TLS server (EKU serverAuth) that may answer to extra DNS names and IP addresses.
    case daemon
    /// A person or a tool reading the daemon's HTTP API: a TLS client (EKU clientAuth) that also carries the
    /// operator usage (``operatorUsage``). The daemon's HTTP server accepts no other client certificate, and its
    /// agents' listener refuses this one, so neither key can stand in for the other.
    case `operator`

    /// The operator's extended key usage, 2.25.277939900980301044039430868934078263260: an object identifier made
    /// from a UUID (d119471e-2655-4655-bf52-c67971386fdc; ITU-T X.667's arc 2.25), which needs no registration and
    /// cannot collide with anyone's. Its last arc is larger than 64 bits, which swift-asn1's object identifiers do
    /// not hold, so it is kept here in its DER form (tag, length, contents) and the extension is written and
    /// searched as bytes.
    static let operatorUsageDER: [UInt8] = [
        0x06, 0x14, 0x69, 0x83, 0xA2, 0x99, 0xA3, 0xC7, 0xC4, 0xE5, 0xAA, 0x99, 0xAB, 0xBF, 0xA9, 0xB1, 0xCF, 0x97,
        0x89, 0xE1, 0xDF, 0x5C,
    ]
    public static let operatorUsage = "2.25.277939900980301044039430868934078263260"

    /// clientAuth (1.3.6.1.5.5.7.3.2), DER.
    static let clientAuthDER: [UInt8] = [0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02]

    /// The operator's extendedKeyUsage extension: SEQUENCE { clientAuth, operator }.
    static var operatorExtension: Certificate.Extension {
        let content = clientAuthDER + operatorUsageDER
        return Certificate.Extension(
            oid: .X509ExtensionID.extendedKeyUsage, critical: false,
            value: ArraySlice([0x30, UInt8(content.count)] + content))
    }

    /// The role a certificate was issued for, by its extended key usage: the operator's usage, serverAuth (the
    /// daemon) or clientAuth (an agent); nil when it says none of them.
    public init?(of certificate: Certificate) {
        guard let usage = certificate.extensions.first(where: { $0.oid == .X509ExtensionID.extendedKeyUsage }) else {
            return nil
        }
        let bytes = Array(usage.value)
        if Self.contains(bytes, Self.operatorUsageDER) {
            self = .operator
        } else if let parsed = try? ExtendedKeyUsage(usage), parsed.contains(.serverAuth) {
            self = .daemon
        } else if Self.contains(bytes, Self.clientAuthDER) {
            self = .agent
        } else {
            return nil
        }
    }

    /// The subject's common name: the name `netpulse ca issue` gave the certificate (an operator's, an agent's).
    public static func commonName(of certificate: Certificate) -> String? {
        certificate.subject.lazy.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName }
            .map { String($0.value) ?? $0.value.description }
    }

    /// The role of a certificate given as DER; nil when it cannot be parsed or says none.
    public init?(derEncoded bytes: [UInt8]) {
        guard let certificate = try? Certificate(derEncoded: bytes) else { return nil }
        self.init(of: certificate)
    }

    static func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
        guard bytes.count >= part.count else { return false }
        return (0...(bytes.count - part.count)).contains { start in
            bytes[start..<(start + part.count)].elementsEqual(part)
        }
    }
}
