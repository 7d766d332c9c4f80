import Foundation
import TestSupport
import Testing

extension EndToEnd {
    /// A daemon on a PostgreSQL primary with a streaming standby (two real PostgreSQL 15 servers of the test's own):
    /// while the standby is asynchronous, a failover to it could lose batches already acknowledged, and the daemon
    /// and `netpulse check-config` say so and what to set; once the primary names it in synchronous_standby_names,
    /// they say it replicates synchronously.
    @Suite(.serialized) struct ReplicationTests {
        static func replicationState(_ server: PostgresServer) throws -> String {
            try server.psql("postgres", "SELECT application_name, state, sync_state FROM pg_stat_replication")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @Test(.timeLimit(.minutes(2)))
        func anAsynchronousStandbyIsWarnedAboutAndASynchronousOneIsNot() throws {
            // Every commit fsynced and synchronous_commit = on, as a production primary.
            let server = try PostgresServer.start(durable: true)
            defer { server.stop() }
            let standby = try server.startStandby(name: "replica1")
            defer { standby.stop() }
            try eventually("the standby streams", timeout: 30) {
                try Self.replicationState(server) == "replica1|streaming|async"
            }
            let fleet = try Fleet()
            defer { fleet.shutdown() }
            try fleet.useStore(postgresql: try server.createDatabase("fleet"))
            let config = "\(fleet.directory)/netpulsed.toml"

            try fleet.startDaemon()
            let warning =
                "store: the PostgreSQL server streams to 1 standby (replica1 (async)), all asynchronous (synchronous_standby_names is empty): a failover may lose batches already acknowledged to agents; name the standby in synchronous_standby_names on the primary, e.g. 'ANY 1 (replica1)', and reload it (docs/scale-out.md)"
            #expect(fleet.daemon!.output.contains(warning), "\(fleet.daemon!.output)")
            let check = try runCapturing([Build.cli, "check-config", config])
            #expect(check.status == 0, "\(check.errors)")
            #expect(
                check.output.contains(
                    "PostgreSQL: for a failover to lose no acknowledged batch, the primary must replicate synchronously: synchronous_standby_names naming the standby"
                ), "\(check.output)")
            #expect(
                check.output.contains(
                    "standbys: replica1 (async); synchronous_commit = on; synchronous_standby_names = ''"),
                "\(check.output)")
            #expect(check.errors.contains("warning: the PostgreSQL server streams to 1 standby"), "\(check.errors)")
            #expect(fleet.daemon!.stop() == 0)

            _ = try server.psql(
                "postgres", "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (replica1)'")
            _ = try server.psql("postgres", "SELECT pg_reload_conf()")
            try eventually("the standby is synchronous", timeout: 20) {
                try Self.replicationState(server) == "replica1|streaming|quorum"
            }
            // The check is made before the daemon listens; its log starts afresh.
            try fleet.startDaemon()
            let restart = fleet.daemon!.output
            #expect(
                restart.contains(
                    "store: PostgreSQL replicates synchronously (replica1 (quorum)): a failover to a synchronous standby loses no acknowledged batch"
                ), "\(restart)")
            #expect(!restart.contains("asynchronous"), "\(restart)")
            let synchronous = try runCapturing([Build.cli, "check-config", config])
            #expect(synchronous.status == 0 && !synchronous.errors.contains("warning"), "\(synchronous.errors)")
            #expect(
                synchronous.output.contains(
                    "standbys: replica1 (quorum); synchronous_commit = on; synchronous_standby_names = 'ANY 1 (replica1)'"
                ),
                "\(synchronous.output)")
        }
    }
}
