import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

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

    func connectionConfiguration(tls context: NIOSSLContext?) -> PostgresConnection.Configuration {
        let mode: PostgresConnection.Configuration.TLS =
            switch (tls.mode, context) {
            case (.disable, _), (_, nil): .disable
            case (.prefer, let context?): .prefer(context)
            case (_, let context?): .require(context)
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: mode)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
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

    /// Reads and loads the files named, as a connection would (for `netpulse check-config`).
    /// - Throws: ``StoreError/unusable(_:)`` naming a file that cannot be read or used.
    public func validate() throws { _ = try context() }

    /// The client context for the mode (nil for `disable`).
    /// - Throws: ``StoreError/unusable(_:)`` naming a file that cannot be read or used.
    func context() throws -> NIOSSLContext? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        switch mode {
        case .disable: return nil
        case .prefer: configuration.certificateVerification = .none
        case .require: configuration.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        for (parameter, path) in [("sslrootcert", rootCertificate), ("sslcert", certificate), ("sslkey", key)] {
            guard let path else { continue }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw StoreError.unusable("cannot read \(path) (\(parameter) of [store] postgresql)")
            }
        }
        do {
            if let rootCertificate { configuration.trustRoots = .file(rootCertificate) }
            if let certificate, let key {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
            return try NIOSSLContext(configuration: configuration)
        } catch {
            let files = [rootCertificate, certificate, key].compactMap { $0 }.joined(separator: ", ")
            throw StoreError.unusable("cannot use the TLS files of [store] postgresql (\(files)): \(error)")
        }
    }
}

/// One connection used from one thread at a time that may block (a store's writer thread): each query waits for its
/// answer. Never used on an event loop.
final class PostgresSession: @unchecked Sendable {
    let location: PostgresLocation
    let logger: Logger
    private var connection: PostgresConnection?
    /// The connection a transaction began on: a statement never goes to another (a reconnect in the middle would
    /// run the rest of the transaction's statements on their own, committed one by one).
    private var transactionConnection: PostgresConnection?
    /// How many connections this session has opened: a new one may reach another server than the last (a
    /// restart, a failover to a replica), which the store's writer must not trust its caches across.
    private(set) var connections = 0

    init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// The open connection, opened again if it was lost (the server restarted, the network failed).
    func open() throws -> PostgresConnection {
        if let transactionConnection {
            guard !transactionConnection.isClosed else {
                throw StoreError.cannotWrite("\(location): the connection was lost in the middle of a transaction")
            }
            return transactionConnection
        }
        if let connection, !connection.isClosed { return connection }
        // The TLS files are read at each connection, so certificates renewed in place apply from the next one.
        let tls = try location.tls.context()
        do {
            let connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(),
                configuration: location.connectionConfiguration(tls: tls), id: 1, logger: logger
            ).wait()
            self.connection = connection
            connections += 1
            return connection
        } catch {
            throw PostgresErrors.describe(error, location: location)
        }
    }

    @discardableResult
    func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        let connection = try open()
        do {
            return try connection.query(query, logger: logger).wait().rows
        } catch {
            throw PostgresErrors.describe(error, location: location)
        }
    }

    func execute(_ sql: String) throws {
        try query(PostgresQuery(unsafeSQL: sql))
    }

    /// In a write transaction: the server ends this session if the transaction sits idle `milliseconds` (a process
    /// frozen mid-transaction must not hold the rows it locked for ever).
    func limitIdle(_ milliseconds: Int64) throws {
        try execute("SET LOCAL idle_in_transaction_session_timeout = \(milliseconds)")
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws (and the connection
    /// dropped when the rollback itself fails, so the next transaction starts on a clean one).
    func transaction<Result>(_ begin: String = "BEGIN", _ body: () throws -> Result) throws -> Result {
        try execute(begin)
        transactionConnection = connection
        do {
            let result = try body()
            try execute("COMMIT")
            transactionConnection = nil
            return result
        } catch {
            do { try execute("ROLLBACK") } catch { close() }
            transactionConnection = nil
            throw error
        }
    }

    func close() {
        try? connection?.close().wait()
        connection = nil
        transactionConnection = nil
    }

    /// A session dropped without ``close()`` (a store nobody shut down) closes its connection in the background,
    /// which stays alive until it is closed.
    deinit {
        if let connection, !connection.isClosed {
            connection.close().whenComplete { _ in _ = connection }
        }
    }
}

/// Sessions for everything but ingest (reads, and the short writes of billing, remote write and alerts), each used
/// by one blocking call at a time on a thread of Dispatch's pool, never on an event loop or a task's executor.
final class PostgresSessions: Sendable {
    let location: PostgresLocation
    let logger: Logger
    let idleWriteTimeout: Int64
    private let idle = Mutex<[PostgresSession]>([])
    /// Sessions kept open between calls (more are opened when calls overlap, and closed after).
    static let kept = 4

    init(location: PostgresLocation, logger: Logger, idleWriteTimeout: Int64) {
        self.location = location
        self.logger = logger
        self.idleWriteTimeout = idleWriteTimeout
    }

    /// Runs `body` with a session, in a transaction begun by `begin` (nil: none).
    func run<Value: Sendable>(
        _ begin: String? = nil, _ body: @escaping @Sendable (PostgresSession) throws -> Value
    ) async throws -> Value {
        let session =
            idle.withLock { $0.popLast() } ?? PostgresSession(location: location, logger: logger)
        let value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        guard let begin else { return try body(session) }
                        return try session.transaction(begin) { try body(session) }
                    })
            }
        }
        let closing = idle.withLock { idle -> Bool in
            guard idle.count < Self.kept else { return true }
            idle.append(session)
            return false
        }
        if closing { DispatchQueue.global().async { session.close() } }
        return value
    }

    /// A read of one consistent snapshot.
    func read<Value: Sendable>(_ body: @escaping @Sendable (PostgresSession) throws -> Value) async throws -> Value {
        try await run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    /// A write transaction, ended by the server if it sits idle too long (``PostgresSession/limitIdle(_:)``).
    @discardableResult
    func write<Value: Sendable>(_ body: @escaping @Sendable (PostgresSession) throws -> Value) async throws -> Value {
        let timeout = idleWriteTimeout
        return try await run("BEGIN") { session in
            try session.limitIdle(timeout)
            return try body(session)
        }
    }

    func close() {
        let sessions = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        DispatchQueue.global().async { for session in sessions { session.close() } }
    }
}

/// PostgreSQL's errors in the store's terms.
enum PostgresErrors {
    /// ``StoreError/cannotWrite(_:)`` for a server that cannot be reached or went away (the same write may succeed
    /// later), the server's own message for the others.
    static func describe(_ error: any Error, location: PostgresLocation) -> any Error {
        if error is StoreError { return error }
        guard let error = error as? PSQLError else {
            return StoreError.cannotWrite("\(location): \(error)")
        }
        if let message = error.serverInfo?[.message] {
            let code = error.serverInfo?[.sqlState] ?? ""
            // Class 08 (connection), 53 (resources: disk full, too many connections), 57 (shut down, cancelled),
            // 40 (serialization failure, deadlock): the same transaction may succeed when tried again.
            if ["08", "53", "57", "40"].contains(String(code.prefix(2))) {
                return StoreError.cannotWrite("\(location): \(message) (SQLSTATE \(code))")
            }
            return PostgresServerError(description: "\(location): \(message) (SQLSTATE \(code))")
        }
        if error.code == .sslUnsupported {
            return StoreError.cannotWrite(
                "\(location): the server does not offer TLS, which sslmode=\(location.tls.mode.rawValue) requires")
        }
        // A failed TLS handshake (an untrusted or misnamed certificate) says why in the underlying error.
        let reason = error.underlying.map { "\(error.code): \($0)" } ?? "\(error.code)"
        return StoreError.cannotWrite("\(location): cannot reach the server: \(reason)")
    }
}

/// An error the server reported for a statement (not a lost connection): what it said, and its SQLSTATE.
struct PostgresServerError: Error, CustomStringConvertible {
    var description: String
}
