import Foundation
import PostgresNIO
import PulseAnalytics
import PulseCore
import PulseStore

extension PostgresStore {
    // MARK: Retention

    /// Deletes data past `policy` (see ``MetricStore/prune(_:now:slice:)``); the leader's job (fenced). Raw samples go a day's partition at a
    /// time, dropped once its whole day is past the policy (so raw data is kept up to a day longer than asked): no
    /// dead rows for VACUUM, no index to walk. Rollups and anomalies are deleted in slices of `slice` rows.
    public func prune(_ policy: RetentionPolicy, now: Int64, slice: Int) async throws -> PruneReport {
        var report = PruneReport()
        // Gaps late data can no longer fill are spread into the rollups for good, a few per transaction, by the
        // writer (they change rollups, as ingest does).
        let token = fence.load(ordering: .relaxed)
        while true {
            let settled = try await writerTransaction { side, transaction in
                try await Self.checkFence(token, transaction.session)
                return try await side.writer.settleGaps(
                    endedBefore: now - policy.lateData, policy: policy, now: now, limit: max(1, slice / 100),
                    in: transaction)
            }
            report.settledGaps += settled
            if settled < max(1, slice / 100) { break }
        }
        report.rawChunks = try await leaderWrite { session in
            var dropped = 0
            for row in try await session.query(
                """
                SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'raw' ORDER BY 1
                """)
            {
                let name = try row.decode(String.self)
                let digits = name.dropFirst("raw_".count)
                guard digits.count == 8,
                    let start = RFC3339.parse(
                        "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))")
                else { continue }
                guard start + 86_400_000 <= now - policy.raw else { continue }
                dropped += Int(
                    try await session.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(name)"))
                        .single("count(*) of \(name)").decode(Int64.self))
                try await session.execute("DROP TABLE \(name)")
            }
            return dropped
        }
        if report.rawChunks > 0 { await dropPartitionCache() }
        for level in settings.levels {
            guard let keep = policy.keeps(level) else { continue }
            let table = BucketColumns.table(level)
            while true {
                let deleted = try await leaderWrite { session in
                    try await session.query(
                        PostgresQuery(
                            unsafeSQL: """
                                DELETE FROM \(table) WHERE ctid IN (
                                    SELECT ctid FROM \(table) WHERE start < \(now - keep) LIMIT \(slice))
                                RETURNING 1
                                """)
                    ).count
                }
                report.buckets += deleted
                if deleted < slice { break }
            }
        }
        // Instant and unplaced steps once late data can no longer split them, and the days of unplaced totals past
        // the coarsest level's retention (as in SQLite's prune).
        while true {
            let deleted = try await leaderWrite { session in
                try await session.query(
                    """
                    DELETE FROM gap WHERE ctid IN (
                        SELECT ctid FROM gap WHERE NOT virtual AND to_ts < \(now - policy.lateData) LIMIT \(Int64(slice)))
                    RETURNING 1
                    """
                ).count
            }
            if deleted < slice { break }
        }
        if let coarsest = settings.levels.max(), let keep = policy.keeps(coarsest) {
            try await leaderWrite { session in try await session.query("DELETE FROM unplaced WHERE day < \(now - keep)")
            }
        }
        // Anomalies are kept as long as the finest rollups that would show them.
        let anomalyCutoff = now - (settings.levels.sorted().first.flatMap { policy.keeps($0) } ?? policy.raw)
        try await leaderWrite { session in try await session.query("DELETE FROM anomaly WHERE ts < \(anomalyCutoff)") }
        try await refreshSize()
        return report
    }

    /// The writer forgets which raw partitions exist (some were dropped), at its next transaction.
    func dropPartitionCache() async {
        side.partitionsDropped.store(true, ordering: .relaxed)
    }

    /// Measures the database's size on disk (``sizeOnDisk``).
    func refreshSize() async throws {
        let size = try await pool.withConnection { session in
            try await session.query("SELECT pg_database_size(current_database())")
                .single("pg_database_size").decode(Int64.self)
        }
        measuredSize.store(Int(size), ordering: .relaxed)
    }

    /// Bytes the database takes on disk, as last measured (at open, after each prune, and each minute of ingest).
    public var sizeOnDisk: Int { measuredSize.load(ordering: .relaxed) }
}
