import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import PulseStore
import Synchronization

/// One connection of a ``PostgresPool``, lent for one call: statements run in order on it, and PostgreSQL's errors
/// come out in the store's terms (``PostgresErrors``).
struct PostgresSession: Sendable {
    /// Which connection this is: a pool's (``PostgresPool``) generation and the connection's id in it, never reused.
    struct Key: Hashable, Sendable {
        var generation: Int
        var id: Int
    }

    let connection: PostgresConnection
    let location: PostgresLocation
    let logger: Logger
    let key: Key
    /// Inside a transaction: a statement never goes to another connection (the rest of the transaction's statements
    /// would run on their own, committed one by one), so a lost connection fails them.
    var inTransaction = false

    @discardableResult
    func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try checkOpen()
        do {
            return try await connection.query(query, logger: logger).collect()
        } catch {
            throw PostgresErrors.describe(error, location: location)
        }
    }

    /// Runs `sql`, whose `$1` is a list of series ids and `$2` and `$3` the start and end of a window: the shape of
    /// every read of some series over a time range.
    func query(_ sql: String, series: [Int64], from: Int64, to: Int64) async throws -> [PostgresRow] {
        var binds = PostgresBindings()
        binds.append(series)
        binds.append(from)
        binds.append(to)
        return try await query(PostgresQuery(unsafeSQL: sql, binds: binds))
    }

    func execute(_ sql: String) async throws {
        try await query(PostgresQuery(unsafeSQL: sql))
    }

    /// In a write transaction: the server ends this session if the transaction sits idle `milliseconds` (a process
    /// frozen mid-transaction must not hold the rows it locked for ever).
    func limitIdle(_ milliseconds: Int64) async throws {
        try await execute("SET LOCAL idle_in_transaction_session_timeout = \(milliseconds)")
    }

    func checkOpen() throws {
        if inTransaction, connection.isClosed {
            throw StoreError.cannotWrite("\(location): the connection was lost in the middle of a transaction")
        }
    }

    /// Runs `body` in a transaction begun by `begin`: committed when it returns, rolled back when it throws (and the
    /// connection closed when the rollback itself fails, so the pool opens a clean one for the next).
    ///
    /// Not `PostgresConnection.withTransaction`: that begins with a plain `BEGIN` and wraps every error in a
    /// `PostgresTransactionError`, where callers look for ``StoreError`` (``StoreError/fenced(_:)``,
    /// ``StoreError/cannotWrite(_:)``) and the server's own message.
    func transaction<Value>(
        _ begin: String = "BEGIN", _ body: (PostgresSession) async throws -> Value
    ) async throws -> Value {
        try await execute(begin)
        var inside = self
        inside.inTransaction = true
        do {
            let result = try await body(inside)
            try await inside.execute("COMMIT")
            return result
        } catch {
            do { try await inside.execute("ROLLBACK") } catch { try? await connection.close() }
            throw error
        }
    }
}

/// A store's connections: a `PostgresClient` (postgres-nio's pool), run for as long as the store is open.
///
/// Calls lease a connection for their length (``withConnection(_:)``, ``transaction(_:_:)``). Where the client's
/// pool would behave otherwise than a connection opened for the call, this keeps the store's behaviour:
///
/// - A call that gets no connection within a second (the pool keeps requests waiting while its connects fail, and
///   retries with a growing backoff) opens one itself to find out: when the server cannot be reached, the call fails
///   with the reason at once (``PostgresErrors``: refused, TLS, authentication), as a direct connection does. When it
///   can, the call waits for the pool (which may be busy).
/// - Once the server can be reached again after it could not, the pool is replaced by a new one, which connects at
///   once: the old one would wait out its backoff (up to a minute), or has given up (its circuit breaker).
/// - The TLS files are read again for each new pool, and a new pool is made when they change on disk: certificates
///   renewed in place apply from the next connection (a client keeps the TLS context it was made with).
final class PostgresPool: Sendable {
    let location: PostgresLocation
    let logger: Logger
    /// The most connections the pool opens at once, and how long one is kept unused.
    let maximum: Int
    let idleTimeout: Duration
    private let state = Mutex(State())

    struct Client: Sendable {
        let client: PostgresClient
        let generation: Int
        let files: [String]
    }

    private struct State: Sendable {
        var current: Client?
        var generation = 0
        /// The tasks running every client made (``PostgresClient/run()``), ended by ``close()``.
        var runs: [Int: Task<Void, Never>] = [:]
        /// A check found the server unreachable since a connection was last handed.
        var unreachable = false
    }

    /// How long a call waits for the pool before it checks that the server can be reached.
    static let patience: Duration = .seconds(1)
    /// How long a pool replaced after an outage runs on, for what it was doing.
    static let retirement: Duration = .seconds(60)

    /// No connection is opened before a call needs one: a pool only retries connecting (with its backoff) for calls,
    /// and those calls see the server unreachable (``withConnection(_:)``).
    init(location: PostgresLocation, logger: Logger, maximum: Int, idleTimeout: Duration = .seconds(60)) {
        self.location = location
        self.logger = logger
        self.maximum = maximum
        self.idleTimeout = idleTimeout
    }

    /// The client to lease from: the current one, or a new one when there is none, when the TLS files changed, or
    /// in place of `stale` (whose task is ended ``retirement`` later).
    /// - Throws: ``StoreError/unusable(_:)`` naming a TLS file that cannot be read or used.
    func client(replacing stale: Int? = nil) throws -> Client {
        let files = location.tls.files()
        if let current = state.withLock({ $0.current }), current.files == files, current.generation != stale {
            return current
        }
        // Read and loaded now, for the reasons a direct connection gives (the client's pool would only retry).
        _ = try location.tls.context()
        var configuration = try location.clientConfiguration()
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = maximum
        configuration.options.connectionIdleTimeout = idleTimeout
        return state.withLock { state in
            if let current = state.current, current.files == files, current.generation != stale { return current }
            if let stale, let run = state.runs[stale] {
                // What still runs on its connections has a minute to finish (a new pool replaces one only when
                // the server went away, when any connection it still has is most likely dead).
                Task {
                    try? await Task.sleep(for: Self.retirement)
                    run.cancel()
                }
            }
            state.generation += 1
            let client = PostgresClient(configuration: configuration)
            state.runs[state.generation] = Task { await client.run() }
            let made = Client(client: client, generation: state.generation, files: files)
            state.current = made
            return made
        }
    }

    /// Runs `body` with a connection of the pool (see the type's notes for when the pool cannot give one).
    func withConnection<Value: Sendable>(
        _ body: @escaping @Sendable (PostgresSession) async throws -> Value
    ) async throws -> Value {
        var client = try client()
        var renewed = false
        while true {
            do {
                return try await lease(from: client, body)
            } catch let failure as LeaseFailure {
                // The pool gave none (it gave up connecting, or was closed): the server's own reason when it cannot
                // be reached, else a new pool, once.
                guard !Task.isCancelled else { throw PostgresErrors.describe(failure.error, location: location) }
                if failure.probe { try await probe() }
                guard !renewed else { throw PostgresErrors.describe(failure.error, location: location) }
                renewed = true
                client = try self.client(replacing: client.generation)
            }
        }
    }

    /// Runs `body` in a transaction begun by `begin` (see ``PostgresSession/transaction(_:_:)``).
    func transaction<Value: Sendable>(
        _ begin: String = "BEGIN", _ body: @escaping @Sendable (PostgresSession) async throws -> Value
    ) async throws -> Value {
        try await withConnection { session in try await session.transaction(begin, body) }
    }

    /// A lease request, and who settled it: the pool by handing a connection, or the check that gave up on it.
    private final class Claim: Sendable {
        enum Phase { case waiting, leased, abandoned }
        let phase = Mutex(Phase.waiting)

        /// True when the connection may be used (nobody gave up on it).
        func lease() -> Bool {
            phase.withLock { phase in
                guard phase == .waiting else { return phase == .leased }
                phase = .leased
                return true
            }
        }

        /// True when the request is given up (no connection was handed).
        func abandon() -> Bool {
            phase.withLock { phase in
                guard phase == .waiting else { return phase == .abandoned }
                phase = .abandoned
                return true
            }
        }

        var isLeased: Bool { phase.withLock { $0 == .leased } }
    }

    /// The pool failed the request before handing a connection, or the request was given up for a new pool.
    private struct LeaseFailure: Error {
        var error: any Error
        /// Whether the server is still to be checked.
        var probe = true
    }

    private func lease<Value: Sendable>(
        from client: Client, _ body: @escaping @Sendable (PostgresSession) async throws -> Value
    ) async throws -> Value {
        let claim = Claim()
        let (location, logger) = (location, logger)
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                do {
                    return try await client.client.withConnection { connection in
                        guard claim.lease() else { throw CancellationError() }
                        self.state.withLock { $0.unreachable = false }
                        return try await body(
                            PostgresSession(
                                connection: connection, location: location, logger: logger,
                                key: PostgresSession.Key(generation: client.generation, id: connection.id)))
                    }
                } catch {
                    if claim.abandon() { throw LeaseFailure(error: error) }
                    throw error
                }
            }
            group.addTask {
                try await Task.sleep(for: Self.patience)
                guard !claim.isLeased else { return nil }
                do {
                    try await self.probe()
                } catch {
                    // Unreachable and still no connection: the reason, now.
                    self.state.withLock { $0.unreachable = true }
                    if claim.abandon() { throw error }
                    return nil
                }
                // Reachable again after it was not: the pool may be waiting out its backoff; a new one connects now.
                // (Reachable all along: the pool is busy; wait.)
                if self.state.withLock({ $0.unreachable }), claim.abandon() {
                    throw LeaseFailure(error: CancellationError(), probe: false)
                }
                return nil
            }
            while let next = try await group.next() {
                if let value = next {
                    group.cancelAll()
                    return value
                }
            }
            throw CancellationError()
        }
    }

    /// Opens a connection of its own and closes it: throws why the server cannot be reached, if it cannot.
    func probe() async throws {
        let tls = try location.tls.context()
        do {
            let connection = try await PostgresConnection.connect(
                on: PostgresClient.defaultEventLoopGroup.any(),
                configuration: location.connectionConfiguration(tls: tls),
                id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw PostgresErrors.describe(error, location: location)
        }
    }

    /// Ends the clients' tasks, which closes their connections. A call after this makes a new client.
    func close() {
        let runs = state.withLock { state in
            defer {
                state.runs.removeAll()
                state.current = nil
            }
            return state.runs.values
        }
        for run in runs { run.cancel() }
    }

    /// A pool dropped without ``close()`` (a store nobody shut down) closes its connections too.
    deinit { close() }
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
