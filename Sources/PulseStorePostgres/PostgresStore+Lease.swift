import PostgresNIO
import PulseStore
import Synchronization

/// The leader lease: several daemons share one database, and exactly one of them at a time keeps bills, evaluates
/// alerts and notifies, forwards by remote write, renders and prunes. Ingest needs no leader (any daemon commits).
///
/// The lease is a row: its holder, its expiry on the database server's clock (so the daemons' clocks do not matter),
/// and a fencing token raised each time the lease changes hands. A daemon holds it by renewing it before it expires;
/// another takes it only once it has expired. A session advisory lock alone would not do: a host that vanishes keeps
/// its session, and the lock, until TCP keepalive gives up, which can take hours.
///
/// Fencing: every leader-only write checks, in its own transaction, that the store's ``fence`` token is still the
/// lease's and unexpired, holding the row (`FOR SHARE`) until it commits, so the lease cannot change hands under it.
/// A leader frozen (SIGSTOP) or cut off past its expiry wakes up with a stale token, and its writes are refused
/// (``StoreError/fenced(_:)``). The server ends any write transaction left idle longer than the lease
/// (`idle_in_transaction_session_timeout`), so a frozen daemon cannot hold the row, or the revision row, for ever.
extension PostgresStore {
    /// The server's clock in milliseconds.
    static let serverNow = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    /// Takes or renews the lease for `holder` (unique to this daemon's process) for `ttl` milliseconds. Returns
    /// the fencing token while `holder` holds it, nil while another daemon does; ``fence`` is set to the token (0
    /// when nil), so this store's leader-only writes go through while, and only while, it leads.
    @discardableResult
    public func holdLease(holder: String, ttl: Int64) async throws -> Int64? {
        let token = try await write { session in
            try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        UPDATE leader_lease SET
                            token = CASE WHEN holder = $1 THEN token ELSE token + 1 END,
                            holder = $1, expires_at = \(Self.serverNow) + $2
                        WHERE name = 'leader' AND (holder = $1 OR expires_at < \(Self.serverNow))
                        RETURNING token
                        """, binds: Self.binds(holder, ttl))
            ).first?.decode(Int64.self)
        }
        fence.store(token ?? 0, ordering: .relaxed)
        return token
    }

    /// Gives the lease up at once (a daemon stopping), so another takes over without waiting for it to expire.
    public func releaseLease(holder: String) async throws {
        try await write { session in
            try await session.query(
                "UPDATE leader_lease SET expires_at = 0 WHERE name = 'leader' AND holder = \(holder)")
        }
    }

    public func dropFence() { fence.store(0, ordering: .relaxed) }

    /// The lease as it stands: holder, token, and milliseconds until it expires (negative: expired).
    public func lease() async throws -> (holder: String, token: Int64, remaining: Int64) {
        try await read { session in
            try await session.query(
                PostgresQuery(
                    unsafeSQL:
                        "SELECT holder, token, expires_at - \(Self.serverNow) FROM leader_lease WHERE name = 'leader'")
            ).single("the leader lease").decode((String, Int64, Int64).self)
        }
    }

    /// Refuses a leader-only write unless ``fence`` is the lease's current, unexpired token; holds the lease row
    /// until the transaction ends.
    static func checkFence(_ token: Int64, _ session: PostgresSession) async throws {
        try fenced(token, held: await session.query(fenceQuery(token)))
    }

    private static func fenceQuery(_ token: Int64) -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                SELECT 1 FROM leader_lease WHERE name = 'leader' AND token = $1 AND expires_at > \(serverNow)
                FOR SHARE
                """, binds: binds(token))
    }

    private static func fenced(_ token: Int64, held: [PostgresRow]) throws {
        guard !held.isEmpty else {
            throw StoreError.fenced(
                "this daemon does not hold the leader lease (token \(token) is stale or expired): only the leader writes this"
            )
        }
    }

    /// A read of one consistent snapshot.
    func read<Value: Sendable>(_ body: @escaping @Sendable (PostgresSession) async throws -> Value) async throws
        -> Value
    {
        try await pool.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
    }

    /// A write transaction, ended by the server if it sits idle too long (``PostgresSession/limitIdle(_:)``).
    @discardableResult
    func write<Value: Sendable>(_ body: @escaping @Sendable (PostgresSession) async throws -> Value) async throws
        -> Value
    {
        let timeout = idleWriteTimeout
        return try await pool.transaction("BEGIN") { session in
            try await session.limitIdle(timeout)
            return try await body(session)
        }
    }

    /// A leader-only write transaction: fenced by ``fence``.
    @discardableResult
    func leaderWrite<Value: Sendable>(_ body: @escaping @Sendable (PostgresSession) async throws -> Value)
        async throws -> Value
    {
        let token = fence.load(ordering: .relaxed)
        return try await write { session in
            try await Self.checkFence(token, session)
            return try await body(session)
        }
    }

    static func binds(_ values: any PostgresDynamicTypeEncodable...) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }
}
