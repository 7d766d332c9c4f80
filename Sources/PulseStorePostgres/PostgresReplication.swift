import Foundation
import Logging
import PostgresNIO
import PulseStore

/// How the replication state is read from the server.
extension PostgresReplication {
    static let settingsQuery: PostgresQuery =
        "SELECT current_setting('synchronous_commit'), current_setting('synchronous_standby_names')"
    static let standbysQuery: PostgresQuery =
        "SELECT coalesce(application_name, ''), state, sync_state FROM pg_stat_replication ORDER BY 1"

    /// The state from the rows of ``settingsQuery`` and ``standbysQuery``.
    static func make(settings: [PostgresRow], standbys: [PostgresRow], location: PostgresLocation) throws
        -> PostgresReplication
    {
        guard let row = settings.first else {
            throw StoreError.unusable("\(location): the server returned no settings")
        }
        let (commit, names) = try row.decode((String, String).self)
        let standbys = try standbys.map { row in
            let (name, state, syncState) = try row.decode((String, String?, String?).self)
            return Standby(name: name.isEmpty ? "unnamed" : name, state: state, syncState: syncState)
        }
        return PostgresReplication(standbys: standbys, synchronousCommit: commit, synchronousStandbyNames: names)
    }

    /// Reads the state on `session`.
    static func read(_ session: PostgresSession) async throws -> PostgresReplication {
        let settings = try await session.query(settingsQuery)
        let standbys = try await session.query(standbysQuery)
        return try make(settings: settings, standbys: standbys, location: session.location)
    }

    /// Connects to `location` once, reads the state and disconnects, for tools (`netpulse check-config`). Nothing in
    /// the database is created or changed.
    /// - Throws: ``StoreError`` when the server cannot be reached or read.
    public static func read(location: PostgresLocation, logger: Logger) async throws -> PostgresReplication {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: location.connectionConfiguration(tls: location.tls.context()), id: 1, logger: logger)
        } catch {
            throw PostgresErrors.describe(error, location: location)
        }
        let session = PostgresSession(
            connection: connection, location: location, logger: logger, key: PostgresSession.Key(generation: 0, id: 1))
        do {
            let replication = try await read(session)
            try? await connection.close()
            return replication
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

extension PostgresStore {
    /// How the server this store writes to replicates (``PostgresReplication``).
    public func replication() async throws -> PostgresReplication {
        try await pool.withConnection { session in try await PostgresReplication.read(session) }
    }
}
