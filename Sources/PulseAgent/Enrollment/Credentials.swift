// BoringSSL from swift-nio-ssl, for the reason CertificateRequest.swift gives: reading certificates and making keys
// without growing the agent.
import CNIOBoringSSL
import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The certificate and key the agent connects with: the ones its config names (`[daemon] certificate` and `key`,
/// put in place by the operator), or one it renewed itself over its connection, kept in its state directory
/// (`STATE/certificate/`), since its unit may not write `/etc`.
///
/// A renewed certificate and its key are one file, `current.pem` (mode 0600: the key, then the chain), so that
/// replacing them is one rename: a crash never pairs a key with another key's certificate. A certificate just
/// received is `next.pem` until a connection made with it is welcomed by the daemon; only then does it become
/// `current.pem`, and until then the previous one stays (`docs/operations.md`, "Certificates that renew themselves").
public struct Credentials: Sendable, Hashable {
    /// Where these came from.
    public enum Source: String, Sendable, Hashable {
        /// `[daemon] certificate` and `key`.
        case configured
        /// `STATE/certificate/current.pem`: renewed, and confirmed by a welcome.
        case renewed
        /// `STATE/certificate/next.pem`: renewed, not yet connected with.
        case pending
    }

    public var source: Source
    public var files: TLSFiles
    /// The leaf's validity (Unix seconds).
    public var notBefore: Int64
    public var notAfter: Int64

    /// The moment a share `share` of the certificate's lifetime has passed (Unix milliseconds), plus up to a
    /// twentieth of the lifetime chosen by `name` (the agent's): a fleet enrolled in one day does not renew in one
    /// minute, and each agent's moment stays the same across its reconnects.
    public func renewalDue(share: Double, spreadBy name: String) -> Int64 {
        let lifetime = Double(notAfter - notBefore)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let spread = min(0.05, max(0, (1 - share) / 2)) * Double(hash % 1000) / 1000
        return (notBefore * 1000) + Int64(lifetime * (share + spread) * 1000)
    }

    static func directory(_ config: AgentConfig) -> String { "\(config.stateDirectory)/certificate" }
    static func currentPath(_ config: AgentConfig) -> String { "\(directory(config))/current.pem" }
    static func pendingPath(_ config: AgentConfig) -> String { "\(directory(config))/next.pem" }
    /// A copy of the configured certificate as it was when the agent renewed: while the configured file still says
    /// the same, the renewed certificate replaces it.
    static func replacedPath(_ config: AgentConfig) -> String { "\(directory(config))/replaces.pem" }

    /// The credentials to connect with: one just renewed (`next.pem`) first, to try it; else the renewed one
    /// (`current.pem`), unless the configured certificate has changed since it was renewed (an operator who puts a
    /// new certificate in place, after re-enrolling, wins); else the configured one. Renewed files that cannot be
    /// used are passed over (the configured ones then say what is wrong, if anything).
    ///
    /// Not by the certificates' dates: a renewed certificate may start (backdated) and end before a configured one
    /// made later for longer, and an agent choosing by dates would renew again at every connection.
    static func choose(_ config: AgentConfig) -> Credentials {
        let configured = Credentials.read(config.tls, source: .configured)
        let configuredText = try? FileIO.readBytes(config.tls.certificate)
        let replaced = try? FileIO.readBytes(replacedPath(config))
        for (path, source) in [(pendingPath(config), Source.pending), (currentPath(config), .renewed)] {
            let files = TLSFiles(ca: config.tls.ca, certificate: path, key: path)
            guard let renewed = Credentials.read(files, source: source, agent: config.agentID) else { continue }
            if source == .pending || configured == nil || configuredText == replaced { return renewed }
        }
        return configured
            ?? Credentials(source: .configured, files: config.tls, notBefore: 0, notAfter: 0)
    }

    /// The credentials in `files` when the key is the certificate's (and, for renewed ones, the certificate names
    /// `agent`); nil when anything cannot be read.
    static func read(_ files: TLSFiles, source: Source, agent: String? = nil) -> Credentials? {
        guard let certificate = try? FileIO.readBytes(files.certificate),
            let key = try? FileIO.readBytes(files.key),
            let leaf = Leaf(certificatePEM: certificate, keyPEM: key), leaf.keyMatches,
            agent == nil || leaf.commonName == agent
        else { return nil }
        return Credentials(source: source, files: files, notBefore: leaf.notBefore, notAfter: leaf.notAfter)
    }
}

/// What the agent needs to know of a certificate: its validity, its name and whether a key is its own.
struct Leaf {
    var notBefore: Int64
    var notAfter: Int64
    var commonName: String?
    var keyMatches: Bool

    /// The first certificate of `certificatePEM`, checked against the key in `keyPEM`.
    init?(certificatePEM: [UInt8], keyPEM: [UInt8]?) {
        guard let certificate = Self.readPEM(certificatePEM, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            return nil
        }
        defer { X509_free(certificate) }
        var before: Int64 = 0
        var after: Int64 = 0
        guard ASN1_TIME_to_posix(X509_get0_notBefore(certificate), &before) == 1,
            ASN1_TIME_to_posix(X509_get0_notAfter(certificate), &after) == 1
        else { return nil }
        notBefore = before
        notAfter = after
        var name = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, &name, 256)
        commonName =
            length > 0 ? String(decoding: name.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        if let keyPEM, let key = Self.readPEM(keyPEM, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) {
            keyMatches = X509_check_private_key(certificate, key) == 1
            EVP_PKEY_free(key)
        } else {
            keyMatches = false
        }
    }

    /// The first PEM block `read` finds in `bytes` (it passes over blocks of other kinds).
    static func readPEM<T>(_ bytes: [UInt8], _ read: (OpaquePointer?) -> T?) -> T? {
        bytes.withUnsafeBytes { buffer -> T? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, buffer.count) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
    }
}

extension CertificateRequest {
    /// A new key and a request for `name` over it, for renewal: the key as PEM (kept until the certificate comes
    /// back) and the request as DER (what `RENEW` carries).
    public static func renewal(name: String) throws(Failure) -> (keyPEM: String, requestDER: [UInt8]) {
        let key = try newKey()
        defer { EVP_PKEY_free(key) }
        let keyPEM = try pem(key: key)
        let requestPEM = try request(name: name, key: key)
        guard let request = Leaf.readPEM(Array(requestPEM.utf8), { PEM_read_bio_X509_REQ($0, nil, nil, nil) }) else {
            throw Failure(description: "reading back the request failed")
        }
        defer { X509_REQ_free(request) }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_REQ(request, &output)
        guard length > 0, let output else { throw Failure(description: "encoding the request failed") }
        defer { OPENSSL_free(output) }
        return (keyPEM, Array(UnsafeBufferPointer(start: output, count: Int(length))))
    }

    /// The file a renewed certificate is kept in: `keyPEM`, then the chain (DER, leaf first) as PEM, once the chain is
    /// checked to be for that key and for the agent `name`.
    public static func renewedFile(
        keyPEM: String, chain: [[UInt8]], name: String
    ) throws(Failure) -> (text: String, notBefore: Int64, notAfter: Int64) {
        var text = keyPEM
        for der in chain {
            let certificate = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var pointer = buffer.baseAddress
                return d2i_X509(nil, &pointer, buffer.count)
            }
            guard let certificate else {
                throw Failure(description: "the daemon sent a certificate that cannot be read")
            }
            defer { X509_free(certificate) }
            text += try written("writing the certificate") { bio in PEM_write_bio_X509(bio, certificate) }
        }
        guard let leaf = Leaf(certificatePEM: Array(text.utf8), keyPEM: Array(keyPEM.utf8)) else {
            throw Failure(description: "the daemon's certificate cannot be read")
        }
        guard leaf.keyMatches else { throw Failure(description: "the daemon's certificate is not for the new key") }
        guard leaf.commonName == name else {
            throw Failure(
                description:
                    "the daemon's certificate names \(leaf.commonName.map { "'\($0)'" } ?? "nobody"), not '\(name)'")
        }
        return (text, leaf.notBefore, leaf.notAfter)
    }
}
