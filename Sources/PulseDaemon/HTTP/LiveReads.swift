import PulseAnalytics
import PulseCharts
import PulseQuery
import PulseReports
import PulseStore
import Synchronization

/// The live pages' reads, shared: the requests for one dashboard over one range within one second, while the store
/// holds the same data, are answered from one read and one drawing of its panels.
///
/// A page redraws by asking again for each of its panels' SVGs, then for the data of each time chart it redrew; each
/// of those requests used to read the whole scope (its members, buckets, figures and bill) to draw one panel, and
/// at a bucket boundary every open page does it at once. Sharing turns a host page's nine reads per redraw into one.
///
/// Why a shared answer is the one each request would have read alone:
/// - every read is made as of the start of its second (``second(of:)``). Every rollup level and billing interval is
///   a whole number of seconds, so no bucket boundary falls inside a second, and what a page draws depends on `now`
///   only through its boundaries;
/// - each read holds the store's data generation (``MetricStore/dataGeneration()``: every commit moves it, a change
///   of the catalogue too), taken before it starts, so it has every commit up to that generation. A request shares
///   a read whose generation is at least the one it needs: the generation when it arrived, or, for a redraw, the one
///   its announcement carried (``BucketAnnouncer``), which is all the page was told of. At a 5-minute boundary
///   several agents' first batches commit within milliseconds, and a page's panel requests, spread over them, each
///   started a read of the whole fleet again (two reads of 10,000 interfaces at once, where one answers them all);
/// - a store that cannot tell (PostgreSQL, which other daemons write) shares nothing.
///
/// A write that forgot to move the generation could make a page at most that second out of date.
final class LiveReads: Sendable {
    struct Key: Hashable, Sendable {
        var stem: String
        var range: LiveRange
        var second: Int64
        var data: Int64

        /// The dashboard, range and second, which a shared read must match.
        var slot: Slot { Slot(stem: stem, range: range, second: second) }
    }

    struct Slot: Hashable, Sendable {
        var stem: String
        var range: LiveRange
        var second: Int64
    }

    /// One dashboard over one range as read, and its panels drawn from it: each panel's inline SVG (what pages and
    /// their redraws fetch) is rendered once.
    final class Drawn: Sendable {
        let data: DashboardData
        let charts: [Chart]
        private let inline = Mutex<[Int: (svg: String, tag: String)]>([:])

        init(data: DashboardData, charts: [Chart]) {
            self.data = data
            self.charts = charts
        }

        /// Panel `index` as a page holds it inline, and its entity tag.
        func inlineSVG(_ index: Int, pages: LivePages) -> (svg: String, tag: String) {
            if let drawn = inline.withLock({ $0[index] }) { return drawn }
            let svg = pages.inlinePanelSVG(charts[index], index: index)
            let drawn = (svg, LiveRoutes.entityTag(svg))
            inline.withLock { $0[index] = drawn }
            return drawn
        }
    }

    /// The most reads held at once (one per dashboard, range and second): those of the current second and the one
    /// before, for as many dashboards and ranges as pages ask for together; past this, requests read on their own.
    static let most = 256

    /// The newest read of each dashboard, range and second, with its data generation.
    private let reads = Mutex<[Slot: (data: Int64, task: Task<Drawn, any Error>)]>([:])
    /// The dashboards of the catalogue at a generation, by file stem (646 of them for 10,000 interfaces: made once
    /// per change of the catalogue, not per request).
    private let dashboards = Mutex<(generation: Int64, ordered: [DashboardSpec], byStem: [String: DashboardSpec])?>(nil)

    /// The length of the range (ms) of each open event stream whose window the store can hold in memory, by stream.
    private let streams = Mutex<[Int: Int64]>([:])

    /// Whether a live page of `length` ms is one whose window the store holds in memory while it is open: its
    /// finest-level buckets, and the one filling, within ``RecentBucketLimit/perSeries`` (the last hour: 13
    /// buckets at five minutes, 61 at minutes; a day is read from the rows).
    static func holds(length: Int64, finest: RollupLevel) -> Bool {
        (length + finest.width - 1) / finest.width + 1 <= Int64(RecentBucketLimit.perSeries)
    }

    /// Notes that event stream `id` of a page of `length` ms opened (true: its window is to be held).
    func opened(_ id: Int, length: Int64, finest: RollupLevel) -> Bool {
        guard Self.holds(length: length, finest: finest) else { return false }
        streams.withLock { $0[id] = length }
        return true
    }

    /// Notes that event stream `id` closed.
    func closed(_ id: Int) {
        streams.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// The earliest bucket of `finest` the open pages' windows read as of `now`; nil with none open.
    ///
    /// Why the live pages hold them: a page of the fleet ranks all its interfaces by their sums over the window,
    /// and every late batch after a boundary makes its open pages read again (10,000 interfaces: 130,000 rollup
    /// rows, about 100 ms of SQLite each time, beside every other page's read on two cores).
    func heldFrom(now: Int64, finest: RollupLevel) -> Int64? {
        guard let longest = streams.withLock({ $0.values.max() }) else { return nil }
        return finest.bucketStart(now) - (longest + finest.width - 1) / finest.width * finest.width
    }

    /// `now` (ms) rounded down to its second: the time a shared read is made as of.
    static func second(of now: Int64) -> Int64 {
        now - ((now % 1_000) + 1_000) % 1_000
    }

    /// What `read` gives for `key` (its data generation: the store's now), shared with every request for the same
    /// dashboard, range and second whose read has at least generation `since` (nil: `key.data`, what the request
    /// finds; a `since` above it, from before a restart, asks for `key.data`); nil key: read alone. A failed read is
    /// not kept: the next request tries again.
    func drawn(
        _ key: Key?, since: Int64? = nil, _ read: @escaping @Sendable () async throws -> Drawn
    ) async throws -> Drawn {
        guard let key else { return try await read() }
        let needed = min(since ?? key.data, key.data)
        let task = reads.withLock { reads -> Task<Drawn, any Error> in
            if let newest = reads[key.slot], newest.data >= needed { return newest.task }
            // Reads of an earlier second are never asked for again.
            reads = reads.filter { $0.key.second >= key.second - 1_000 }
            // Not the request's own task: a page that goes away does not cancel what others wait for. It replaces
            // an older read of its slot, which the requests already waiting for it still get.
            let task = Task { try await read() }
            if reads.count < Self.most || reads[key.slot] != nil { reads[key.slot] = (key.data, task) }
            return task
        }
        do {
            return try await task.value
        } catch {
            reads.withLock { reads in
                if reads[key.slot]?.task == task { reads[key.slot] = nil }
            }
            throw error
        }
    }

    /// The dashboards as `make` gives them for the catalogue at `generation` (read before the catalogue, so that a
    /// change in between makes the next call build them again); nil: built each time.
    func dashboards(
        generation: Int64?, _ make: () -> [DashboardSpec]
    ) -> (ordered: [DashboardSpec], byStem: [String: DashboardSpec]) {
        if let generation, let kept = dashboards.withLock({ $0 }), kept.generation == generation {
            return (kept.ordered, kept.byStem)
        }
        let ordered = make()
        // The first of two dashboards with one stem, as the pages on disk do.
        let byStem = Dictionary(ordered.map { ($0.fileStem, $0) }, uniquingKeysWith: { first, _ in first })
        if let generation { dashboards.withLock { $0 = (generation, ordered, byStem) } }
        return (ordered, byStem)
    }
}
