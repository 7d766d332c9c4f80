import PulseAnalytics
import PulseCore

/// Virtual gap steps, spread when read (see SQLiteSchema's `gap` table): the part of reads every store shares.
enum VirtualGaps {
    /// One stored gap, as its columns hold it.
    struct Row {
        var owner: Int64
        var previous: [UInt8]
        var next: [UInt8]
        var scopes: [UInt8]
        var step: [UInt8]
        var revision: Int64
    }

    /// Whether the gaps of `owners` interfaces should be looked up by the gap table's key rather than every virtual
    /// gap that ends after the read's start be read: when more such gaps exist than there are owners to look up
    /// (each store counts them up to `owners + 1`; a host stands for all its interfaces). A part of a paced read of
    /// the fleet's interfaces after their streams restarted used to read every gap of the range again, most of a
    /// dashboard's drawing.
    static func lookedUpByKey(overlapping: Int, owners: Int) -> Bool { overlapping > owners }

    /// The interfaces whose gaps can add to the series `rows` (id, kind, agent) describe: the interfaces themselves
    /// and the interfaces of the hosts' agents (`interfaces(agents)`); nil when a group or the fleet is among them,
    /// whose gaps are any interface's.
    static func owners(
        of rows: [(id: Int64, kind: SeriesKind?, agent: Int64)], interfaces: ([Int64]) throws -> [Int64]
    ) rethrows -> [Int64]? {
        var owners = [Int64]()
        var hosts = [Int64]()
        for row in rows {
            switch row.kind {
            case .interface: owners.append(row.id)
            case .host: hosts.append(row.agent)
            default: return nil
            }
        }
        return hosts.isEmpty ? owners : owners + (try interfaces(hosts))
    }

    /// The end a query for gaps that add to buckets of `level` starting before `to` must look up to.
    static func end(level: RollupLevel, to: Int64) -> Int64 {
        to.addingReportingOverflow(level.width).overflow ? Int64.max : to + level.width
    }

    /// Calls `add(series, start, values, revision)` for every bucket of `level` starting in `[from, to)` that the gap
    /// adds to, for the series of `series` among its interface and its scopes (which get its sums).
    static func spread(
        _ row: Row, level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void
    ) throws {
        let scopes = try SampleCoding.decodeIDs(row.scopes)
        let wanted = ([row.owner] + scopes).filter(series.contains)
        guard !wanted.isEmpty else { return }
        let previous = try SampleCoding.decode(row.previous)
        let next = try SampleCoding.decode(row.next)
        let step = try SampleCoding.decodeStep(row.step)
        Spreader.spread(step, from: previous, to: next, level: level, startingIn: from..<max(from, to)) {
            start, values in
            for id in wanted { add(id, start, id == row.owner ? values : values.sumsOnly, row.revision) }
        }
    }

    /// What spread gaps add, per series and bucket start, collected by ``spread(_:level:series:from:to:_:)``.
    struct Spread {
        var buckets = [Int64: [Int64: (values: BucketValues, revision: Int64)]]()

        mutating func add(_ series: Int64, _ start: Int64, _ values: BucketValues, _ revision: Int64) {
            var entry = buckets[series]?[start] ?? (.empty, 0)
            entry.values.merge(values)
            entry.revision = max(entry.revision, revision)
            buckets[series, default: [:]][start] = entry
        }

        /// `list` (one series' stored buckets, by start) with the series' spread gaps merged in; the series is done.
        mutating func merge(_ series: Int64, into list: [Bucket], level: RollupLevel) -> [Bucket] {
            guard let spread = buckets.removeValue(forKey: series) else { return list }
            var byStart = Dictionary(uniqueKeysWithValues: list.map { ($0.start, $0) })
            for (start, entry) in spread {
                var bucket = byStart[start] ?? Bucket(level: level, start: start, values: .empty)
                bucket.values.merge(entry.values)
                bucket.revision = max(bucket.revision, entry.revision)
                byStart[start] = bucket
            }
            return byStart.values.sorted { $0.start < $1.start }
        }

        /// Series with spread gaps not yet merged (those without stored buckets), in order.
        var remaining: [Int64] { buckets.keys.sorted() }
    }
}
