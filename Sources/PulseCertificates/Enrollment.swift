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
}

/// A request signed by ``CertificateAuthority/sign(requestAt:name:validityDays:outputDirectory:overwrite:)``.
public struct SignedRequest: Sendable {
    public let name: String
    public let certificatePath: String
    public let certificate: Certificate
}

extension CertificateAuthority {
    /// Signs the agent certificate request at `path` (what `netpulse-agent request` writes): checks its
    /// signature (the host holds the key) and that it names `name` and only that, then issues the agent profile of
    /// ``issue(role:name:dnsNames:ipAddresses:validityDays:outputDirectory:overwrite:keyGroup:)`` over its key and
    /// writes `NAME.pem` (0644) into `outputDirectory` (default: beside the request).
    ///
    /// - Parameter name: the agent the request must be for; nil: the request file's stem (`web-01.csr`).
    /// - Throws: ``CertificateAuthorityError``: a file that is not a request, a signature that does not verify, a
    ///   name that differs or is not one, an existing certificate without `overwrite`, a failed write.
    public func sign(
        requestAt path: String, name: String? = nil, validityDays: Int = defaultLeafValidityDays,
        outputDirectory: String? = nil, overwrite: Bool = false
    ) throws(CertificateAuthorityError) -> SignedRequest {
        try sign(
            requestAt: path, name: name, validityDays: validityDays, outputDirectory: outputDirectory,
            overwrite: overwrite, now: Date())
    }

    func sign(
        requestAt path: String, name expected: String?, validityDays: Int, outputDirectory: String?, overwrite: Bool,
        now: Date
    ) throws(CertificateAuthorityError) -> SignedRequest {
        let text: String
        switch SecureFile.readText(path) {
        case .success(let read): text = read
        case .failure(.missing): throw .unreadable(path, reason: "there is no such file")
        case .failure(.unreadable(let reason)): throw .unreadable(path, reason: reason)
        }
        let request: CertificateSigningRequest
        do {
            request = try CertificateSigningRequest(pemEncoded: text)
        } catch {
            throw .invalidRequest(path, reason: "it is not a PEM certificate request (\(error))")
        }
        guard request.publicKey.isValidSignature(request.signature, for: request) else {
            throw .invalidRequest(
                path, reason: "its signature does not verify: it was altered, or made without its key")
        }
        let names = request.subject.lazy.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
            .map { String($0.value) ?? $0.value.description }
        guard names.count == 1, let asked = names.first else {
            throw .invalidRequest(path, reason: "it must name one agent (one common name); it names \(names.count)")
        }
        let name = expected ?? Enrollment.name(ofRequestFile: path)
        guard asked == name else {
            throw .invalidRequest(
                path,
                reason:
                    "it asks for the name \(asked.debugDescription), not \(name.debugDescription); an agent's request is named for the agent it is for"
            )
        }
        try NameRules.validateCertificateName(name)
        let (notValidBefore, notValidAfter) = try validity(days: validityDays, now: now)
        let directory = outputDirectory ?? SecureFile.parentDirectory(of: path)
        let certificatePath = SecureFile.path(name + ".pem", in: directory)
        try checkOutputPaths([certificatePath], overwrite: overwrite)
        try SecureFile.makeDirectory(directory, mode: 0o755)
        let certificate = try makeCertificate(
            role: .agent, name: name, dnsNames: [name], addresses: [], publicKey: request.publicKey,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter)
        let staged = try SecureFile.stage(try PEMEncoding.encode(certificate).pem, for: certificatePath, mode: 0o644)
        do {
            try staged.commit(replacing: overwrite)
        } catch {
            staged.discard()
            throw error
        }
        return SignedRequest(name: name, certificatePath: certificatePath, certificate: certificate)
    }
}
