import Foundation

/// How the PostgreSQL server a daemon writes to replicates, as far as it decides whether a failover can lose
/// batches the daemon already acknowledged to agents (docs/scale-out.md).
///
/// A daemon acknowledges a batch after `COMMIT` returns. With asynchronous streaming replication the primary
/// returns before any standby has the commit, so promoting a standby after the primary is lost drops the commits
/// it had not yet received: acknowledged batches the agents have already deleted from their spools. Only a
/// synchronous standby (`synchronous_standby_names` naming it, `synchronous_commit` at `on`, `remote_write` or
/// `remote_apply`) holds every acknowledged commit.
public struct PostgresReplication: Sendable, Hashable {
    /// A connected walsender: a standby streaming from this server (or a base backup being taken).
    public struct Standby: Sendable, Hashable {
        /// `application_name` (the standby's `cluster_name`, or `walreceiver`).
        public var name: String
        /// `streaming`, `catchup`, `backup`…; nil when the server hides it from this role.
        public var state: String?
        /// `sync`, `quorum`, `potential` or `async`; nil when the server hides it from this role (it shows a
        /// walsender's details only to superusers and members of `pg_read_all_stats`).
        public var syncState: String?

        package init(name: String, state: String? = nil, syncState: String? = nil) {
            self.name = name
            self.state = state
            self.syncState = syncState
        }
    }

    public var standbys: [Standby]
    /// `synchronous_commit` in the daemon's sessions (the server's, role's or database's setting).
    public var synchronousCommit: String
    /// `synchronous_standby_names` on the server ('' when none).
    public var synchronousStandbyNames: String

    public init(standbys: [Standby], synchronousCommit: String, synchronousStandbyNames: String) {
        self.standbys = standbys
        self.synchronousCommit = synchronousCommit
        self.synchronousStandbyNames = synchronousStandbyNames
    }

    /// What a PostgreSQL deployment must set so that a failover loses no acknowledged batch.
    public static let requirement =
        "for a failover to lose no acknowledged batch, the primary must replicate synchronously: synchronous_standby_names naming the standby a failover promotes (e.g. 'ANY 1 (replica1, replica2)') and synchronous_commit = on or remote_apply for the daemons' role (docs/scale-out.md); asynchronous standbys may lack the last acknowledged commits"

    /// The standbys (not base backups) attached.
    public var streaming: [Standby] { standbys.filter { $0.state != "backup" } }

    /// Whether at least one standby receives every commit before it is acknowledged.
    public var hasSynchronousStandby: Bool {
        streaming.contains { $0.syncState == "sync" || $0.syncState == "quorum" }
    }

    /// The standbys in words: `replica1 (async), replica2 (sync)`.
    public var standbysText: String {
        streaming.map { "\($0.name) (\($0.syncState ?? "state hidden"))" }.joined(separator: ", ")
    }

    /// One line for a start-up log when acknowledged batches can be lost on a failover (standbys attached, none of
    /// them synchronous, or commits not waiting for them), or when commits wait for a standby that is not there;
    /// nil when the server is safe or has no standby at all.
    public var warning: String? {
        let standbys = streaming
        let names = synchronousStandbyNames.trimmingCharacters(in: .whitespaces)
        guard !standbys.isEmpty else {
            guard !names.isEmpty, !["off", "local"].contains(synchronousCommit) else { return nil }
            return
                "the PostgreSQL server waits at every commit for a synchronous standby (synchronous_standby_names = '\(names)') and none is connected: ingest stalls until one is"
        }
        let count = standbys.count == 1 ? "1 standby" : "\(standbys.count) standbys"
        if ["off", "local"].contains(synchronousCommit) {
            return
                "the PostgreSQL server streams to \(count) (\(standbysText)) but commits with synchronous_commit = \(synchronousCommit), without waiting for any: a failover may lose batches already acknowledged to agents; set synchronous_commit = on (or remote_apply) for the daemons' role and name the standby in synchronous_standby_names (docs/scale-out.md)"
        }
        if names.isEmpty {
            return
                "the PostgreSQL server streams to \(count) (\(standbysText)), all asynchronous (synchronous_standby_names is empty): a failover may lose batches already acknowledged to agents; name the standby in synchronous_standby_names on the primary, e.g. 'ANY 1 (\(standbys[0].name))', and reload it (docs/scale-out.md)"
        }
        // Hidden states (a role without pg_read_all_stats): the names say a standby is meant to be synchronous.
        if standbys.allSatisfy({ $0.syncState == nil }) || hasSynchronousStandby { return nil }
        return
            "the PostgreSQL server streams to \(count) (\(standbysText)) and none is synchronous: synchronous_standby_names = '\(names)' names none of them; a failover may lose batches already acknowledged to agents (docs/scale-out.md)"
    }

    /// The server's state in one line, for `netpulse check-config`.
    public var summary: String {
        let standbys = streaming
        let attached = standbys.isEmpty ? "no standby connected" : "standbys: \(standbysText)"
        return
            "\(attached); synchronous_commit = \(synchronousCommit); synchronous_standby_names = '\(synchronousStandbyNames)'"
    }
}
