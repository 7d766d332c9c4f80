import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CertificateAuthority {
    /// The directory of an issuing CA made beside the root in `rootDirectory` when none is named:
    /// `/etc/netpulse/ca` → `/etc/netpulse/enrollment`.
    public static func defaultIssuingDirectory(besideRoot rootDirectory: String) -> String {
        SecureFile.path(issuingDirectoryName, in: SecureFile.parentDirectory(of: rootDirectory))
    }

    /// Refuses `directory` for a new issuing CA when it holds a CA's `ca.pem` or `ca-key.pem` already; `advice` ends
    /// the message (what the command that asked should be given instead). Checked before anything is made, so that
    /// a refusal leaves nothing half done.
    public static func checkRoomForIssuing(in directory: String, advice: String) throws(CertificateAuthorityError) {
        for file in [certificateFileName, privateKeyFileName] {
            let path = SecureFile.path(file, in: directory)
            if SecureFile.exists(path) { throw .directoryHoldsCA(path, advice: advice) }
        }
    }

    /// Makes an issuing CA for agents under this root and writes its `ca.pem` (0644) and `ca-key.pem` (0600, or 0640
    /// readable by `keyGroup`: the daemon's, which signs renewals with it) into `directory` (made 0755 if missing).
    ///
    /// The certificate has basicConstraints CA:TRUE with pathLen 0 and keyUsage keyCertSign (both critical), and
    /// extended key usage clientAuth: it can sign agents' certificates and nothing else, neither a CA nor a server
    /// nor an operator, so a daemon host that leaks the key leaks no more than agents' identities, and only until
    /// the issuing CA is replaced. It may not outlive the root.
    ///
    /// - Throws: ``CertificateAuthorityError``: this CA is not a root with room for one more level (path length 0:
    ///   ``allowingIssuingCA(now:)`` first), files already there, a validity beyond the root's, a failed write.
    public func createIssuing(
        directory: String, commonName: String = defaultIssuingCommonName,
        validityDays: Int = defaultIssuingValidityDays, keyGroup: KeyGroup? = nil, now: Date = Date()
    ) throws(CertificateAuthorityError) -> CertificateAuthority {
        try NameRules.validateCommonName(commonName)
        guard isRoot else { throw .noRoomForIssuingCA(certificatePath, pathLength: pathLength ?? 0) }
        guard pathLength.map({ $0 >= 1 }) ?? true else {
            throw .noRoomForIssuingCA(certificatePath, pathLength: 0)
        }
        let certificatePath = SecureFile.path(Self.certificateFileName, in: directory)
        let privateKeyPath = SecureFile.path(Self.privateKeyFileName, in: directory)
        for path in [certificatePath, privateKeyPath] where SecureFile.exists(path) {
            throw .caAlreadyExists(directory: directory, existing: path)
        }
        // An issuing CA that outlives its root would be cut short by it anyway: capped at the root's expiry.
        let (notValidBefore, requestedEnd) = try dates(.days(validityDays), now: now, capped: true)
        try SecureFile.makeDirectory(directory, mode: 0o755)
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let certificate: Certificate
        do {
            let authorityKeyIdentifier =
                try self.certificate.extensions.subjectKeyIdentifier?.keyIdentifier
                ?? SubjectKeyIdentifier(hash: self.certificate.publicKey).keyIdentifier
            certificate = try Certificate(
                version: .v3,
                serialNumber: .random128(),
                publicKey: publicKey,
                notValidBefore: notValidBefore,
                notValidAfter: requestedEnd,
                issuer: self.certificate.subject,
                subject: try DistinguishedName { CommonName(commonName) },
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    try ExtendedKeyUsage([.clientAuth])
                    SubjectKeyIdentifier(hash: publicKey)
                    AuthorityKeyIdentifier(keyIdentifier: authorityKeyIdentifier)
                },
                issuerPrivateKey: privateKey
            )
        } catch {
            throw .signingFailed("issuing CA certificate", underlying: error)
        }
        let encoded = try PEMEncoding.encode(certificate)
        do {
            try SecureFile.writeKeyAndCertificate(
                key: key.pemRepresentation + "\n", to: privateKeyPath, certificate: encoded.pem, to: certificatePath,
                replacing: false, keyGroup: keyGroup?.id)
        } catch {
            guard error.code == .fileExists, let existing = error.path else { throw error }
            throw .caAlreadyExists(directory: directory, existing: existing)
        }
        return CertificateAuthority(
            directory: directory, certificatePath: certificatePath, privateKeyPath: privateKeyPath,
            certificate: certificate, fingerprint: encoded.fingerprint, warnings: [], chain: [],
            privateKey: Certificate.PrivateKey(key))
    }

    /// The file a root's previous certificate is kept in when ``allowingIssuingCA(now:)`` replaces it.
    public static let previousCertificateFileName = "ca-pathlen0.pem"

    /// This root, able to have an issuing CA under it. A root made before issuing CAs existed says path length 0
    /// (no CA below it); it is signed again with its own key, the same name, key and dates, and path length 1, into
    /// `ca.pem` (the old one kept as ``previousCertificateFileName``).
    ///
    /// Certificates it issued stay valid, and so do the copies of the old `ca.pem` on agents' hosts: the daemon's
    /// certificate is signed by the same key, whichever copy checks it. Only the daemon, which checks agents' chains
    /// through the issuing CA, needs the new one as its `[tls] ca`.
    ///
    /// - Returns: the root to use, and whether `ca.pem` was replaced.
    public func allowingIssuingCA(now: Date = Date()) throws(CertificateAuthorityError) -> (
        CertificateAuthority, replaced: Bool
    ) {
        guard isRoot else { throw .noRoomForIssuingCA(certificatePath, pathLength: pathLength ?? 0) }
        guard pathLength == 0 else { return (self, false) }
        let keyUsage = (try? certificate.extensions.keyUsage) ?? KeyUsage(keyCertSign: true, cRLSign: true)
        let replacement: Certificate
        do {
            replacement = try Certificate(
                version: .v3,
                serialNumber: .random128(),
                publicKey: certificate.publicKey,
                notValidBefore: certificate.notValidBefore,
                notValidAfter: certificate.notValidAfter,
                issuer: certificate.subject,
                subject: certificate.subject,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 1))
                    Critical(keyUsage)
                    SubjectKeyIdentifier(
                        keyIdentifier: try certificate.extensions.subjectKeyIdentifier?.keyIdentifier
                            ?? SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier)
                },
                issuerPrivateKey: privateKey
            )
        } catch {
            throw .signingFailed("CA certificate", underlying: error)
        }
        let previousPath = SecureFile.path(Self.previousCertificateFileName, in: directory)
        let previous = try SecureFile.stage(try PEMEncoding.encode(certificate).pem, for: previousPath, mode: 0o644)
        let encoded = try PEMEncoding.encode(replacement)
        let staged: SecureFile.StagedFile
        do {
            staged = try SecureFile.stage(encoded.pem, for: certificatePath, mode: 0o644)
        } catch {
            previous.discard()
            throw error
        }
        do {
            try previous.commit(replacing: true)
            try staged.commit(replacing: true)
        } catch {
            staged.discard()
            throw error
        }
        return (
            CertificateAuthority(
                directory: directory, certificatePath: certificatePath, privateKeyPath: privateKeyPath,
                certificate: replacement, fingerprint: encoded.fingerprint, warnings: warnings, chain: [],
                privateKey: privateKey),
            true
        )
    }
}
