import SwiftASN1
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``CertificateAuthority/renew(certificateAt:keyAt:after:force:now:)`` did.
public enum RenewalOutcome: Sendable {
    /// The certificate has lived less than the share asked: nothing was written.
    case notDue(renewsAfter: Date, expires: Date)
    /// A new key and certificate replaced the old ones.
    case renewed(IssuedCertificate)
}

extension CertificateAuthority {
    /// Renews a certificate this CA issued, in place, once it has lived `share` of its lifetime: a new key and a
    /// certificate of the same role, names and lifetime, written over the old files (the key keeping its group), as
    /// `netpulse ca renew` does for the daemon's own certificate from a timer. Agents renew theirs over their
    /// connections instead.
    ///
    /// - Parameters:
    ///   - path: the certificate (`netpulsed.pem`).
    ///   - keyPath: its key; nil: `NAME-key.pem` beside `NAME.pem`.
    ///   - share: the share of the lifetime after which it is renewed (two thirds: a third of it is left to notice a
    ///     renewal that failed).
    ///   - force: renew whatever its age.
    /// - Throws: ``CertificateAuthorityError``: a file that cannot be read, a certificate this CA did not issue or
    ///   of no Netpulse role, a failed write.
    public func renew(
        certificateAt path: String, keyAt keyPath: String? = nil, after share: Double = 0.67, force: Bool = false,
        now: Date = Date()
    ) throws(CertificateAuthorityError) -> RenewalOutcome {
        let text = try SecureFile.readRequiredText(path)
        let leaf = try PEMEncoding.decodeChain(text, path: path).certificates[0]
        guard certificate.issued(leaf) else {
            throw .invalidCertificatePEM(
                path, reason: "it was not issued by the CA in \(directory); renew it with the CA that issued it (--dir)"
            )
        }
        guard let role = CertificateRole(of: leaf), let name = CertificateRole.commonName(of: leaf) else {
            throw .invalidCertificatePEM(path, reason: "it is not a Netpulse daemon, agent or operator certificate")
        }
        let lifetime = leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore)
        let due = leaf.notValidBefore.addingTimeInterval(lifetime * share)
        if !force, now < due { return .notDue(renewsAfter: due, expires: leaf.notValidAfter) }

        var dnsNames: [String] = []
        var addresses: [String] = []
        if let names = try? leaf.extensions.subjectAlternativeNames {
            for alternative in names {
                switch alternative {
                case .dnsName(let dns) where dns.lowercased() != name.lowercased(): dnsNames.append(dns)
                case .ipAddress(let octets):
                    if let address = IPAddress(bytes: Array(octets.bytes)) { addresses.append(address.text) }
                default: break
                }
            }
        }
        let key = keyPath ?? Self.keyPath(forCertificate: path)
        // The key keeps the group that reads it (the daemon's), or stays the owner's alone.
        var information = stat()
        let keyGroup =
            stat(key, &information) == 0 && information.st_mode & 0o040 != 0
            ? KeyGroup(name: "gid \(information.st_gid)", id: UInt32(information.st_gid)) : nil
        return .renewed(
            try issue(
                role: role, name: name, dnsNames: role == .daemon ? dnsNames : [],
                ipAddresses: role == .daemon ? addresses : [], validity: Self.validity(ofLifetime: lifetime),
                outputDirectory: SecureFile.parentDirectory(of: path), overwrite: true, keyGroup: keyGroup,
                files: (path, key), now: now))
    }

    /// `NAME-key.pem` for `NAME.pem`.
    static func keyPath(forCertificate path: String) -> String {
        (path.hasSuffix(".pem") ? String(path.dropLast(4)) : path) + "-key.pem"
    }

    /// The validity a certificate of `lifetime` seconds (from its backdated start to its end) was issued for: the
    /// lifetime less the backdating ``dates(_:now:capped:)`` added, an hour or a tenth.
    static func validity(ofLifetime lifetime: Double) -> Validity {
        let seconds = lifetime > 11 * clockSkewAllowance ? lifetime - clockSkewAllowance : lifetime / 1.1
        return Validity(seconds: max(minimumValiditySeconds, Int(seconds.rounded())))
    }
}
