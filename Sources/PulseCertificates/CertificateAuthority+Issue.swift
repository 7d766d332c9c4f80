import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CertificateAuthority {
    /// Issues a certificate for an agent or the daemon, writing `NAME.pem` (mode 0644) and `NAME-key.pem`
    /// (mode 0600, or 0640 for `keyGroup`) into `outputDirectory`.
    ///
    /// The certificate has subject CN=`name`, a DNS subject alternative name `name`, keyUsage digitalSignature
    /// (critical), basicConstraints CA:FALSE (critical), subject and authority key identifiers, and a new P-256
    /// key. Agents get EKU clientAuth; operators clientAuth and the operator usage (``CertificateRole/operator``);
    /// the daemon gets EKU serverAuth and may also answer to `dnsNames` and `ipAddresses`. `NAME.pem` holds the leaf,
    /// then, under an issuing CA, the issuing CA's certificate (``issuedChain``); peers trust it through the root's
    /// `ca.pem`. An issuing CA issues agents' certificates only.
    ///
    /// `outputDirectory` and any missing parents are created with mode 0755 (the key files protect themselves).
    ///
    /// - Parameters:
    ///   - role: `.agent` or `.operator` (TLS clients) or `.daemon` (TLS server).
    ///   - name: The agent's or daemon's name: 1-64 letters, digits, '-' and '.', as a hostname. It is also the
    ///     file name stem, so it cannot contain '/' or be `..`.
    ///   - dnsNames: Extra DNS names for a daemon certificate; must be empty for the other roles.
    ///   - ipAddresses: IPv4 or IPv6 addresses for a daemon certificate (`127.0.0.1`, `::1`); must be empty for
    ///     the other roles.
    ///   - validity: How long the certificate is valid, from now; it may not outlive the CA.
    ///   - outputDirectory: Where the two files go.
    ///   - overwrite: Whether existing `NAME.pem` / `NAME-key.pem` may be replaced. The CA's own files never are.
    ///   - keyGroup: The group that may read the key (mode 0640, set before the key gets its name); nil: the owner
    ///     only (0600). Refused when the group already reads a key of the other role in `outputDirectory`.
    /// - Returns: What was written, with the certificate.
    /// - Throws: ``CertificateAuthorityError`` for an invalid name, address or validity, an expired CA, existing
    ///   files, a key group shared with the other role, or a failed write. Nothing is written unless everything
    ///   checks out.
    public func issue(
        role: CertificateRole,
        name: String,
        dnsNames: [String] = [],
        ipAddresses: [String] = [],
        validity: Validity = .days(defaultLeafValidityDays),
        outputDirectory: String,
        overwrite: Bool = false,
        keyGroup: KeyGroup? = nil
    ) throws(CertificateAuthorityError) -> IssuedCertificate {
        try issue(
            role: role,
            name: name,
            dnsNames: dnsNames,
            ipAddresses: ipAddresses,
            validity: validity,
            outputDirectory: outputDirectory,
            overwrite: overwrite,
            keyGroup: keyGroup,
            now: Date()
        )
    }

    func issue(
        role: CertificateRole,
        name: String,
        dnsNames: [String],
        ipAddresses: [String],
        validity: Validity,
        outputDirectory: String,
        overwrite: Bool,
        keyGroup: KeyGroup? = nil,
        files: (certificate: String, key: String)? = nil,
        now: Date
    ) throws(CertificateAuthorityError) -> IssuedCertificate {
        try NameRules.validateCertificateName(name)
        if role != .daemon, !dnsNames.isEmpty || !ipAddresses.isEmpty {
            throw .extraNamesForAgent
        }
        let allDNSNames = try uniqueDNSNames(name: name, extra: dnsNames)
        let addresses = try uniqueAddresses(ipAddresses)
        try checkIssues(role)
        let (notValidBefore, notValidAfter) = try dates(validity, now: now)

        let certificatePath = files?.certificate ?? SecureFile.path(name + ".pem", in: outputDirectory)
        let privateKeyPath = files?.key ?? SecureFile.path(name + "-key.pem", in: outputDirectory)
        try checkOutputPaths([certificatePath, privateKeyPath], overwrite: overwrite)
        try keyGroup?.checkExclusive(for: role, in: outputDirectory, replacing: privateKeyPath)
        try SecureFile.makeDirectory(outputDirectory, mode: 0o755)

        let key = P256.Signing.PrivateKey()
        let certificate = try makeCertificate(
            role: role, name: name, dnsNames: allDNSNames, addresses: addresses,
            publicKey: Certificate.PublicKey(key.publicKey), notValidBefore: notValidBefore,
            notValidAfter: notValidAfter)
        let chain = try PEMEncoding.encode(chain: [certificate] + issuedChain)

        try SecureFile.writeKeyAndCertificate(
            key: key.pemRepresentation + "\n",
            to: privateKeyPath,
            certificate: chain,
            to: certificatePath,
            replacing: overwrite,
            keyGroup: keyGroup?.id
        )

        return IssuedCertificate(
            role: role,
            name: name,
            certificatePath: certificatePath,
            keyPath: privateKeyPath,
            dnsNames: allDNSNames,
            ipAddresses: addresses.map(\.text),
            certificate: certificate
        )
    }

    /// A certificate for `role` and `name` over `publicKey`, signed by the CA: the profile ``issue(role:name:dnsNames:ipAddresses:validity:outputDirectory:overwrite:keyGroup:)``
    /// describes, whoever made the key (here, or the agent that sent a request).
    func makeCertificate(
        role: CertificateRole, name: String, dnsNames allDNSNames: [String], addresses: [IPAddress],
        publicKey: Certificate.PublicKey, notValidBefore: Date, notValidAfter: Date
    ) throws(CertificateAuthorityError) -> Certificate {
        do {
            let authorityKeyIdentifier =
                try self.certificate.extensions.subjectKeyIdentifier?.keyIdentifier
                ?? SubjectKeyIdentifier(hash: self.certificate.publicKey).keyIdentifier
            let alternativeNames =
                allDNSNames.map { GeneralName.dnsName($0) }
                + addresses.map { GeneralName.ipAddress(ASN1OctetString(contentBytes: $0.bytes[...])) }
            return try Certificate(
                version: .v3,
                serialNumber: .random128(),
                publicKey: publicKey,
                notValidBefore: notValidBefore,
                notValidAfter: notValidAfter,
                issuer: self.certificate.subject,
                subject: try DistinguishedName { CommonName(name) },
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    switch role {
                    case .agent: try ExtendedKeyUsage([.clientAuth])
                    case .daemon: try ExtendedKeyUsage([.serverAuth])
                    case .operator: CertificateRole.operatorExtension
                    }
                    SubjectAlternativeNames(alternativeNames)
                    SubjectKeyIdentifier(hash: publicKey)
                    AuthorityKeyIdentifier(keyIdentifier: authorityKeyIdentifier)
                },
                issuerPrivateKey: privateKey
            )
        } catch {
            throw .signingFailed("\(role.rawValue) certificate", underlying: error)
        }
    }

    /// The name first, then each extra name once; DNS names compare case-insensitively.
    func uniqueDNSNames(name: String, extra: [String]) throws(CertificateAuthorityError) -> [String] {
        var seen: Set<String> = [name.lowercased()]
        var names = [name]
        for dnsName in extra {
            try NameRules.validateDNSName(dnsName)
            if seen.insert(dnsName.lowercased()).inserted { names.append(dnsName) }
        }
        return names
    }

    private func uniqueAddresses(_ strings: [String]) throws(CertificateAuthorityError) -> [IPAddress] {
        var addresses: [IPAddress] = []
        for string in strings {
            guard let address = IPAddress(parsing: string) else { throw .invalidIPAddress(string) }
            if !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }

    /// The validity dates of a certificate valid for `validity` from `now`: backdated by ``clockSkewAllowance``, or
    /// a tenth of `validity` when that is less.
    ///
    /// - Parameter capped: end at the CA's expiry rather than refuse a validity that would outlive it.
    func dates(_ validity: Validity, now: Date, capped: Bool = false) throws(CertificateAuthorityError) -> (Date, Date)
    {
        guard (Self.minimumValiditySeconds...(Self.maximumValidityDays * 86_400)).contains(validity.seconds) else {
            throw .invalidValidity(validity, maximumDays: Self.maximumValidityDays)
        }
        let caExpiry = certificate.notValidAfter
        guard now < caExpiry else {
            throw .caExpired(certificatePath, notValidAfter: DateText.format(caExpiry))
        }
        let start = Self.wholeSeconds(now)
        var end = start.addingTimeInterval(Double(validity.seconds))
        if capped { end = min(end, caExpiry) }
        guard end <= caExpiry else {
            throw .outlivesCA(
                validity,
                expiry: DateText.format(end),
                caExpiry: DateText.format(caExpiry),
                maximumDays: Int(caExpiry.timeIntervalSince(start) / Self.secondsPerDay)
            )
        }
        let backdate = min(Self.clockSkewAllowance, Double(validity.seconds / 10))
        return (start.addingTimeInterval(-backdate), end)
    }

    /// Refuses a role this CA may not issue: an issuing CA for agents (extended key usage clientAuth) issues
    /// agents' certificates only.
    func checkIssues(_ role: CertificateRole) throws(CertificateAuthorityError) {
        guard role != .agent,
            let usage = try? certificate.extensions.extendedKeyUsage,
            !usage.contains(.any)
        else { return }
        if role == .daemon, usage.contains(.serverAuth) { return }
        throw .roleNotIssued(role, by: certificatePath)
    }

    /// Refuses to touch the CA's own files, and any existing file unless overwriting was asked for, before any
    /// key is generated or directory created.
    func checkOutputPaths(_ paths: [String], overwrite: Bool) throws(CertificateAuthorityError) {
        let caFiles = Set([certificatePath, privateKeyPath].compactMap(SecureFile.identity))
        for path in paths {
            if let identity = SecureFile.identity(path), caFiles.contains(identity) {
                throw .wouldOverwriteCA(path)
            }
            if !overwrite, SecureFile.exists(path) {
                throw .fileExists(path)
            }
        }
    }
}
