import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's check of a client's certificate chain at the TLS handshake: chained to the fleet CA and valid now
/// (RFC 5280: signatures, validity, basic constraints and path length, name constraints), made for client
/// authentication (extended key usage clientAuth), and not revoked (``RevocationList``).
///
/// Why the daemon checks chains itself rather than leaving it to BoringSSL: swift-nio-ssl has no certificate
/// revocation lists, and a custom verification callback replaces BoringSSL's whole check, not a part of it. So the
/// callback does all of it here, with swift-certificates' RFC 5280 verifier, and refuses a revoked certificate in
/// the same handshake, before the agent can send a byte.
public struct ClientCertificateCheck: Sendable {
    /// The trust anchors: every certificate in the CA file.
    public let roots: [Certificate]
    /// The certificates refused however well they chain.
    public let revoked: RevocationList
    /// Where the revocation list was read from (nil: nothing is revoked), for log lines.
    public let revokedPath: String?

    public init(roots: [Certificate], revoked: RevocationList = RevocationList(), revokedPath: String? = nil) {
        self.roots = roots
        self.revoked = revoked
        self.revokedPath = revokedPath
    }

    /// The check for the CA certificates in `caPath` and the revocation list at `revokedPath` (nil: none).
    /// - Throws: ``CertificateAuthorityError`` naming the file that cannot be used.
    public static func load(ca caPath: String, revoked revokedPath: String?) throws(CertificateAuthorityError) -> Self {
        let text = try SecureFile.readRequiredText(caPath, ifMissing: .missingCACertificate(caPath))
        let roots: [Certificate]
        do {
            roots = try PEMDocument.parseMultiple(pemString: text).map { try Certificate(pemDocument: $0) }
        } catch {
            throw .invalidCertificatePEM(caPath, reason: "\(error)")
        }
        guard !roots.isEmpty else { throw .invalidCertificatePEM(caPath, reason: "it holds no certificate") }
        let revoked = try revokedPath.map { path throws(CertificateAuthorityError) in
            try RevocationList.load(path: path)
        }
        return Self(roots: roots, revoked: revoked ?? RevocationList(), revokedPath: revokedPath)
    }

    /// What the check found.
    public enum Outcome: Sendable, Equatable {
        /// The chain holds; its leaf.
        case accepted(Certificate)
        /// Why the certificate is refused, in one line for the log.
        case refused(String)
    }

    /// Checks the chain a client presented, `chain` (DER, its own certificate first).
    public func check(_ chain: [[UInt8]]) async -> Outcome {
        guard let first = chain.first else { return .refused("the client presented no certificate") }
        let leaf: Certificate
        let intermediates: [Certificate]
        do {
            leaf = try Certificate(derEncoded: first)
            intermediates = try chain.dropFirst().map { try Certificate(derEncoded: $0) }
        } catch {
            return .refused("the client's certificate cannot be parsed: \(error)")
        }
        // Quoted and escaped: whoever connects chooses it.
        let name = CertificateRole.commonName(of: leaf).map { $0.debugDescription } ?? "without a common name"
        let which = "certificate \(name) (serial \(RevocationList.serialText(leaf.serialNumber)))"
        // The leaf's own dates in a line of our own (the verifier's prints the whole certificate).
        let now = Date()
        if leaf.notValidAfter < now {
            return .refused("\(which) expired on \(DateText.format(leaf.notValidAfter))")
        }
        if leaf.notValidBefore > now {
            return .refused(
                "\(which) is not valid until \(DateText.format(leaf.notValidBefore)) (is a clock wrong?)")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy()
            ClientAuthenticationPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
        switch result {
        case .couldNotValidate(let failures):
            return .refused("\(which): \(Self.reason(failures.map { "\($0.policyFailureReason)" }))")
        case .validCertificate(let validated):
            // The leaf and any issuing CA; the root is the trust anchor itself.
            for certificate in validated.dropLast() {
                if let entry = revoked.entry(for: certificate) {
                    let what =
                        certificate == leaf ? which : "the issuing CA (serial \(entry.serial)) of certificate \(name)"
                    let how =
                        entry.serial == RevocationList.everySerial
                        ? "was revoked with every certificate of its name issued before \(entry.revokedAt ?? "?")"
                        : "was revoked\(entry.when)"
                    return .refused("\(what) \(how), in \(revokedPath ?? "the revocation list")")
                }
            }
            return .accepted(leaf)
        }
    }

    /// Why no chain held, in a line: the verifier's reasons name whole certificates.
    static func reason(_ failures: [String]) -> String {
        // No candidate chain at all: nothing in the CA file issued it.
        guard !failures.isEmpty else { return "it is not signed by the fleet CA ([tls] ca)" }
        if let own = failures.first(where: { $0.hasPrefix(ClientAuthenticationPolicy.prefix) }) {
            return String(own.dropFirst(ClientAuthenticationPolicy.prefix.count))
        }
        if failures.contains(where: { $0.contains("has expired") }) {
            return "a CA certificate of its chain has expired"
        }
        if failures.contains(where: { $0.contains("not yet valid") }) {
            return "a CA certificate of its chain is not valid yet (is a clock wrong?)"
        }
        return "its chain does not meet RFC 5280: \(failures[0].prefix(200))"
    }
}

/// A client certificate must say it is one: extended key usage clientAuth, as every agent's and operator's
/// certificate `netpulse ca issue` makes (BoringSSL asked the same of them before the daemon checked chains itself).
/// Read as bytes: the operator usage's object identifier is too large for swift-asn1 to parse
/// (``CertificateRole/operatorUsageDER``).
struct ClientAuthenticationPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]
    /// Starts its reasons, so that ``ClientCertificateCheck/reason(_:)`` finds them among the verifier's.
    static let prefix = "client authentication: "

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard let usage = chain.leaf.extensions.first(where: { $0.oid == .X509ExtensionID.extendedKeyUsage }) else {
            return .failsToMeetPolicy(reason: Self.prefix + "it has no extended key usage: not a client certificate")
        }
        guard CertificateRole.contains(Array(usage.value), CertificateRole.clientAuthDER) else {
            return .failsToMeetPolicy(
                reason: Self.prefix + "its extended key usage lacks clientAuth: not a client certificate")
        }
        return .meetsPolicy
    }
}
