import GRDB
import PulseAnalytics
import PulseCore

extension SQLiteStore {
    public func ingest(_ batches: [IngestBatch], receivedAt: Int64) async throws -> [IngestOutcome] {
        guard !batches.isEmpty else { return [] }
        return try await pool.writeWithoutTransaction { db in
            try self.writer.withLock { writer in
                do {
                    var outcomes = [IngestOutcome]()
                    try db.inTransaction(.immediate) {
                        outcomes = try writer.ingest(batches, receivedAt: receivedAt, in: db)
                        return .commit
                    }
                    return outcomes
                } catch {
                    // The transaction rolled back: what the caches learnt in it may not exist.
                    writer.reset()
                    throw error
                }
            }
        }
    }
}
