import PulseAnalytics
import PulseStore
import Synchronization

/// The last few answers of the store's own process to ``SQLiteStore/bills(series:containing:)`` (or to
/// ``SQLiteStore/billAdjustments(series:containing:)``), kept while no commit has written a bill, and given again
/// for a later time while every row in them still holds it.
///
/// Why: an open fleet overview ranks its hosts by their kept bills, and every commit that reaches its buckets makes
/// it read them again (625 hosts' rows: 8–16 ms of its read at a bucket boundary, beside the other pages' reads,
/// docs/benchmarks.md). The rows change only when the billing pass saves, once a minute.
///
/// Why an answer for time `t` is the answer for a later time `u`, while no bill has been written since it was read:
/// - the rows for a time are those whose period holds it. Each row kept for `t` holds `u` too while `u` is before
///   the end of the earliest of their periods (``Entry/until``);
/// - a row not kept for `t` that holds `u` would be one whose period starts after `t`. None existed when the answer
///   was read: it is kept only when no bill in the store started after `t`
///   (``remember(_:series:time:latestStart:generation:)``), and a row written since would have moved the generation.
final class KeptBillsMemo<Row: Sendable>: Sendable {
    struct Entry {
        var series: [Int64]?
        var time: Int64
        /// The earliest end of a period among the rows (`Int64.max` with none).
        var until: Int64
        var rows: [Row]
    }

    /// How many answers are kept: the fleet's hosts, the fleet's own and a few pages' (about 200 bytes a row).
    static var most: Int { 8 }

    /// The period of a row.
    private let period: @Sendable (Row) -> Window
    /// The answers and the bill generation they were read at; the newest last.
    private let entries = Mutex<(generation: Int64, list: [Entry])>((0, []))

    init(period: @escaping @Sendable (Row) -> Window) {
        self.period = period
    }

    /// The kept answer for `series` at `time`, read at bill generation `generation`; nil when there is none.
    func answer(series: [Int64]?, time: Int64, generation: Int64) -> [Row]? {
        entries.withLock { entries in
            guard entries.generation == generation else {
                // Bills were written since these were read; a caller that found an older generation (it began
                // before a save ended) leaves the newer answers where they are.
                if generation > entries.generation { entries = (generation, []) }
                return nil
            }
            return entries.list.last { $0.series == series && $0.time <= time && time < $0.until }?.rows
        }
    }

    /// Keeps `rows`, read for `series` at `time` with the store at bill generation `generation` (taken before the
    /// read), unless some bill then started after `time` (`latestStart`: the latest start of a period among all the
    /// store's bills).
    func remember(_ rows: [Row], series: [Int64]?, time: Int64, latestStart: Int64?, generation: Int64) {
        guard (latestStart ?? .min) <= time else { return }
        let until = rows.lazy.map { self.period($0).to }.min() ?? .max
        entries.withLock { entries in
            // A read that began before a newer answer was asked for keeps nothing.
            guard generation >= entries.generation else { return }
            if entries.generation != generation { entries = (generation, []) }
            entries.list.removeAll { $0.series == series }
            entries.list.append(Entry(series: series, time: time, until: until, rows: rows))
            if entries.list.count > Self.most { entries.list.removeFirst() }
        }
    }
}
