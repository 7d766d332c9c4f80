import Foundation

/// Where a PostgreSQL store lives, from `[store] postgresql` (a `postgresql://` URL, as libpq takes it) and an optional
/// password file.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    public var password: String?
    public var tls: PostgresTLS

    public init(
        host: String, port: Int = 5432, user: String, database: String, password: String? = nil,
        tls: PostgresTLS = PostgresTLS()
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.password = password
        self.tls = tls
    }

    /// Reads `postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…]` (also
    /// `postgres://`); the parameters are libpq's (see ``PostgresTLS``).
    /// - Throws: a message saying which part is wrong.
    public init(url text: String) throws {
        guard let url = URLComponents(string: text), let scheme = url.scheme,
            scheme == "postgresql" || scheme == "postgres"
        else {
            throw StoreError.unusable("\(text) is not a postgresql:// URL (postgresql://USER@HOST:PORT/DATABASE)")
        }
        guard let host = url.host, !host.isEmpty else {
            throw StoreError.unusable("\(text) names no host (postgresql://USER@HOST:PORT/DATABASE)")
        }
        guard let user = url.user, !user.isEmpty else {
            throw StoreError.unusable("\(text) names no user (postgresql://USER@HOST:PORT/DATABASE)")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        guard !database.isEmpty, !database.contains("/") else {
            throw StoreError.unusable("\(text) names no database (postgresql://USER@HOST:PORT/DATABASE)")
        }
        var tls = PostgresTLS()
        for item in url.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = PostgresTLS.Mode(rawValue: value) else {
                    throw StoreError.unusable(
                        "\(text): sslmode=\(value) is not one of \(PostgresTLS.Mode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                tls.mode = mode
            case "sslrootcert": tls.rootCertificate = value
            case "sslcert": tls.certificate = value
            case "sslkey": tls.key = value
            default:
                throw StoreError.unusable(
                    "\(text): unknown parameter \(item.name) (netpulse takes sslmode, sslrootcert, sslcert and sslkey)")
            }
        }
        guard (tls.certificate == nil) == (tls.key == nil) else {
            throw StoreError.unusable("\(text): sslcert and sslkey go together (a client certificate and its key)")
        }
        self.init(
            host: host, port: url.port ?? 5432, user: user, database: database, password: url.password, tls: tls)
    }

    /// The URL without its password, for logs and errors.
    public var description: String {
        "postgresql://\(user)@\(host):\(port)/\(database)"
            + (tls.mode == PostgresTLS().mode ? "" : "?sslmode=\(tls.mode.rawValue)")
    }
}

/// How the connection to PostgreSQL is encrypted, as libpq's `sslmode`, `sslrootcert`, `sslcert` and `sslkey` say
/// (the URL parameters a PostgreSQL operator already writes):
///
/// - `disable`: never encrypted.
/// - `prefer` (the default, as libpq's): encrypted when the server offers it, without checking its certificate;
///   guards against eavesdropping, not against an impostor.
/// - `require`: encrypted or no connection, the certificate not checked, unless `sslrootcert` is given, when it is
///   checked as `verify-ca` does (libpq's rule).
/// - `verify-ca`: encrypted, the server's certificate signed by `sslrootcert` (or a root the system trusts).
/// - `verify-full`: as `verify-ca`, and the certificate names the host of the URL (its DNS name or IP address), or
///   the IP address connected to (swift-nio-ssl's rule: a certificate for the server's address passes for any name
///   that resolves to it).
///
/// `sslcert` and `sslkey` give a client certificate, for servers that authenticate clients by certificate
/// (`hostssl … cert` in pg_hba.conf). Debian's OpenSSL 3 underneath, TLS 1.2 at least.
public struct PostgresTLS: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public var mode: Mode
    public var rootCertificate: String?
    public var certificate: String?
    public var key: String?

    public init(mode: Mode = .prefer, rootCertificate: String? = nil, certificate: String? = nil, key: String? = nil) {
        self.mode = mode
        self.rootCertificate = rootCertificate
        self.certificate = certificate
        self.key = key
    }

    /// What the files of the parameters are now (path, size, modification time, inode), for telling renewed ones
    /// from those a pool's connections were made with.
    package func files() -> [String] {
        [rootCertificate, certificate, key].compactMap { $0 }.map { path in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return path }
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
            return "\(path) \(size) \(modified) \(inode)"
        }
    }
}
