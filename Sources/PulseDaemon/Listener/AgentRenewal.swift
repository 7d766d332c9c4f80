import PulseCertificates
import PulseSettings
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's side of certificate renewal (`[enrollment]`): the issuing CA it signs agents' new certificates with,
/// over their connections (`RENEW`, `docs/protocol.md`, "Renewal").
///
/// Loaded with the TLS files, at start and on reload, and checked then against the root the daemon trusts agents by
/// (`[tls] ca`): a certificate this CA signs must pass the daemon's own handshake check, or renewing would cut agents
/// off instead of keeping them connected.
struct AgentRenewal: Sendable {
    let authority: CertificateAuthority
    let validity: Validity

    /// The issuing CA of `settings`, checked against `roots`; nil when its directory holds no `ca.pem`.
    /// - Throws: ``DaemonError`` naming `[enrollment]` and what to do.
    static func load(_ settings: EnrollmentSettings, roots: [Certificate]) throws -> AgentRenewal? {
        let authority: CertificateAuthority
        do {
            authority = try CertificateAuthority.load(directory: settings.directory)
        } catch {
            if error.code == .missingFile, error.path?.hasSuffix("/\(CertificateAuthority.certificateFileName)") == true
            {
                return nil
            }
            let advice =
                error.code == .unreadableFile
                ? "; the daemon reads the issuing CA's key through its group: chgrp netpulse-daemon \(error.path ?? "ca-key.pem") && chmod 0640 \(error.path ?? "ca-key.pem")"
                : ""
            throw DaemonError("[enrollment] directory: \(error)\(advice)")
        }
        let issuing = authority.certificate
        let top = authority.chain.last ?? issuing
        guard let root = roots.first(where: { $0.issued(top) }) else {
            throw DaemonError(
                "[enrollment] directory: the CA in \(authority.certificatePath) is not signed by the fleet's root in [tls] ca, so the daemon would refuse every certificate it renews; make the issuing CA under that root (netpulse ca issuing --dir /etc/netpulse/ca)"
            )
        }
        if case .isCertificateAuthority(maxPathLength: 0) = try? root.extensions.basicConstraints {
            throw DaemonError(
                "[enrollment] directory: the root in [tls] ca allows no CA below it (path length 0), so the daemon would refuse every certificate \(authority.certificatePath) signs; install the ca.pem that `netpulse ca issuing` signed again as [tls] ca"
            )
        }
        return AgentRenewal(authority: authority, validity: Validity(seconds: Int(settings.validity / 1000)))
    }

    /// Things to say at load: an issuing CA that cannot give a whole validity any more, an exposed key.
    var warnings: [String] {
        var lines = authority.warnings.map { "[enrollment] \($0)" }
        let left = authority.notValidAfter.timeIntervalSinceNow
        if left < Double(validity.seconds) {
            lines.append(
                "[enrollment] the issuing CA \(authority.certificatePath) expires on \(DateText.format(authority.notValidAfter)) (sooner than a renewed certificate's \(validity)): renewed certificates end with it, ever sooner; replace it (netpulse ca issuing) and point [enrollment] at the new one"
            )
        }
        return lines
    }

    /// The agent `agent`'s new certificate chain (DER, leaf first) for its request, or why not.
    func renew(agent: String, request: [UInt8]) -> Result<[[UInt8]], RenewalRefusal> {
        Result { () throws(RenewalRefusal) in
            try authority.renew(requestDER: request, name: agent, validity: validity)
        }
    }
}
