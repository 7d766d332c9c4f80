import PulseAnalytics

/// Change tracking, the last stage of a commit: which of its bucket changes reach buckets that billing or remote
/// write has already taken in, so they can be told (`bill_change`, `forward_change`) rather than found again.
struct ChangeTracker {
    /// The levels kept, in the order of their tables (`BucketKey.level` is an index into them).
    let levels: [RollupLevel]
    /// Changes to 5-minute buckets before this are recorded for billing (`bill_change`).
    var billMark: Int64 = 0
    /// Buckets of the finest level before this were forwarded by remote write: late changes to them are recorded in
    /// `forward_change` (0 while remote write has sent nothing).
    var forwardMark: Int64 = 0

    init(levels: [RollupLevel]) {
        self.levels = levels
    }

    /// Reads the marks as the store holds them now (billing and remote write move them between commits).
    mutating func readMarks(in db: some IngestTransaction) async throws {
        billMark = max(try await db.meta("bill_cursor"), try await db.meta("bill_mark"))
        forwardMark = try await db.meta("forward_mark")
    }

    /// The commit's changes to buckets already billed (5-minute buckets before the bill mark) and already forwarded
    /// (interfaces' buckets of the finest level before the forward mark). With `billed` false there are none: a
    /// settled gap moves bytes from its spread into the rows, which changes no interval's figures.
    func changes(
        in commit: PendingCommit, billed: Bool = true
    ) -> (bill: [StoreWriter.ChangeKey: StoreWriter.Change], forward: [StoreWriter.ChangeKey: StoreWriter.Change]) {
        typealias ChangeKey = StoreWriter.ChangeKey
        typealias Change = StoreWriter.Change
        let fiveMinutes = levels.firstIndex(of: .fiveMinutes)
        let billMark = billed && fiveMinutes != nil ? billMark : .min
        var billChanges = [ChangeKey: Change]()
        for span in commit.changedSpans where span.from < billMark {
            var start = RollupLevel.fiveMinutes.bucketStart(span.from)
            while start < min(span.to, billMark) {
                billChanges[ChangeKey(series: span.series, start: start), default: Change()].unknown += 1
                start += RollupLevel.fiveMinutes.width
            }
        }
        // Remote write's late data: changes to buckets of the finest level it has forwarded, interfaces only (it
        // forwards nothing else); one row per series for a virtual gap, whose bytes it must add up again.
        let finest = levels.indices.min { levels[$0] < levels[$1] }
        let forwardMark = billed && finest != nil ? forwardMark : .min
        var forwardChanges = [ChangeKey: Change]()
        if forwardMark > 0, let finest {
            for span in commit.changedSpans where span.from < forwardMark && !commit.scopeSeries.contains(span.series) {
                let start = levels[finest].bucketStart(span.from)
                forwardChanges[ChangeKey(series: span.series, start: start), default: Change()].unknown += 1
            }
        }
        for (key, values) in commit.deltas {
            if key.level == fiveMinutes, key.start < billMark {
                let figures = IntervalFigures(values)
                billChanges[ChangeKey(series: key.series, start: key.start), default: Change()].add(
                    Change(
                        rx: figures.rx, tx: figures.tx, covered: figures.covered, measured: figures.measured,
                        flagged: figures.flagged))
            }
            if key.level == finest, key.start < forwardMark, !commit.scopeSeries.contains(key.series) {
                forwardChanges[ChangeKey(series: key.series, start: key.start), default: Change()].add(
                    Change(rx: values.traffic[.rxBytes], tx: values.traffic[.txBytes]))
            }
        }
        return (billChanges, forwardChanges)
    }
}

extension StoreWriter {
    /// A row of `bill_change` or `forward_change`: a change to a bucket already billed or forwarded.
    package struct ChangeKey: Hashable {
        package var series: Int64
        package var start: Int64
    }

    package struct Change: Equatable {
        package var rx: Int64 = 0
        package var tx: Int64 = 0
        package var covered: Int64 = 0
        /// Changes that cannot be told in bytes (a virtual gap came or went).
        package var unknown: Int64 = 0
        /// Measured time, and flagged time plus implausible steps (``IntervalFigures/flagged``): billing's classes.
        package var measured: Int64 = 0
        package var flagged: Int64 = 0

        mutating func add(_ other: Change) {
            rx &+= other.rx
            tx &+= other.tx
            covered &+= other.covered
            unknown &+= other.unknown
            measured &+= other.measured
            flagged &+= other.flagged
        }
    }
}
