import NIOSSL

/// The certificate files a process needs for mutual TLS.
public struct TLSFiles: Sendable, Hashable {
    /// The fleet CA certificate: the daemon trusts agents chained to it, agents trust the daemon chained to it.
    public var ca: String
    /// This process's own certificate (PEM; the leaf first, then any intermediates).
    public var certificate: String
    /// The private key of ``certificate`` (PEM).
    public var key: String

    public init(ca: String, certificate: String, key: String) {
        self.ca = ca
        self.certificate = certificate
        self.key = key
    }
}

/// A certificate or key file that cannot be used, and what to do about it.
public struct TLSSetupError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var problem: String

    public var description: String {
        "\(path): \(problem) (make certificates with `netpulse ca init` and `netpulse ca issue`; see docs/operations.md)"
    }
}

/// Builds swift-nio-ssl configurations for Netpulse's mutual TLS: TLS 1.2 at least (1.3 preferred by both sides),
/// client certificates required and chained to the fleet CA, server names verified by agents.
///
/// Files are loaded here, eagerly, so a bad file is reported at start-up (or reload) with its path, not at the
/// first handshake.
public enum TLSSetup {
    /// The daemon side: presents its certificate and requires a client certificate chained to the CA. Agents are
    /// identified by their certificate, not by host name, so client host names are not checked.
    public static func server(_ files: TLSFiles) throws(TLSSetupError) -> TLSConfiguration {
        let (chain, key, roots) = try load(files)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = strongTLS12Suites
        configuration.certificateVerification = .noHostnameVerification
        configuration.trustRoots = .certificates(roots)
        return configuration
    }

    /// The agent side: presents its certificate and verifies that the daemon's is chained to the CA and names
    /// the expected server.
    public static func client(_ files: TLSFiles) throws(TLSSetupError) -> TLSConfiguration {
        let (chain, key, roots) = try load(files)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = strongTLS12Suites
        configuration.certificateVerification = .fullVerification
        configuration.trustRoots = .certificates(roots)
        configuration.certificateChain = chain.map { .certificate($0) }
        configuration.privateKey = .privateKey(key)
        return configuration
    }

    /// TLS 1.2 suites: forward secrecy (ECDHE) and authenticated encryption (GCM, ChaCha20-Poly1305) only, for
    /// ECDSA certificates (what `netpulse ca` issues) and RSA ones. swift-nio-ssl's default list also has CBC
    /// suites with SHA-1 MACs and static RSA key exchange, which scanners rightly flag and Netpulse's peers never
    /// need: both ends are Netpulse. TLS 1.3's suites are all of this kind and are not configured here.
    static let strongTLS12Suites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    private static func load(
        _ files: TLSFiles
    ) throws(TLSSetupError) -> ([NIOSSLCertificate], NIOSSLPrivateKey, [NIOSSLCertificate]) {
        let chain = try certificates(files.certificate, role: "certificate")
        let roots = try certificates(files.ca, role: "CA certificate")
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: try FileIO.readBytes(files.key), format: .pem)
        } catch let error as FileIO.Failure {
            throw TLSSetupError(path: files.key, problem: "cannot read the private key: \(error)")
        } catch {
            throw TLSSetupError(path: files.key, problem: "is not a PEM private key (\(error))")
        }
        return (chain, key, roots)
    }

    private static func certificates(_ path: String, role: String) throws(TLSSetupError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(try FileIO.readBytes(path))
        } catch let error as FileIO.Failure {
            throw TLSSetupError(path: path, problem: "cannot read the \(role): \(error)")
        } catch {
            throw TLSSetupError(path: path, problem: "is not a PEM \(role) (\(error))")
        }
        guard !certificates.isEmpty else { throw TLSSetupError(path: path, problem: "holds no PEM \(role)") }
        return certificates
    }
}
