import PulseAnalytics

/// Placement: spreads counted steps into the buckets of every rollup level (`docs/windows.md`, "Time classes and
/// spreading"), for the interface and each scope it counts toward, whole or for a part of the step's span. The
/// changes go to the commit's ``PendingCommit/deltas``.
struct BucketPlacement {
    /// The levels kept, in the order of their tables (`BucketKey.level` is an index into them).
    let levels: [RollupLevel]
    /// The steps of one series being added up before they reach the commit's deltas (see ``Run``); nil between.
    var run: Run?

    init(levels: [RollupLevel]) {
        self.levels = levels
    }

    /// Consecutive steps of one series mostly land in the same bucket (sixty one-second steps a minute): they are
    /// added up here first, and reach the commit's table of bucket changes once per bucket.
    struct Run {
        var series: Int64
        var scopes: [Int64]
        var levels: [(start: Int64, values: BucketValues)?]
    }

    /// Adds (or with `sign` −1 takes out) a step's spread at every level, to the interface and its scopes; `parts`
    /// (empty: every scope whole) gives each scope the part of the step's span it gets when not the whole.
    mutating func add(
        _ step: CountedStep, from previous: StepSample, to next: StepSample, series: Int64, scopes all: [Int64],
        parts: [Range<Int64>?] = [], sign: Int64, into commit: inout PendingCommit
    ) {
        var scopes = all
        if parts.contains(where: { $0 != nil }) {
            // Scopes that get a part of the step (a group the agent joined or left during it): spread on their own.
            scopes = []
            for (scope, part) in zip(all, parts) {
                guard let part else {
                    scopes.append(scope)
                    continue
                }
                commit.scopeSeries.insert(scope)
                for (levelIndex, level) in levels.enumerated() {
                    Spreader.spread(step, from: previous, to: next, level: level, sign: sign, part: part) {
                        start, values in
                        commit.deltas[
                            StoreWriter.BucketKey(series: scope, level: levelIndex, start: start), default: .empty
                        ]
                        .merge(values.sumsOnly)
                    }
                }
            }
        }
        if run?.series != series || run?.scopes != scopes {
            flush(into: &commit)
            run = Run(series: series, scopes: scopes, levels: Array(repeating: nil, count: levels.count))
        }
        for (levelIndex, level) in levels.enumerated() {
            Spreader.spread(step, from: previous, to: next, level: level, sign: sign) { start, values in
                if let pending = run!.levels[levelIndex], pending.start == start {
                    run!.levels[levelIndex]!.values.merge(values)
                } else {
                    if let pending = run!.levels[levelIndex] { flush(pending, level: levelIndex, into: &commit) }
                    run!.levels[levelIndex] = (start, values)
                }
            }
        }
    }

    /// Adds what the run holds to the commit's deltas, and ends it.
    mutating func flush(into commit: inout PendingCommit) {
        guard let run else { return }
        for (level, entry) in run.levels.enumerated() {
            if let entry { flush(entry, level: level, into: &commit) }
        }
        self.run = nil
    }

    private func flush(_ entry: (start: Int64, values: BucketValues), level: Int, into commit: inout PendingCommit) {
        guard let run else { return }
        commit.deltas[StoreWriter.BucketKey(series: run.series, level: level, start: entry.start), default: .empty]
            .merge(entry.values)
        guard !run.scopes.isEmpty else { return }
        let sums = entry.values.sumsOnly
        for scope in run.scopes {
            commit.scopeSeries.insert(scope)
            commit.deltas[StoreWriter.BucketKey(series: scope, level: level, start: entry.start), default: .empty]
                .merge(sums)
        }
    }

    /// Spreads a virtual gap of `owner` into the rollup rows, leaving out buckets older than each level keeps at
    /// `now` (``StoreWriter/settleGaps(endedBefore:policy:now:limit:in:)``).
    func settle(
        _ gap: StoreWriter.Gap, of owner: Int64, policy: RetentionPolicy, now: Int64, into commit: inout PendingCommit
    ) {
        for (levelIndex, level) in levels.enumerated() {
            let oldest = policy.keeps(level).map { now - $0 } ?? .min
            let parted = gap.parts.contains { $0 != nil }
            Spreader.spread(gap.step, from: gap.previous, to: gap.next, level: level) { start, values in
                guard start >= oldest else { return }
                commit.deltas[StoreWriter.BucketKey(series: owner, level: levelIndex, start: start), default: .empty]
                    .merge(values)
                for (index, scope) in gap.scopes.enumerated() where !parted || gap.parts[index] == nil {
                    commit.deltas[
                        StoreWriter.BucketKey(series: scope, level: levelIndex, start: start), default: .empty
                    ]
                    .merge(values.sumsOnly)
                }
            }
            for (scope, part) in zip(gap.scopes, gap.parts) {
                guard let part else { continue }
                Spreader.spread(gap.step, from: gap.previous, to: gap.next, level: level, part: part) {
                    start, values in
                    guard start >= oldest else { return }
                    commit.deltas[
                        StoreWriter.BucketKey(series: scope, level: levelIndex, start: start), default: .empty
                    ]
                    .merge(values.sumsOnly)
                }
            }
        }
    }
}

extension StoreWriter {
    /// A bucket of one level (an index into the levels kept) of one series.
    package struct BucketKey: Hashable {
        package var series: Int64
        package var level: Int
        package var start: Int64
    }
}
