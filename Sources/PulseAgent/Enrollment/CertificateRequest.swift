// The BoringSSL that swift-nio-ssl builds into every program using it (the agent's TLS). It is not one of that
// package's products, so no other Netpulse module uses it; here it is the only way to make a key and a request
// without growing the agent: swift-crypto and swift-certificates bring Foundation and its ICU data (the agent's text
// went from 11.6 to 26.9 MB and its data from 2.2 to 39.6 MB when they were tried), and linking the system's
// libcrypto would add a library to the two the agent's package may depend on (libc and libsystemd).
import CNIOBoringSSL
import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Enrollment without copying keys, the agent's side: its key made on its own host and a certificate request for
/// its name (`netpulse-agent request`), which `netpulse ca sign` turns into its certificate on the CA's host.
public enum CertificateRequest {
    /// What ``write(name:keyPath:requestPath:keyGroup:)`` did.
    public struct Written: Sendable {
        public let requestPath: String
        /// Whether the key was made now (false: the one already at the path was used).
        public let keyCreated: Bool
    }

    /// A key or request that could not be made or written, and where.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Writes a request for the agent `name` to `requestPath` (PEM, 0644), over the key at `keyPath`: the P-256 key
    /// there if there is one (a request made again), else a new one written there first (0600, or 0640 and
    /// readable by group `keyGroup`). The request names the agent (its subject's common name) and nothing else.
    public static func write(
        name: String, keyPath: String, requestPath: String, keyGroup: gid_t? = nil
    ) throws(Failure) -> Written {
        var created = false
        let key: OpaquePointer
        if FileIO.exists(keyPath) {
            let text: String
            do {
                text = try FileIO.readString(keyPath)
            } catch {
                throw Failure(description: "\(keyPath): cannot read the key: \(error)")
            }
            key = try readKey(text, path: keyPath)
        } else {
            key = try newKey()
            do {
                try FileIO.createDirectory(FileIO.parentDirectory(keyPath), mode: 0o755)
                try FileIO.writeAtomically(keyPath, Array(try pem(key: key).utf8), mode: 0o600)
            } catch {
                EVP_PKEY_free(key)
                throw Failure(description: "\(keyPath): cannot write the key: \(error)")
            }
            // Readable by the agents' group only once it is in place, mode 0600 until then.
            if let keyGroup, chown(keyPath, uid_t.max, keyGroup) != 0 || chmod(keyPath, 0o640) != 0 {
                let reason = String(cString: strerror(errno))
                EVP_PKEY_free(key)
                throw Failure(description: "\(keyPath): cannot give the key to its group: \(reason)")
            }
            created = true
        }
        defer { EVP_PKEY_free(key) }
        let text = try request(name: name, key: key)
        do {
            try FileIO.writeAtomically(requestPath, Array(text.utf8), mode: 0o644)
        } catch {
            throw Failure(description: "\(requestPath): cannot write the request: \(error)")
        }
        return Written(requestPath: requestPath, keyCreated: created)
    }

    /// A new P-256 key (the curve `netpulse ca` uses throughout).
    static func newKey() throws(Failure) -> OpaquePointer {
        guard let ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1) else { throw failure("making a key") }
        guard EC_KEY_generate_key(ec) == 1, let key = EVP_PKEY_new() else {
            EC_KEY_free(ec)
            throw failure("making a key")
        }
        guard EVP_PKEY_assign_EC_KEY(key, ec) == 1 else {
            EC_KEY_free(ec)
            EVP_PKEY_free(key)
            throw failure("making a key")
        }
        return key
    }

    /// The P-256 key in `text` (PEM).
    static func readKey(_ text: String, path: String) throws(Failure) -> OpaquePointer {
        let bytes = Array(text.utf8)
        let key = bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, buffer.count) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { throw Failure(description: "\(path): not a PEM private key") }
        guard EVP_PKEY_id(key) == EVP_PKEY_EC, let ec = EVP_PKEY_get0_EC_KEY(key),
            EC_GROUP_get_curve_name(EC_KEY_get0_group(ec)) == NID_X9_62_prime256v1
        else {
            EVP_PKEY_free(key)
            throw Failure(
                description: "\(path): not a P-256 key, as Netpulse makes them; move it away and a new one is made")
        }
        return key
    }

    /// `key` as PKCS#8 PEM.
    static func pem(key: OpaquePointer) throws(Failure) -> String {
        try written("writing the key") { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }

    /// A PEM certificate request for `name` signed by `key` (ECDSA with SHA-256).
    static func request(name: String, key: OpaquePointer) throws(Failure) -> String {
        guard let request = X509_REQ_new() else { throw failure("making the request") }
        defer { X509_REQ_free(request) }
        guard let subject = X509_NAME_new() else { throw failure("making the request") }
        defer { X509_NAME_free(subject) }
        let bytes = Array(name.utf8)
        guard
            X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, bytes, ossl_ssize_t(bytes.count), -1, 0) == 1,
            X509_REQ_set_version(request, Int(X509_REQ_VERSION_1)) == 1,
            X509_REQ_set_subject_name(request, subject) == 1, X509_REQ_set_pubkey(request, key) == 1,
            X509_REQ_sign(request, key, EVP_sha256()) > 0
        else { throw failure("signing the request") }
        return try written("writing the request") { bio in PEM_write_bio_X509_REQ(bio, request) }
    }

    /// What `write` puts into a memory BIO, as text.
    static func written(_ what: String, _ write: (OpaquePointer) -> Int32) throws(Failure) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure(what) }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure(what) }
        var contents: UnsafePointer<UInt8>?
        var length = 0
        guard BIO_mem_contents(bio, &contents, &length) == 1, let contents else { throw failure(what) }
        return String(decoding: UnsafeBufferPointer(start: contents, count: length), as: UTF8.self)
    }

    /// BoringSSL's last error, for `what`.
    private static func failure(_ what: String) -> Failure {
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(ERR_get_error(), &text, text.count)
        let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Failure(description: "\(what) failed: \(message)")
    }
}
