import PulseAnalytics
import PulseStore
import Synchronization

/// The newest buckets of the finest rollup level, every series', held in memory by the SQLite store that writes
/// them, so the alert service's round and the open live pages read their windows here rather than from the file.
///
/// Why: a round over 10,000 interfaces read their last two buckets as 20,000 rows scattered over the rollup table,
/// about 100 ms of SQLite on two reader connections (docs/benchmarks.md, Alerts), where the aim is the evaluation
/// interval plus 10 ms from a threshold crossing to the chart on disk.
///
/// What it holds mirrors the rows exactly: it is read from the file once, inside the writer's lock (no commit can
/// fall between that read and the first update), then every commit adds its bucket changes after it commits, with
/// the same merge as the upsert (sums added, peaks and speed the larger). It holds the buckets starting at or after
/// ``Held/from``, which its holders move forward (the alert service each round, the live pages as they read). Virtual gaps are not in it: readers spread them
/// from the gap table as for rows, in one read transaction whose revision must be the one the held buckets are as
/// of; when it is not (a commit landed between the two), the reader takes the rows instead.
final class RecentBuckets: Sendable {
    struct Entry {
        var start: Int64
        var values: BucketValues
    }

    struct Held {
        var level: RollupLevel
        /// Every bucket starting at or after this is held.
        var from: Int64
        /// The store revision (`meta.revision`) the buckets are as of.
        var revision: Int64
        /// Each series' buckets, by start.
        var series: [Int64: [Entry]]
        /// Sums read before over a few windows, by series (nil: no bucket in the window), kept as commits change
        /// them (``WindowSums``).
        var windows = [WindowSums]()
    }

    /// Sums of one window, each series' kept until a commit changes one of its buckets in the window.
    ///
    /// Why: a fleet overview's read sums 10,000 interfaces' buckets over the hour (130,000 merges, a tenth of the
    /// read, `perf`), and reads of the same window follow each other (a page read ahead just after a boundary, then
    /// the redraw its first batches cause; other people on the page; the alert rounds) with commits in between that
    /// change a few series.
    struct WindowSums {
        var from: Int64
        var to: Int64
        var fields: BucketFields
        var sums: [Int64: BucketValues?]
    }

    /// The most windows whose sums are kept: the live pages' hour and the alert round's last two buckets, each
    /// across a boundary (about 2.6 MB each for 10,000 interfaces). The one used longest ago goes first.
    static let mostWindows = 4

    private let held = Mutex<Held?>(nil)

    /// Every field of a bucket's values (the revision is not one).
    static let valueFields = BucketFields.all.subtracting(.revision)

    /// Whether buckets from `from` on at `level` are held.
    func covers(level: RollupLevel, from: Int64) -> Bool {
        held.withLock { held in
            guard let held else { return false }
            return held.level == level && held.from <= from
        }
    }

    /// Takes what was read from the file at `revision`: every series' buckets of `level` starting at or after
    /// `from`. Called inside the writer's lock.
    func install(level: RollupLevel, from: Int64, revision: Int64, series: [Int64: [Entry]]) {
        held.withLock { $0 = Held(level: level, from: from, revision: revision, series: series) }
    }

    /// Lets go of the buckets before `from`, when it is later than what is held from.
    func advance(to from: Int64) {
        held.withLock { prune(&$0, to: from) }
    }

    private func prune(_ held: inout Held?, to from: Int64) {
        guard var current = held, from > current.from else { return }
        held = nil  // no copy of the table while it is pruned
        for (id, list) in current.series {
            guard let first = list.first, first.start < from else { continue }
            let kept = list.drop { $0.start < from }
            current.series[id] = kept.isEmpty ? nil : Array(kept)
        }
        current.from = from
        current.windows.removeAll { $0.from < from }
        held = current
    }

    /// Forgets everything (nothing is read from memory until the next ``install(level:from:revision:series:)``).
    func forget() {
        held.withLock { $0 = nil }
    }

    /// Adds one commit's bucket changes, `deltas` at the held level (`levelIndex` in the writer's levels), made at
    /// `revision`. A commit that is not the next one after what is held (a writer elsewhere committed between) means
    /// the held buckets can no longer be trusted: they are forgotten, and read again when next wanted.
    func apply(_ deltas: [StoreWriter.BucketKey: BucketValues], levelIndex: Int, revision: Int64) {
        held.withLock { held in
            guard var current = held else { return }
            guard revision == current.revision + 1 else {
                held = nil
                return
            }
            held = nil  // mutate the table in place, not a copy
            var newest = current.from
            for (key, values) in deltas where key.level == levelIndex && key.start >= current.from {
                current.series[key.series, default: []].merge(Self.stored(values), at: key.start)
                newest = max(newest, key.start)
                for index in current.windows.indices
                where current.windows[index].from <= key.start && key.start < current.windows[index].to {
                    current.windows[index].sums[key.series] = nil
                }
            }
            current.revision = revision
            held = current
            // A bound of its own, should its holders stop moving `from` (the alert rules removed, rounds failing, a
            // page open with nothing to redraw): never twice the buckets they may ask for.
            let span = Int64(RecentBucketLimit.perSeries) * current.level.width
            if newest - current.from >= 2 * span { prune(&held, to: newest - span) }
        }
    }

    /// The windows whose sums are kept, the one used longest ago first.
    func keptWindows() -> [Range<Int64>] {
        held.withLock { held in held?.windows.map { $0.from..<$0.to } ?? [] }
    }

    /// Each series' buckets in `[from, to)` merged into one, as the rows' sums are (``SQLiteStore/sums``), with the
    /// revision they are as of; nil when they are not held.
    func sums(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields
    ) -> (sums: [Int64: BucketValues], revision: Int64)? {
        held.withLock { held in
            guard var current = held, current.level == level, current.from <= from else { return nil }
            held = nil  // the kept sums are added to in place, not copied
            defer { held = current }
            var window =
                current.windows.firstIndex { $0.from == from && $0.to == to && $0.fields == fields }
                .map { current.windows.remove(at: $0) } ?? WindowSums(from: from, to: to, fields: fields, sums: [:])
            var result = [Int64: BucketValues]()
            result.reserveCapacity(series.count)
            for id in series {
                let sum: BucketValues?
                if let kept = window.sums[id] {
                    sum = kept
                } else {
                    sum = Self.sum(current.series[id] ?? [], from: from, to: to, fields: fields)
                    window.sums[id] = .some(sum)
                }
                if let sum { result[id] = sum }
            }
            // The newest used last; past the bound, the one used longest ago goes.
            current.windows.append(window)
            if current.windows.count > Self.mostWindows { current.windows.removeFirst() }
            return (result, current.revision)
        }
    }

    /// The merge of `list`'s buckets in `[from, to)` (nil: none there), only `fields`.
    private static func sum(_ list: [Entry], from: Int64, to: Int64, fields: BucketFields) -> BucketValues? {
        var sum = BucketValues.empty
        var any = false
        for entry in list where entry.start >= from && entry.start < to {
            sum.merge(entry.values)
            any = true
        }
        return any ? sum.only(fields) : nil
    }

    /// `values` as the row holds them: the rollup columns are signed 64-bit, so peaks and speed are clamped on the
    /// way in (``StoreWriter/bucketArguments``).
    static func stored(_ values: BucketValues) -> BucketValues {
        var values = values
        values.peakRx = UInt64(clamping: Int64(clamping: values.peakRx))
        values.peakTx = UInt64(clamping: Int64(clamping: values.peakTx))
        return values
    }
}

extension [RecentBuckets.Entry] {
    /// Merges `values` into the bucket at `start`, or inserts it in order (new buckets come last, mostly).
    fileprivate mutating func merge(_ values: BucketValues, at start: Int64) {
        var index = endIndex
        while index > startIndex, self[index - 1].start > start { index -= 1 }
        if index > startIndex, self[index - 1].start == start {
            self[index - 1].values.merge(values)
        } else {
            insert(RecentBuckets.Entry(start: start, values: values), at: index)
        }
    }
}
