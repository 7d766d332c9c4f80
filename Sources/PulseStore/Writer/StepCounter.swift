import PulseAnalytics
import PulseCore

/// Counting: the steps into, through and out of one logical interface's samples of a batch, in counter order,
/// wherever that order puts them (after the last sample, before the first, or inside a gap, whose step is taken out
/// first); each step counted (`docs/windows.md`, "Counting a step"), given the scopes it counts toward
/// (`StepCounter+Scopes.swift`) and handed to ``BucketPlacement``, or to the unplaced totals. Each series' first and
/// last sample are cached here.
struct StepCounter {
    let settings: StoreSettings
    /// Each series' first and last sample in counter order; bounded by ``StoreWriter/begin(in:)``.
    var states: [Int64: StoreWriter.SeriesState] = [:]

    /// Takes the first and last samples another writer moved, for the series this one holds.
    mutating func apply(_ changed: [Int64: StoreWriter.SeriesState]) {
        for (series, state) in changed where states[series] != nil { states[series] = state }
    }

    /// Counts the steps of `samples` (one logical interface's samples of one batch, in counter order). See
    /// `docs/windows.md`, "Late and out-of-order data".
    mutating func place(
        _ samples: [StepSample], series: Int64, name: InterfaceName, agent: StoreWriter.AgentRow,
        catalogue: inout SeriesCatalogue, placement: inout BucketPlacement, commit: inout PendingCommit,
        in db: some IngestTransaction
    ) async throws {
        guard let first = samples.first, let last = samples.last else { return }
        var steps = [(StepSample, StepSample)]()
        for index in samples.indices.dropFirst() { steps.append((samples[index - 1], samples[index])) }
        if let state = try await self.state(of: series, in: db) {
            if state.last.position < first.position {
                steps.insert((state.last, first), at: 0)
                states[series]!.last = last
            } else if last.position < state.first.position {
                steps.append((last, state.first))
                states[series]!.first = first
            } else if let gap = try await gap(of: series, around: first.position, last.position, in: db) {
                if gap.step.timing == .unplaced {
                    commit.addUnplaced(gap.step.counted, series: series, scopes: gap.scopes, at: gap.recorded, sign: -1)
                } else {
                    if !gap.isVirtual {
                        placement.add(
                            gap.step, from: gap.previous, to: gap.next, series: series, scopes: gap.scopes,
                            parts: gap.parts, sign: -1, into: &commit)
                    }
                    let span = Self.span(of: gap.step, from: gap.previous, to: gap.next)
                    commit.markChanged(from: span.lowerBound, to: span.upperBound, series: [series] + gap.scopes)
                }
                try await db.deleteGap(series: series, previous: gap.previous.position)
                steps.insert((gap.previous, first), at: 0)
                steps.append((last, gap.next))
            } else {
                // Inside a measured or idle step, or on top of samples already stored: that step counted these
                // bytes already (`docs/windows.md`); keep the rollups as they are and say so.
                commit.anomalies.append(
                    Anomaly(
                        series: series, timestamp: first.time, kind: "already-counted",
                        detail:
                            "\(agent.identity.name)/\(name): batch \(first.order) falls inside a step already counted"
                    ))
                return
            }
        } else {
            states[series] = StoreWriter.SeriesState(first: first, last: last)
        }
        // The scopes of a step change only with the interface's kind or relations or the agent's groups, so the
        // steps of a batch mostly share them: working them out for every step took 40 % of the writer's time.
        var known: (kind: InterfaceKind, relation: InterfaceRelation, time: Int64, scopes: [Int64])?
        var parts = [Range<Int64>?]()
        for (previous, next) in steps {
            let step = CountedStep.between(
                previous, next, maximumRate: settings.maximumRate, maximumSpan: settings.maximumAge,
                outageAfter: settings.outageAfter)
            if step.timing == .unplaced {
                // No time to place it at: its counts go to the unplaced totals of the day it was received (the later
                // of its samples' receive times), toward the scopes it would count for then.
                let recorded = max(previous.received, next.received, 0)
                var received = next
                received.time = recorded
                let scopes = try await self.scopes(
                    of: name, agent: agent, at: received, catalogue: &catalogue, commit: &commit, in: db)
                commit.addUnplaced(step.counted, series: series, scopes: scopes, at: recorded, sign: 1)
                try await Self.saveGap(
                    previous: previous, next: next, scopes: scopes, isVirtual: false, step: step, parts: [],
                    recorded: recorded, series: series, revision: commit.revision, in: db)
                commit.unplacedSteps += 1
                continue
            }
            // Groups by the time of each part of the step's span (`docs/windows.md`, "Scopes"): an instant step's at
            // its end; a step with a span at its last millisecond, unless the agent joined or left a group during it.
            let start = step.timing == .instant ? next.time : CountedStep.start(from: previous, to: next)
            let end = step.timing == .instant ? next.time : next.time - 1
            let scopes: [Int64]
            if let known, known.kind == next.kind, known.relation == next.relation,
                AgentDirectory.sameGroups(agent.memberships, at: known.time, start),
                AgentDirectory.sameGroups(agent.memberships, at: known.time, end)
            {
                scopes = known.scopes
                parts = []
            } else if AgentDirectory.sameGroups(agent.memberships, at: start, end) {
                var at = next
                at.time = end
                scopes = try await self.scopes(
                    of: name, agent: agent, at: at, catalogue: &catalogue, commit: &commit, in: db)
                parts = []
                known = (next.kind, next.relation, end, scopes)
            } else {
                (scopes, parts) = try await self.scopes(
                    of: name, agent: agent, at: next, from: start, catalogue: &catalogue, commit: &commit, in: db)
                known = nil
            }
            // A gap or outage step stays virtual (reads spread it) while late data may still split it; see
            // SQLiteSchema.
            let isVirtual = step.timing.isInterpolated
            if isVirtual {
                let span = Self.span(of: step, from: previous, to: next)
                commit.markChanged(from: span.lowerBound, to: span.upperBound, series: [series] + scopes)
            } else {
                placement.add(
                    step, from: previous, to: next, series: series, scopes: scopes, parts: parts, sign: 1,
                    into: &commit)
            }
            if step.timing.mayBeSplit {
                try await Self.saveGap(
                    previous: previous, next: next, scopes: scopes, isVirtual: isVirtual, step: step, parts: parts,
                    recorded: 0, series: series, revision: commit.revision, in: db)
            }
            if step.events.contains(.implausible) {
                commit.anomalies.append(
                    Anomaly(
                        series: series, timestamp: next.time, kind: "implausible",
                        detail: "\(agent.identity.name)/\(name): a step counted above the link's capacity"))
            }
        }
        commit.changedStates.insert(series)
    }

    /// Saves a step that may be split later (``StoreWriter/Gap``): built and awaited here, in a function the optimizer
    /// leaves alone.
    ///
    /// Swift 6.3.1's release builds miscompiled this call where it stood, inside
    /// ``place(_:series:name:agent:catalogue:placement:commit:in:)``: the await of `db.saveGap` wrote 8 bytes past the
    /// end of `place`'s async frame, into the task allocator's memory, and the daemon later died of heap corruption
    /// ("double free or corruption") applying a batch whose interface had a gap. Moved into a function of its own but
    /// optimized, the same call ran the task's deallocation against no task. Unoptimized, it is right. Found with
    /// AddressSanitizer on a release build (`docs/reliability.md`, "Release builds under AddressSanitizer"); debug
    /// builds never showed it. A gap is saved a few times per outage, so the cost is nil.
    @inline(never) @_optimize(none)
    private static func saveGap(
        previous: StepSample, next: StepSample, scopes: [Int64], isVirtual: Bool, step: CountedStep,
        parts: [Range<Int64>?], recorded: Int64, series: Int64, revision: Int64, in db: some IngestTransaction
    ) async throws {
        var gap = StoreWriter.Gap(
            previous: previous, next: next, scopes: scopes, isVirtual: isVirtual, step: step, parts: parts)
        gap.recorded = recorded
        try await db.saveGap(gap, series: series, revision: revision)
    }

    /// Writes the first and last samples of the `changed` series (once each, however many batches moved them), and
    /// empties `changed`.
    func writeStates(_ changed: inout Set<Int64>, in db: some IngestTransaction) async throws {
        try await db.writeStates(changed.compactMap { series in states[series].map { (series, $0) } })
        changed.removeAll(keepingCapacity: true)
    }

    private mutating func state(of series: Int64, in db: some IngestTransaction) async throws -> StoreWriter
        .SeriesState?
    {
        if let known = states[series] { return known }
        guard let state = try await db.seriesState(series) else { return nil }
        states[series] = state
        return state
    }

    /// The gap of `series` that holds the samples from `first` to `last`, if one does.
    private func gap(
        of series: Int64, around first: SamplePosition, _ last: SamplePosition, in db: some IngestTransaction
    ) async throws -> StoreWriter.Gap? {
        guard let gap = try await db.gap(series: series, before: first), last < gap.next.position else { return nil }
        return gap
    }

    /// The time a step's buckets cover: from its start (a new epoch's start, not the sample before it, which may lie
    /// decades back on a host that booted in 1970) to its end; for an instant step, the millisecond of its end.
    static func span(of step: CountedStep, from previous: StepSample, to next: StepSample) -> Range<Int64> {
        guard step.timing != .instant else { return next.time..<Saturating.sum(next.time, 1) }
        return CountedStep.start(from: previous, to: next)..<next.time
    }
}

extension StoreWriter {
    /// A series' first and last sample in counter order.
    package struct SeriesState {
        package var first: StepSample
        package var last: StepSample

        package init(first: StepSample, last: StepSample) {
            self.first = first
            self.last = last
        }
    }

    /// A step late data may still split (see `docs/windows.md`): its two samples, the scopes it counted toward, and
    /// the step as it was counted (taken out as it went in, whatever the settings are by then).
    package struct Gap {
        package var previous: StepSample
        package var next: StepSample
        package var scopes: [Int64]
        /// Not counted into the rollups (reads spread it) while late data may split it.
        package var isVirtual: Bool
        package var step: CountedStep
        /// When an unplaced step was received: its counts are in that day's unplaced totals.
        var recorded: Int64 = 0
        /// For each of `scopes`, the part of the step's span it gets when not the whole (empty: all whole).
        package var parts: [Range<Int64>?] = []
    }
}

extension StoreWriter.Gap {
    /// The times the store files the step under: its span, or for an unplaced step (whose times cannot be placed)
    /// when it was received, both ends.
    package var span: (from: Int64, to: Int64) {
        step.timing == .unplaced
            ? (recorded, recorded) : (min(previous.time, next.time), max(previous.time, next.time))
    }

    /// A gap from its stored columns (`from` is the start of its ``span``).
    package init(previous: [UInt8], next: [UInt8], scopes: [UInt8], isVirtual: Bool, step: [UInt8], from: Int64) throws
    {
        let step = try SampleCoding.decodeStep(step)
        let (ids, parts) = try SampleCoding.decodeScopes(scopes)
        self.init(
            previous: try SampleCoding.decode(previous), next: try SampleCoding.decode(next),
            scopes: ids, isVirtual: isVirtual, step: step, recorded: step.timing == .unplaced ? from : 0,
            parts: parts)
    }
}
