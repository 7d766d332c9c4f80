import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Enrollment without copying keys: an agent makes its key and a certificate request on its own host
/// (`netpulse-agent request`, PulseAgent's `CertificateRequest`), the operator signs the request on the CA's host
/// (`netpulse ca sign`, here), and only the certificate travels back. The key never leaves the host that uses it.
public enum Enrollment {
    /// The name a request file stands for: `NAME.csr` is NAME's.
    public static func name(ofRequestFile path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        return file.hasSuffix(".csr") ? String(file.dropLast(4)) : file
    }

    /// The requests in `directory` that `netpulse ca sign DIR` signs, in name order: every `NAME.csr` without its
    /// `NAME.pem` in `outputDirectory` (default: `directory`), or every one when `overwrite` asks to sign them again.
    public static func pendingRequests(
        in directory: String, outputDirectory: String? = nil, overwrite: Bool = false
    ) -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".csr") }.sorted()
        return names.map { SecureFile.path($0, in: directory) }.filter { path in
            overwrite
                || !SecureFile.exists(
                    SecureFile.path(name(ofRequestFile: path) + ".pem", in: outputDirectory ?? directory))
        }
    }
}

/// A request signed by ``CertificateAuthority/sign(requestAt:name:validity:outputDirectory:overwrite:)``.
public struct SignedRequest: Sendable {
    public let name: String
    public let certificatePath: String
    public let certificate: Certificate
}

/// Why an agent's renewal was refused, in a line for the daemon's log and the agent's.
public struct RenewalRefusal: Error, Sendable, CustomStringConvertible {
    public let description: String
}

extension CertificateAuthority {
    /// Signs the agent certificate request at `path` (what `netpulse-agent request` writes): checks its
    /// signature (the host holds the key) and that it names `name` and only that, then issues the agent profile of
    /// ``issue(role:name:dnsNames:ipAddresses:validity:outputDirectory:overwrite:keyGroup:)`` over its key and
    /// writes `NAME.pem` (0644, with the issuing CA's certificate after it under an issuing CA) into
    /// `outputDirectory` (default: beside the request).
    ///
    /// - Parameter name: the agent the request must be for; nil: the request file's stem (`web-01.csr`).
    /// - Throws: ``CertificateAuthorityError``: a file that is not a request, a signature that does not verify, a
    ///   name that differs or is not one, an existing certificate without `overwrite`, a failed write.
    public func sign(
        requestAt path: String, name: String? = nil, validity: Validity = .days(defaultLeafValidityDays),
        outputDirectory: String? = nil, overwrite: Bool = false
    ) throws(CertificateAuthorityError) -> SignedRequest {
        try sign(
            requestAt: path, name: name, validity: validity, outputDirectory: outputDirectory,
            overwrite: overwrite, now: Date())
    }

    func sign(
        requestAt path: String, name expected: String?, validity: Validity, outputDirectory: String?,
        overwrite: Bool, now: Date
    ) throws(CertificateAuthorityError) -> SignedRequest {
        let text = try SecureFile.readRequiredText(path)
        let request: CertificateSigningRequest
        do {
            request = try CertificateSigningRequest(pemEncoded: text)
        } catch {
            throw .invalidRequest(path, reason: "it is not a PEM certificate request (\(error))")
        }
        let name = expected ?? Enrollment.name(ofRequestFile: path)
        if let reason = Self.problem(with: request, for: name) { throw .invalidRequest(path, reason: reason) }
        try NameRules.validateCertificateName(name)
        let (notValidBefore, notValidAfter) = try dates(validity, now: now)
        let directory = outputDirectory ?? SecureFile.parentDirectory(of: path)
        let certificatePath = SecureFile.path(name + ".pem", in: directory)
        try checkOutputPaths([certificatePath], overwrite: overwrite)
        try SecureFile.makeDirectory(directory, mode: 0o755)
        let certificate = try makeCertificate(
            role: .agent, name: name, dnsNames: [name], addresses: [], publicKey: request.publicKey,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter)
        let staged = try SecureFile.stage(
            try PEMEncoding.encode(chain: [certificate] + issuedChain), for: certificatePath, mode: 0o644)
        do {
            try staged.commit(replacing: overwrite)
        } catch {
            staged.discard()
            throw error
        }
        return SignedRequest(name: name, certificatePath: certificatePath, certificate: certificate)
    }

    /// The longest request ``renew(requestDER:name:validity:now:)`` reads: a P-256 request for a 64-byte name is
    /// about 300 bytes.
    public static let maximumRequestBytes = 4096

    /// Renews the certificate of the agent `name`, which is connected with its current one: the daemon's side of
    /// renewal (`[enrollment]`). Checks the request as ``sign(requestAt:name:validity:outputDirectory:overwrite:)``
    /// does, and that its key is a P-256 key (what agents make), then issues the agent profile over it.
    ///
    /// - Parameter requestDER: the request as the agent sent it (DER, untrusted: its size, form, signature, name and
    ///   key are all checked before anything is signed).
    /// - Returns: the new certificate, then the certificates between it and the root, DER.
    public func renew(
        requestDER: [UInt8], name: String, validity: Validity, now: Date = Date()
    ) throws(RenewalRefusal) -> [[UInt8]] {
        guard requestDER.count <= Self.maximumRequestBytes else {
            throw RenewalRefusal(
                description: "the request is \(requestDER.count) bytes, more than \(Self.maximumRequestBytes)")
        }
        let request: CertificateSigningRequest
        do {
            request = try CertificateSigningRequest(derEncoded: requestDER)
        } catch {
            throw RenewalRefusal(description: "the request cannot be parsed: \(error)")
        }
        if let reason = Self.problem(with: request, for: name) { throw RenewalRefusal(description: reason) }
        guard P256.Signing.PublicKey(request.publicKey) != nil else {
            throw RenewalRefusal(description: "the request's key is not a P-256 key, as agents make them")
        }
        do {
            try checkIssues(.agent)
            // Near the issuing CA's end, certificates end with it (and are renewed before, at their share).
            let (notValidBefore, notValidAfter) = try dates(validity, now: now, capped: true)
            let certificate = try makeCertificate(
                role: .agent, name: name, dnsNames: [name], addresses: [], publicKey: request.publicKey,
                notValidBefore: notValidBefore, notValidAfter: notValidAfter)
            var chain: [[UInt8]] = []
            for each in [certificate] + issuedChain { chain.append(try PEMEncoding.der(each)) }
            return chain
        } catch {
            throw RenewalRefusal(description: "the daemon cannot sign it: \(error)")
        }
    }

    /// What keeps `request` from being signed for `name`, or nil: a signature that does not verify, or a subject
    /// that is not exactly one common name equal to `name`.
    static func problem(with request: CertificateSigningRequest, for name: String) -> String? {
        guard request.publicKey.isValidSignature(request.signature, for: request) else {
            return "its signature does not verify: it was altered, or made without its key"
        }
        let names = request.subject.lazy.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
            .map { String($0.value) ?? $0.value.description }
        guard names.count == 1, let asked = names.first else {
            return "it must name one agent (one common name); it names \(names.count)"
        }
        guard asked == name else {
            return
                "it asks for the name \(asked.debugDescription), not \(name.debugDescription); an agent's request is named for the agent it is for"
        }
        return nil
    }
}
