import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate authority of the fleet: a CA certificate and its private key, kept as `ca.pem` and `ca-key.pem` in
/// one directory. Two kinds:
///
/// - **The root** (`netpulse ca init`, `/etc/netpulse/ca`): self-signed, the trust anchor every host holds as
///   `ca.pem`. The daemon trusts agents whose client certificate chains to it, and agents trust a daemon whose server
///   certificate does. It signs the daemon's and operators' certificates, and may sign agents' too.
/// - **An issuing CA for agents** (``createIssuing(directory:commonName:validityDays:keyGroup:now:)``,
///   `/etc/netpulse/enrollment`): signed by the root, path length 0 and extended key usage clientAuth, so its key,
///   which the daemon holds to renew agents' certificates (`[enrollment]`), can make nothing but agent
///   certificates: no CA, no server, no operator.
///
/// Issued `NAME.pem` files hold the leaf, then the certificates between it and the root: nothing more under the root,
/// which every peer already has as its trust anchor, and the issuing CA's certificate under an issuing CA, so the
/// daemon can build the path from the agent's certificate to the root it trusts.
///
/// Revocation is a list the daemon reads (``RevocationList``, `netpulse ca revoke`), not a CRL or OCSP: the daemon
/// is the only party that checks these certificates.
///
/// All methods block on the file system and key generation; call them from the CLI, not from an event loop.
public struct CertificateAuthority: Sendable {
    /// The CA certificate's file name inside the CA directory.
    public static let certificateFileName = "ca.pem"
    /// The CA private key's file name inside the CA directory.
    public static let privateKeyFileName = "ca-key.pem"
    /// The common name a new CA gets unless told otherwise.
    public static let defaultCommonName = "Netpulse Fleet CA"
    /// Ten years: replacing a CA means reissuing every certificate in the fleet, so it should rarely happen.
    public static let defaultCAValidityDays = 3650
    /// Where an issuing CA for agents goes unless told otherwise: `enrollment` beside the root's directory (which is
    /// 0700, root's alone, while the daemon must read the issuing CA's key).
    public static let issuingDirectoryName = "enrollment"
    /// The common name of a new issuing CA unless told otherwise.
    public static let defaultIssuingCommonName = "Netpulse Agent CA"
    /// Five years: an issuing CA is replaced (`netpulse ca issuing`) without touching the root or any host, so it
    /// need not live as long as the root.
    public static let defaultIssuingValidityDays = 1826
    /// One year, as kubeadm does for its leaf certificates. Expiry retires a leaked key nobody noticed (a noticed
    /// one is revoked), which argues for short; each renewal is a manual step on every host, which argues for
    /// long. A yearly rotation is a routine operators already know.
    public static let defaultLeafValidityDays = 365
    /// An upper bound that catches typos (`36500` meant as `365`) rather than a cryptographic limit.
    public static let maximumValidityDays = 36_500
    /// The shortest certificate issued: a minute (tests of renewal use a few); shorter ones would expire before
    /// most hosts could even use them.
    public static let minimumValiditySeconds = 60

    /// Certificates are backdated this much so a host whose clock is a little behind accepts them at once; a short
    /// certificate by a tenth of its lifetime at most, so that most of its lifetime is still ahead when it is issued
    /// (an agent renews at a share of the lifetime, counted from the backdated start).
    static let clockSkewAllowance: Double = 3600
    static let secondsPerDay: Double = 86_400

    /// The directory holding `ca.pem` and `ca-key.pem`.
    public let directory: String
    /// The path of `ca.pem`.
    public let certificatePath: String
    /// The path of `ca-key.pem`.
    public let privateKeyPath: String
    /// The CA certificate.
    public let certificate: Certificate
    /// The SHA-256 fingerprint of the CA certificate, in the form `openssl x509 -fingerprint -sha256` prints.
    public let fingerprint: String
    /// Things the operator should hear about that do not stop the CA from working (an exposed key file, a CA
    /// that expires soon).
    public let warnings: [String]
    /// The certificates after the CA's own in `ca.pem`: those between it and the root, when it is not the root
    /// itself and they were kept with it (a two-level fleet has none).
    public let chain: [Certificate]

    let privateKey: Certificate.PrivateKey

    /// The CA's common name.
    public var commonName: String {
        certificate.subject.lazy.flatMap { $0 }
            .first { $0.type == .RDNAttributeType.commonName }
            .map { String($0.value) ?? $0.value.description } ?? certificate.subject.description
    }

    /// The moment the CA certificate expires; nothing it issues may outlive it.
    public var notValidAfter: Date { certificate.notValidAfter }

    /// Whether this is the root: self-issued, a trust anchor (not an issuing CA under one).
    public var isRoot: Bool { certificate.subject == certificate.issuer }

    /// What an issued leaf's file carries after the leaf: nothing under the root, which every peer trusts already;
    /// the issuing CA's certificate (and its chain) otherwise.
    var issuedChain: [Certificate] { isRoot ? [] : [certificate] + chain }

    /// How many CA certificates may follow this one in a chain (its basicConstraints path length); nil when
    /// unlimited.
    public var pathLength: Int? {
        if case .isCertificateAuthority(let length) = try? certificate.extensions.basicConstraints { return length }
        return 0
    }

    // MARK: Create

    /// Creates a new CA and writes `ca.pem` (mode 0644) and `ca-key.pem` (mode 0600) into `directory`.
    ///
    /// The directory is created with mode 0700 if it is missing (missing parents with 0755). The CA certificate is
    /// self-signed with a new P-256 key and has basicConstraints CA:TRUE with pathLen 1 (critical: one issuing CA may
    /// stand between it and a leaf, ``createIssuing(directory:commonName:validityDays:keyGroup:now:)``), keyUsage
    /// keyCertSign and cRLSign (critical), a subject key identifier and a random 16-byte serial number.
    ///
    /// - Parameters:
    ///   - directory: Where the CA's two files go.
    ///   - commonName: The CA certificate's subject CN.
    ///   - validityDays: How long the CA is valid, from now.
    /// - Throws: ``CertificateAuthorityError`` with code `caAlreadyExists` when either file is already there (an
    ///   existing CA is never replaced), or when a name, the validity or a file operation is rejected.
    public static func create(
        directory: String,
        commonName: String = defaultCommonName,
        validityDays: Int = defaultCAValidityDays
    ) throws(CertificateAuthorityError) -> CertificateAuthority {
        try create(directory: directory, commonName: commonName, validityDays: validityDays, now: Date())
    }

    static func create(
        directory: String,
        commonName: String,
        validityDays: Int,
        now: Date
    ) throws(CertificateAuthorityError) -> CertificateAuthority {
        try NameRules.validateCommonName(commonName)
        guard (1...maximumValidityDays).contains(validityDays) else {
            throw .invalidValidity(.days(validityDays), maximumDays: maximumValidityDays)
        }
        let certificatePath = SecureFile.path(certificateFileName, in: directory)
        let privateKeyPath = SecureFile.path(privateKeyFileName, in: directory)
        for path in [certificatePath, privateKeyPath] where SecureFile.exists(path) {
            throw .caAlreadyExists(directory: directory, existing: path)
        }
        try SecureFile.makeDirectory(directory, mode: 0o700)

        let key = P256.Signing.PrivateKey()
        let privateKey = Certificate.PrivateKey(key)
        let start = wholeSeconds(now)
        let certificate: Certificate
        do {
            let name = try DistinguishedName { CommonName(commonName) }
            certificate = try Certificate(
                version: .v3,
                serialNumber: .random128(),
                publicKey: privateKey.publicKey,
                notValidBefore: start.addingTimeInterval(-clockSkewAllowance),
                notValidAfter: start.addingTimeInterval(Double(validityDays) * secondsPerDay),
                issuer: name,
                subject: name,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 1))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    SubjectKeyIdentifier(hash: privateKey.publicKey)
                },
                issuerPrivateKey: privateKey
            )
        } catch {
            throw .signingFailed("CA certificate", underlying: error)
        }
        let encoded = try PEMEncoding.encode(certificate)

        do {
            try SecureFile.writeKeyAndCertificate(
                key: key.pemRepresentation + "\n",
                to: privateKeyPath,
                certificate: encoded.pem,
                to: certificatePath,
                replacing: false
            )
        } catch {
            // Another `ca init` got there between the check above and now.
            guard error.code == .fileExists, let existing = error.path else { throw error }
            throw .caAlreadyExists(directory: directory, existing: existing)
        }

        return CertificateAuthority(
            directory: directory,
            certificatePath: certificatePath,
            privateKeyPath: privateKeyPath,
            certificate: certificate,
            fingerprint: encoded.fingerprint,
            warnings: [],
            chain: [],
            privateKey: privateKey
        )
    }

    // MARK: Load

    /// Loads the CA in `directory` to issue certificates with it.
    ///
    /// The private key may be PKCS#8 or SEC1 PEM, and P-256, P-384, P-521, Ed25519 or RSA, so a CA made by hand
    /// with openssl can be used too; issued keys are always P-256.
    ///
    /// - Parameter directory: The directory holding `ca.pem` and `ca-key.pem`.
    /// - Throws: ``CertificateAuthorityError`` when a file is missing or unreadable, is not PEM, the certificate
    ///   is not a CA, or the key does not belong to the certificate. An expired CA still loads (so it can be
    ///   inspected); issuing with it fails.
    public static func load(directory: String) throws(CertificateAuthorityError) -> CertificateAuthority {
        try load(directory: directory, now: Date())
    }

    static func load(directory: String, now: Date) throws(CertificateAuthorityError) -> CertificateAuthority {
        let certificatePath = SecureFile.path(certificateFileName, in: directory)
        let privateKeyPath = SecureFile.path(privateKeyFileName, in: directory)

        let certificatePEM = try SecureFile.readRequiredText(
            certificatePath, ifMissing: .missingCACertificate(certificatePath))
        let (certificates, fingerprint) = try PEMEncoding.decodeChain(certificatePEM, path: certificatePath)
        let certificate = certificates[0]
        // A root's file holds the root; an issuing CA's may hold the CAs above it, each the issuer of the one before.
        if certificates.count > 1 {
            guard certificate.subject != certificate.issuer else {
                throw .invalidCertificatePEM(
                    certificatePath,
                    reason: "it holds \(certificates.count) certificates, where a root CA's file holds its own alone")
            }
            for (lower, upper) in zip(certificates, certificates.dropFirst()) where lower.issuer != upper.subject {
                throw .invalidCertificatePEM(
                    certificatePath,
                    reason: "its certificates are not a chain: \(upper.subject) did not issue \(lower.subject)")
            }
        }

        let privateKeyPEM = try SecureFile.readRequiredText(privateKeyPath, ifMissing: .missingCAKey(privateKeyPath))
        let privateKey = try PEMEncoding.decodePrivateKey(privateKeyPEM, path: privateKeyPath)

        let basicConstraints: BasicConstraints?
        let keyUsage: KeyUsage?
        do {
            basicConstraints = try certificate.extensions.basicConstraints
            keyUsage = try certificate.extensions.keyUsage
        } catch {
            throw .invalidCertificatePEM(certificatePath, reason: "its extensions are malformed (\(error))")
        }
        guard case .isCertificateAuthority = basicConstraints else {
            throw .notCertificateAuthority(
                certificatePath, reason: "its basicConstraints extension does not say CA:TRUE")
        }
        if let keyUsage, !keyUsage.keyCertSign {
            throw .notCertificateAuthority(certificatePath, reason: "its keyUsage extension does not allow keyCertSign")
        }
        guard privateKey.publicKey == certificate.publicKey else {
            throw .keyMismatch(certificate: certificatePath, key: privateKeyPath)
        }

        return CertificateAuthority(
            directory: directory,
            certificatePath: certificatePath,
            privateKeyPath: privateKeyPath,
            certificate: certificate,
            fingerprint: fingerprint,
            warnings: loadWarnings(certificate: certificate, privateKeyPath: privateKeyPath, now: now),
            chain: Array(certificates.dropFirst()),
            privateKey: privateKey
        )
    }

    private static func loadWarnings(certificate: Certificate, privateKeyPath: String, now: Date) -> [String] {
        var warnings: [String] = []
        // A root's key is its owner's alone; an issuing CA's is read by the daemon's group too (0640), which renews
        // agents with it.
        let root = certificate.subject == certificate.issuer
        if let permissions = SecureFile.permissions(privateKeyPath), permissions & (root ? 0o077 : 0o007) != 0 {
            warnings.append(
                "\(privateKeyPath) is readable by other users (mode 0\(String(permissions, radix: 8))); "
                    + "run `chmod \(root ? "600" : "640") \(privateKeyPath)`."
            )
        }
        let daysLeft = Int(certificate.notValidAfter.timeIntervalSince(now) / secondsPerDay)
        // An issuing CA is replaced under the same root, and no host needs to hear of it.
        let replace =
            certificate.subject == certificate.issuer
            ? "create a new CA and reissue the fleet's certificates"
            : "make a new issuing CA under the root (netpulse ca issuing) and point [enrollment] at it"
        if certificate.notValidAfter <= now {
            warnings.append("The CA expired on \(DateText.format(certificate.notValidAfter)); \(replace).")
        } else if daysLeft < 90 {
            warnings.append(
                "The CA expires on \(DateText.format(certificate.notValidAfter)) (in \(daysLeft) days); plan to "
                    + "\(replace) before then."
            )
        }
        return warnings
    }

    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}
