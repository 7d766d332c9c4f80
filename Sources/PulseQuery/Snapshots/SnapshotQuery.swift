import PulseAnalytics
import PulseCore
import PulseStore

/// What an analytics snapshot holds (`docs/snapshots.md`), as read: the chosen scopes' figures for each window,
/// the top-N lists, the counts whose time could not be placed, the open bills and the agents. PulseFormats writes
/// it as JSON and CSV.
public struct SnapshotQuery: Sendable {
    /// What a snapshot covers (`[snapshots]`).
    public struct Contents: Sendable, Hashable {
        public var windows: [WindowSpec]
        /// Scopes whose figures are written for every window (`fleet`, `groups`, `hosts`, `interfaces`).
        public var scopes: Set<SeriesKind>
        public var top: Int
        public var rankings: [Ranking]
        /// Scopes whose open bills are written.
        public var bills: Set<SeriesKind>

        public init(
            windows: [WindowSpec], scopes: Set<SeriesKind> = [.fleet, .group, .host], top: Int = 10,
            rankings: [Ranking] = [.bytes, .peak], bills: Set<SeriesKind> = [.fleet, .group, .host]
        ) {
            self.windows = windows
            self.scopes = scopes
            self.top = top
            self.rankings = rankings
            self.bills = bills
        }
    }

    public let engine: WindowEngine

    public init(engine: WindowEngine) {
        self.engine = engine
    }

    /// Reads a snapshot's contents as of `now`.
    public func read(_ contents: Contents, now: Int64) async throws -> SnapshotData {
        let catalogue = engine.catalogue
        let revision = try await engine.store.totals().revision
        var windows = [SnapshotData.WindowData]()
        for spec in contents.windows {
            let window = engine.window(spec, now: now)
            let chosen = catalogue.series.filter { contents.scopes.contains($0.kind) }
            let resolution = try? engine.resolution(for: window, now: now)
            var figures = [ScopeFigures]()
            if resolution != nil { figures = try await engine.figures(chosen, window: window, now: now) }
            var top = [(name: String, lists: [(ranking: Ranking, ranked: [Ranked])])]()
            for (name, kind) in [("interfaces", SeriesKind.interface), ("hosts", .host), ("groups", .group)] {
                let candidates = catalogue.series.filter { $0.kind == kind }
                var lists = [(ranking: Ranking, ranked: [Ranked])]()
                for ranking in contents.rankings where resolution != nil && !candidates.isEmpty {
                    lists.append(
                        (
                            ranking,
                            try await engine.top(candidates, by: ranking, window: window, now: now, count: contents.top)
                        ))
                }
                top.append((name, lists))
            }
            // Counts received on the window's days whose time could not be placed: in no figure above.
            let received = Window(from: RollupLevel.oneDay.bucketStart(window.from), to: window.to)
            let unplaced = try await engine.store.unplaced(
                series: chosen.map(\.id), from: received.from, to: received.to)
            windows.append(
                SnapshotData.WindowData(
                    window: window, resolution: resolution, figures: figures, top: top, received: received,
                    unplaced: chosen.compactMap { series in unplaced[series.id].map { (series, $0) } }))
        }
        let billed = catalogue.series.filter { contents.bills.contains($0.kind) }
        return SnapshotData(
            now: now, calendar: engine.calendar, billingCalendar: engine.billing.calendar, revision: revision,
            windows: windows, bills: try await engine.bills(billed, containing: { _ in now }, now: now),
            agents: catalogue.agents)
    }
}

/// A snapshot's contents as read (``SnapshotQuery/read(_:now:)``).
public struct SnapshotData: Sendable {
    /// One window's figures, top lists and unplaced counts.
    public struct WindowData: Sendable {
        public var window: Window
        /// The level its figures were read at; nil: no level the store keeps covers it (no figures).
        public var resolution: RollupLevel?
        public var figures: [ScopeFigures]
        /// Per kind (`interfaces`, `hosts`, `groups`), the ranked lists, one per ranking.
        public var top: [(name: String, lists: [(ranking: Ranking, ranked: [Ranked])])]
        /// The days whose unplaced counts are reported, and each chosen series' counts (series with none left out).
        public var received: Window
        public var unplaced: [(series: SeriesRecord, totals: UnplacedTotals)]
    }

    public var now: Int64
    public var calendar: CivilCalendar
    public var billingCalendar: CivilCalendar
    /// The store's revision when the snapshot was read.
    public var revision: Int64
    public var windows: [WindowData]
    public var bills: [BillLine]
    public var agents: [AgentRecord]
}
