/// A store several daemons share (PostgreSQL): each stores what its agents send, and the one holding the leader
/// lease runs the jobs that must run once (bills, alerts, remote write, dashboards, snapshots, retention).
///
/// The daemon asks a store for this by capability (`store as? any SharedStore`), never by its concrete type.
public protocol SharedStore: MetricStore {
    /// Takes or renews the leader lease for `ttl` ms: the fencing token while `holder` holds it, nil while another
    /// daemon does. Leader-only writes carry the token and are refused once it is no longer the lease's.
    func holdLease(holder: String, ttl: Int64) async throws -> Int64?

    /// Gives the lease up (a daemon stopping), so another takes over without waiting for it to run out.
    func releaseLease(holder: String) async throws

    /// Refuses this daemon's leader-only writes from now until it holds the lease again (it stepped down).
    func dropFence()

    /// How the server replicates, as far as a failover may lose acknowledged batches (``PostgresReplication``).
    func replication() async throws -> PostgresReplication
}
