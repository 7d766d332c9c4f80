import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
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

    public init(host: String, port: Int = 5432, user: String, database: String, password: String? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.password = password
    }

    /// Reads `postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (also `postgres://`).
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
        self.init(
            host: host, port: url.port ?? 5432, user: user, database: database, password: url.password)
    }

    /// The URL without its password, for logs and errors.
    public var description: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

    var connectionConfiguration: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
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
        do {
            let connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: location.connectionConfiguration,
                id: 1, logger: logger
            ).wait()
            self.connection = connection
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
        return StoreError.cannotWrite("\(location): cannot reach the server: \(error.code)")
    }
}

/// An error the server reported for a statement (not a lost connection): what it said, and its SQLSTATE.
struct PostgresServerError: Error, CustomStringConvertible {
    var description: String
}
