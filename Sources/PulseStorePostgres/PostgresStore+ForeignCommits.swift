import PostgresNIO
import PulseStore

extension PostgresStore {
    /// What a commit this store's writers never make leaves in `meta`, for the tests of the writers' cache refresh
    /// (PostgresIngestTransaction.swift): the store's SQL stays in this module.
    enum ForeignCommit {
        /// A commit of a `netpulsed` from before revision stamps (during a rolling upgrade): the revision moves, the
        /// count of stamping commits does not.
        case unstamped
        /// The database gone back one commit (a restore, a failover to a replica that lacks it).
        case rewound
    }

    func record(_ commit: ForeignCommit) async throws {
        try await writerTransaction(limitIdle: false) { _, transaction in
            switch commit {
            case .unstamped:
                try await transaction.session.execute("UPDATE meta SET value = value + 1 WHERE key = 'revision'")
            case .rewound:
                try await transaction.session.execute(
                    "UPDATE meta SET value = value - 1 WHERE key IN ('revision', 'stamped')")
            }
        }
    }
}
