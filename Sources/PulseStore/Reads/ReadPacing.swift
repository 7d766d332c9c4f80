/// Lets a background reader give way between the parts of a large read of the SQLite store (a PostgreSQL store's
/// reads run in its server).
///
/// A read over thousands of series (a dashboard's top talkers over a month) takes a core or two for a second on a
/// busy machine, and a check before each page cannot stop it once begun. A task that sets ``current`` (the daemon's
/// dashboards) has such reads made in parts of ``partSize`` series, one after another (one reader connection at a
/// time), calling ``pause()`` before each part; it waits there while ingest is behind. Each part is a read
/// transaction of its own (as each part of an unpaced read is too), so a paused read holds no snapshot of the WAL
/// while it waits; the parts of one read may therefore see different revisions, seconds apart, as a dashboard's
/// panels already may. Each part finds the virtual gaps of its own interfaces and hosts by key when the range has
/// more gaps than it has interfaces to look up (``SQLiteStore/gapOwners(of:from:in:)``), so parts do not read every
/// gap of the fleet again; a part holding a group or the fleet reads them all, as a whole read does.
public final class ReadPacing: Sendable {
    /// The pacing of the current task's reads, if any. (A class, not a closure: an optional async closure as the
    /// task-local value crashed the optimized build in `swift_task_localValuePush`, Swift 6.3 on Linux.)
    @TaskLocal public static var current: ReadPacing?

    /// Series per part of a paced read: by default tens of milliseconds of reading for a month of 1-day buckets.
    public let partSize: Int

    private let body: @Sendable () async throws -> Void

    public init(partSize: Int = 500, pause body: @escaping @Sendable () async throws -> Void) {
        self.partSize = max(1, partSize)
        self.body = body
    }

    /// Waits as long as the reader should give way.
    public func pause() async throws { try await body() }
}
