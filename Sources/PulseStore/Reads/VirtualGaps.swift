import PulseAnalytics
import PulseCore

/// Virtual gap steps, spread when read (see SQLiteSchema's `gap` table): the part of reads every store shares.
package enum VirtualGaps {
    /// One stored gap, as its columns hold it.
    package struct Row {
        var owner: Int64
        var previous: [UInt8]
        var next: [UInt8]
        var scopes: [UInt8]
        var step: [UInt8]
        var revision: Int64

        package init(owner: Int64, previous: [UInt8], next: [UInt8], scopes: [UInt8], step: [UInt8], revision: Int64) {
            self.owner = owner
            self.previous = previous
            self.next = next
            self.scopes = scopes
            self.step = step
            self.revision = revision
        }
    }

    /// The interfaces whose gaps can add to `series`, when looking those up by the gap table's key reads fewer rows
    /// than reading every virtual gap that ends after the read's start; nil otherwise. Both stores decide by this
    /// rule and give it their queries:
    /// - `overlapping(limit)`: how many virtual gaps end after the start, counted up to `limit + 1`;
    /// - `rows(ids)`: the id, kind and agent of each of `ids`;
    /// - `interfaces(agents)`: the interfaces of those agents (a host's gaps are its interfaces').
    ///
    /// Nil when a group or the fleet is among `series` (their gaps are any interface's), or when no more gaps
    /// overlap than there are interfaces to look up (a few gaps are cheaper read at once). A part of a paced read
    /// of the fleet's interfaces after their streams restarted used to read every gap of the range again, most of a
    /// dashboard's drawing.
    package static func ownersByKey(
        of series: Set<Int64>, overlapping: (Int) async throws -> Int,
        rows: ([Int64]) async throws -> [(id: Int64, kind: SeriesKind?, agent: Int64)],
        interfaces: ([Int64]) async throws -> [Int64]
    ) async throws -> [Int64]? {
        guard !series.isEmpty else { return [] }
        guard try await overlapping(series.count) > series.count else { return nil }
        var owners = [Int64]()
        var hosts = [Int64]()
        for row in try await rows(Array(series)) {
            switch row.kind {
            case .interface: owners.append(row.id)
            case .host: hosts.append(row.agent)
            default: return nil
            }
        }
        if !hosts.isEmpty { owners += try await interfaces(hosts) }
        // Hosts stand for all their interfaces: looked up by key only while that is still fewer rows.
        if owners.count > series.count, try await overlapping(owners.count) <= owners.count { return nil }
        return owners
    }

    /// The end a query for gaps that add to buckets of `level` starting before `to` must look up to.
    package static func end(level: RollupLevel, to: Int64) -> Int64 {
        to.addingReportingOverflow(level.width).overflow ? Int64.max : to + level.width
    }

    /// Calls `add(series, start, values, revision)` for every bucket of `level` starting in `[from, to)` that the gap
    /// adds to, for the series of `series` among its interface and its scopes (which get its sums).
    package static func spread(
        _ row: Row, level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void
    ) throws {
        let (scopes, parts) = try SampleCoding.decodeScopes(row.scopes)
        // Scopes that get only a part of the step's span (their agent joined or left them during it) are spread
        // on their own.
        let whole = zip(scopes, parts).filter { $0.1 == nil }.map(\.0)
        let wanted = ([row.owner] + whole).filter(series.contains)
        let parted = zip(scopes, parts).filter { $0.1 != nil && series.contains($0.0) }
        guard !wanted.isEmpty || !parted.isEmpty else { return }
        let previous = try SampleCoding.decode(row.previous)
        let next = try SampleCoding.decode(row.next)
        let step = try SampleCoding.decodeStep(row.step)
        if !wanted.isEmpty {
            Spreader.spread(step, from: previous, to: next, level: level, startingIn: from..<max(from, to)) {
                start, values in
                for id in wanted { add(id, start, id == row.owner ? values : values.sumsOnly, row.revision) }
            }
        }
        for (id, part) in parted {
            Spreader.spread(step, from: previous, to: next, level: level, startingIn: from..<max(from, to), part: part)
            { start, values in
                add(id, start, values.sumsOnly, row.revision)
            }
        }
    }

    /// What spread gaps add, per series and bucket start, collected by ``spread(_:level:series:from:to:_:)``.
    package struct Spread {
        var buckets = [Int64: [Int64: (values: BucketValues, revision: Int64)]]()

        package mutating func add(_ series: Int64, _ start: Int64, _ values: BucketValues, _ revision: Int64) {
            var entry = buckets[series]?[start] ?? (.empty, 0)
            entry.values.merge(values)
            entry.revision = max(entry.revision, revision)
            buckets[series, default: [:]][start] = entry
        }

        /// `list` (one series' stored buckets, by start) with the series' spread gaps merged in; the series is done.
        ///
        /// A walk of both in order, not a dictionary of every bucket sorted again: the fleet's billing period is up
        /// to 8,928 5-minute buckets, where a restart's spread gaps touch a few (a tenth of a fleet overview's read,
        /// `perf`).
        package mutating func merge(_ series: Int64, into list: [Bucket], level: RollupLevel) -> [Bucket] {
            guard let spread = buckets.removeValue(forKey: series) else { return list }
            let added = spread.sorted { $0.key < $1.key }
            // A step joins a stored bucket of its start (values merged, the later revision kept), or stands as a
            // bucket of its own.
            func joined(_ bucket: Bucket, _ step: (values: BucketValues, revision: Int64)) -> Bucket {
                var joined = bucket
                joined.values.merge(step.values)
                joined.revision = max(joined.revision, step.revision)
                return joined
            }
            func alone(_ step: (key: Int64, value: (values: BucketValues, revision: Int64))) -> Bucket {
                joined(Bucket(level: level, start: step.key, values: .empty, revision: step.value.revision), step.value)
            }
            var merged = [Bucket]()
            merged.reserveCapacity(list.count + added.count)
            var next = added.startIndex
            for bucket in list {
                while next < added.endIndex, added[next].key < bucket.start {
                    merged.append(alone(added[next]))
                    next += 1
                }
                guard next < added.endIndex, added[next].key == bucket.start else {
                    merged.append(bucket)
                    continue
                }
                merged.append(joined(bucket, added[next].value))
                next += 1
            }
            for step in added[next...] { merged.append(alone(step)) }
            return merged
        }

        /// Series with spread gaps not yet merged (those without stored buckets), in order.
        package var remaining: [Int64] { buckets.keys.sorted() }

        package init() {
        }
    }
}
