import PulseAnalytics
import PulseCore

/// The ingest side of every store: deduplication, counted steps in counter order, spreading into every rollup level
/// and scope, late data, raw chunks, link facts, memberships. Works inside one write transaction at a time, through
/// the store's ``IngestTransaction``; its caches mirror rows the transaction may roll back, so they are dropped after
/// a failure, and the caches of rows another writer may change (states, ranges, agents, facts) are brought up to
/// date when another writer committed since this one last did (``IngestTransaction/lockRevision()``,
/// ``IngestTransaction/changes(after:)``).
package struct StoreWriter {
    let settings: StoreSettings

    package struct AgentRow {
        var id: Int64
        var identity: AgentIdentity
        var lastSeen: Int64
        /// Memberships, oldest first.
        var memberships: [Membership]

        package init(id: Int64, identity: AgentIdentity, lastSeen: Int64, memberships: [Membership]) {
            self.id = id
            self.identity = identity
            self.lastSeen = lastSeen
            self.memberships = memberships
        }
    }

    struct SeriesKey: Hashable {
        var kind: SeriesKind
        var agent: Int64
        var name: [UInt8]
    }

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

    /// A row of the unplaced totals: a series and the UTC day its steps were received.
    package struct UnplacedKey: Hashable {
        package var series: Int64
        package var day: Int64
    }

    package struct BucketKey: Hashable {
        package var series: Int64
        package var level: Int
        package var start: Int64
    }

    /// A row of `bill_change` or `forward_change`: a change to a bucket already billed or forwarded.
    package struct ChangeKey: Hashable {
        package var series: Int64
        package var start: Int64
    }

    package struct Change {
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

    var agents: [String: AgentRow] = [:]
    var streams: [StreamKey: Int64] = [:]
    var ranges: [Int64: [ClosedRange<UInt64>]] = [:]
    /// Ranges held in ``ranges``, about (bounds the cache, with ``streams``).
    var cachedRanges = 0
    var series: [SeriesKey: Int64] = [:]
    var epochs: [CounterEpoch: Int64] = [:]
    var states: [Int64: SeriesState] = [:]
    var facts: [Int64: LinkState] = [:]
    package var revision: Int64?
    /// Changes to 5-minute buckets before this are recorded for billing (`bill_change`).
    var billMark: Int64 = 0
    /// Buckets of the finest level before this were forwarded by remote write: late changes to them are recorded in
    /// `forward_change` (0 while remote write has sent nothing).
    var forwardMark: Int64 = 0

    /// The commit being built: bucket changes, spans changed by virtual gaps, anomalies, and its revision.
    package var deltas: [BucketKey: BucketValues] = [:]
    var changedSpans: [(series: Int64, from: Int64, to: Int64)] = []
    /// The host, group and fleet series the commit changed (remote write forwards interfaces only).
    var scopeSeries = Set<Int64>()
    var changedStates = Set<Int64>()
    /// Changes to the unplaced totals (`docs/windows.md`, "Time that cannot be placed"), and how many steps the
    /// commit could not place.
    package var unplaced: [UnplacedKey: UnplacedTotals] = [:]
    var unplacedSteps: Int64 = 0
    var run: Run?
    var anomalies: [Anomaly] = []
    package var pendingRevision: Int64 = 0
    /// Whether the commit may change what a catalogue holds (series, link facts, agents' names and labels,
    /// memberships; not last-seen times): see ``SQLiteStore/catalogueGeneration()``.
    package var catalogueChanged = false

    struct StreamKey: Hashable {
        var agent: Int64
        var stream: UInt64
    }

    package init(settings: StoreSettings) {
        self.settings = settings
    }

    /// Forgets everything cached (after a failed commit, whose rows were rolled back).
    package mutating func reset() {
        self = StoreWriter(settings: settings)
    }

    /// Forgets the cached rows another writer may change; ids, which never change, stay.
    mutating func forgetSharedRows() {
        agents.removeAll()
        ranges.removeAll()
        cachedRanges = 0
        streams.removeAll()
        states.removeAll()
        facts.removeAll()
    }

    /// The rows other writers changed since this one last committed (``IngestTransaction/changes(after:)``): the
    /// new first and last samples of series, link facts, and every sequence range of the streams whose ranges
    /// changed; agents whose labels or memberships changed are only named, and read again when next needed.
    package struct SharedChanges {
        package var states: [Int64: SeriesState] = [:]
        package var facts: [Int64: LinkState] = [:]
        package var ranges: [Int64: [ClosedRange<UInt64>]] = [:]
        package var agents = Set<Int64>()

        package init(
            states: [Int64: SeriesState] = [:], facts: [Int64: LinkState] = [:],
            ranges: [Int64: [ClosedRange<UInt64>]] = [:], agents: Set<Int64> = Set<Int64>()
        ) {
            self.states = states
            self.facts = facts
            self.ranges = ranges
            self.agents = agents
        }
    }

    /// Brings the caches up to date with what other writers committed. Only rows this writer holds are taken: the
    /// others are read when first needed, so each daemon holds the rows of its own agents, not the whole fleet's.
    mutating func apply(_ changes: SharedChanges) {
        for (series, state) in changes.states where states[series] != nil { states[series] = state }
        for (series, state) in changes.facts where facts[series] != nil { facts[series] = state }
        for (stream, list) in changes.ranges where ranges[stream] != nil { ranges[stream] = list }
        if !changes.agents.isEmpty {
            agents = agents.filter { !changes.agents.contains($0.value.id) }
        }
    }

    // MARK: The commit

    package mutating func ingest(
        _ batches: [IngestBatch], receivedAt now: Int64, willStore: ((Int) -> Void)? = nil,
        in db: some IngestTransaction
    ) throws -> [IngestOutcome] {
        let revision = try begin(in: db)
        var outcomes = [IngestOutcome]()
        outcomes.reserveCapacity(batches.count)
        var stored: Int64 = 0
        var values: Int64 = 0
        // A relabelling counts as a change even when every batch was a duplicate: other writers learn of it from
        // the revision moving (``begin(in:)``).
        var relabelled = false
        for (index, batch) in batches.enumerated() {
            willStore?(index)
            let now = batch.receivedAt ?? now
            var agent = try agentRow(batch.agent, at: now, in: db)
            // Labels move forward in receive time only: a batch received before the agent was last moved (a
            // reload's move, applied while the batch waited in the journal) keeps the groups it finds.
            if agent.identity.labels != batch.agent.labels && now >= Self.lastMove(agent.memberships) {
                try relabel(&agent, to: batch.agent.labels, at: now, in: db)
                relabelled = true
            }
            agents[batch.agent.name] = agent
            guard try recordFirstDelivery(agent: agent.id, batch: batch, in: db) else {
                outcomes.append(.duplicate)
                continue
            }
            try store(batch, agent: agent, receivedAt: now, in: db)
            outcomes.append(.stored)
            stored += 1
            values += Int64(batch.valueCount)
        }
        willStore?(batches.count)
        if stored > 0 || relabelled || !deltas.isEmpty || !changedSpans.isEmpty || !unplaced.isEmpty {
            try writeStates(in: db)
            try writeDeltas(revision: revision, in: db)
            if !unplaced.isEmpty { try db.writeUnplaced(unplaced, revision: revision) }
            for anomaly in anomalies { try db.insertAnomaly(anomaly, revision: revision) }
            try db.advanceTotals(revision: revision, batches: stored, values: values, unplacedSteps: unplacedSteps)
            self.revision = revision
        }
        return outcomes
    }

    /// Clears the commit being built, takes the store's revision, and returns the commit's.
    package mutating func begin(in db: some IngestTransaction) throws -> Int64 {
        deltas.removeAll(keepingCapacity: true)
        changedSpans.removeAll(keepingCapacity: true)
        scopeSeries.removeAll(keepingCapacity: true)
        changedStates.removeAll(keepingCapacity: true)
        unplaced.removeAll(keepingCapacity: true)
        unplacedSteps = 0
        run = nil
        anomalies.removeAll()
        catalogueChanged = false
        // Between commits nothing is pending in them: the caches of series' samples and facts stay bounded however
        // many interfaces agents name (a miss costs a lookup).
        if states.count >= 200_000 || facts.count >= 200_000 {
            states.removeAll(keepingCapacity: true)
            facts.removeAll(keepingCapacity: true)
        }
        if agents.count >= 100_000 { agents.removeAll(keepingCapacity: true) }
        let current = try db.lockRevision()
        if current != revision {
            // A revision lower than the last one seen means the database went back (see PostgresStore.WriterSide).
            if let last = revision, current > last, let changes = try db.changes(after: last) {
                apply(changes)
            } else {
                forgetSharedRows()
            }
            revision = current
        }
        billMark = max(try db.meta("bill_cursor"), try db.meta("bill_mark"))
        forwardMark = try db.meta("forward_mark")
        pendingRevision = current + 1
        return pendingRevision
    }

    // MARK: Agents, labels, deduplication

    private mutating func agentRow(
        _ identity: AgentIdentity, at now: Int64, in db: some IngestTransaction
    ) throws -> AgentRow {
        if var known = agents[identity.name] {
            if known.identity.hostname == identity.hostname, known.identity.version == identity.version,
                now - known.lastSeen < 60_000
            {
                return known
            }
            if known.identity.hostname != identity.hostname || known.identity.version != identity.version {
                catalogueChanged = true
            }
            try db.touchAgent(id: known.id, hostname: identity.hostname, version: identity.version, at: now)
            known.identity.hostname = identity.hostname
            known.identity.version = identity.version
            known.lastSeen = now
            return known
        }
        let (id, labels) = try db.upsertAgent(identity, at: now)
        catalogueChanged = true
        var stored = identity
        stored.labels = labels
        return AgentRow(
            id: id, identity: stored, lastSeen: now, memberships: try db.memberships(agent: id, name: identity.name))
    }

    /// Moves known agents to new labels at `now`, as the daemon's configuration now gives them (a reload or a
    /// start with new `[labels.*]`, `docs/windows.md`, "Scopes"), so a host moved while it is away is moved at once,
    /// not when it comes back. Agents never seen, and agents whose last move is later than `now`, are left as they
    /// are. Returns the names of the agents moved.
    package mutating func relabel(
        _ labels: [String: Labels], at now: Int64, in db: some IngestTransaction
    ) throws -> [String] {
        let revision = try begin(in: db)
        var moved = [String]()
        for (name, new) in labels.sorted(by: { $0.key < $1.key }) {
            var agent: AgentRow
            if let cached = agents[name] {
                agent = cached
            } else if let row = try db.agent(named: name) {
                agent = AgentRow(
                    id: row.id, identity: row.identity, lastSeen: row.lastSeen,
                    memberships: try db.memberships(agent: row.id, name: name))
            } else {
                continue
            }
            guard agent.identity.labels != new, now >= Self.lastMove(agent.memberships) else { continue }
            try relabel(&agent, to: new, at: now, in: db)
            agents[name] = agent
            moved.append(name)
        }
        if !moved.isEmpty {
            try writeStates(in: db)
            try writeDeltas(revision: revision, in: db)
            try db.advanceTotals(revision: revision, batches: 0, values: 0, unplacedSteps: 0)
            self.revision = revision
        }
        return moved
    }

    /// When the agent's groups last changed (its first memberships' beginning when they never did).
    static func lastMove(_ memberships: [Membership]) -> Int64 {
        var last = Int64.min
        for membership in memberships { last = max(last, membership.to ?? membership.from, membership.from) }
        return last
    }

    /// Records that the agent's labels changed at `now`: memberships of groups it left end, new ones begin.
    private mutating func relabel(
        _ agent: inout AgentRow, to labels: Labels, at now: Int64, in db: some IngestTransaction
    ) throws {
        let groups = Set(labels.pairs.map { GroupKey(key: $0.key, value: $0.value) })
        for index in agent.memberships.indices where agent.memberships[index].to == nil {
            let membership = agent.memberships[index]
            guard !groups.contains(membership.group) else { continue }
            agent.memberships[index].to = now
            try db.endMembership(agent: agent.id, membership, at: now)
        }
        let current = Set(agent.memberships.filter { $0.to == nil }.map(\.group))
        for group in groups.subtracting(current).sorted() {
            agent.memberships.append(Membership(agent: agent.identity.name, group: group, from: now, to: nil))
            try db.beginMembership(agent: agent.id, group: group, at: now)
        }
        agent.identity.labels = labels
        try db.setLabels(agent: agent.id, labels)
        catalogueChanged = true
    }

    /// Whether this is the first delivery of the batch; if so it is recorded (and its drops counted).
    private mutating func recordFirstDelivery(
        agent: Int64, batch: IngestBatch, in db: some IngestTransaction
    ) throws -> Bool {
        let key = StreamKey(agent: agent, stream: batch.stream)
        let stream: Int64
        if let known = streams[key] {
            stream = known
        } else {
            // Agents restart (a stream each run) and come and go: the caches stay bounded; a miss costs a lookup.
            if streams.count >= 100_000 || cachedRanges >= 1_000_000 {
                streams.removeAll(keepingCapacity: true)
                ranges.removeAll(keepingCapacity: true)
                cachedRanges = 0
            }
            stream = try db.streamID(agent: agent, stream: batch.stream)
            streams[key] = stream
            ranges[stream] = try db.ranges(stream: stream)
            cachedRanges += ranges[stream]?.count ?? 0
        }
        var known = ranges[stream] ?? []
        let sequence = batch.sequence
        // The range that starts after the sequence; the one before it may hold or end just before it.
        let after = known.firstIndex { $0.lowerBound > sequence } ?? known.count
        if after > 0, known[after - 1].contains(sequence) { return false }
        let joinsBefore = after > 0 && known[after - 1].upperBound &+ 1 == sequence
        let joinsAfter = after < known.count && known[after].lowerBound == sequence &+ 1
        switch (joinsBefore, joinsAfter) {
        case (true, true):
            let merged = known[after - 1].lowerBound...known[after].upperBound
            try db.deleteRange(stream: stream, first: known[after].lowerBound)
            try db.updateRange(stream: stream, first: merged.lowerBound, to: merged)
            known[after - 1] = merged
            known.remove(at: after)
        case (true, false):
            known[after - 1] = known[after - 1].lowerBound...sequence
            try db.updateRange(stream: stream, first: known[after - 1].lowerBound, to: known[after - 1])
        case (false, true):
            try db.updateRange(stream: stream, first: known[after].lowerBound, to: sequence...known[after].upperBound)
            known[after] = sequence...known[after].upperBound
        case (false, false):
            guard known.count < settings.maximumSequenceRanges else {
                throw StoreError.invalidBatch(
                    "batch \(sequence) would be stream \(Hex.string(batch.stream, width: 16))'s \(known.count + 1)th separate range of sequence numbers, more than [limits] sequence_ranges_per_stream (\(settings.maximumSequenceRanges))"
                )
            }
            try db.insertRange(stream: stream, sequence...sequence)
            known.insert(sequence...sequence, at: after)
            cachedRanges += 1
        }
        ranges[stream] = known
        if batch.droppedBefore > 0 {
            try db.addDropped(stream: stream, Int64(clamping: batch.droppedBefore))
        }
        return true
    }

    // MARK: Samples

    private mutating func store(
        _ batch: IngestBatch, agent: AgentRow, receivedAt now: Int64, in db: some IngestTransaction
    ) throws {
        // The connection checked these before the batch was journaled; a journal of an older daemon was not.
        if let why = BatchRules.violation(
            sequence: batch.sequence, order: batch.order, droppedBefore: batch.droppedBefore,
            lastTimestamp: batch.lastTimestamp)
        {
            throw StoreError.invalidBatch(why)
        }
        for section in batch.sections {
            guard section.timestamps.allSatisfy({ $0 >= 0 && $0 <= BatchRules.latestTimestamp }) else {
                throw StoreError.invalidBatch("batch \(batch.sequence) has a timestamp out of range")
            }
        }
        let order = Int64(batch.order)
        let clock = ClockCheck(lastTimestamp: batch.lastTimestamp, receivedAt: now, settings: settings)
        let shift = clock.shift
        if shift != 0 {
            anomalies.append(
                Anomaly(
                    series: 0, timestamp: now, kind: "clock-ahead",
                    detail:
                        "agent \(agent.identity.name): batch \(batch.order) ended \(Units.formatDuration(-shift)) ahead of the daemon's clock; moved back"
                ))
        } else if clock.tooFarAhead {
            anomalies.append(
                Anomaly(
                    series: 0, timestamp: now, kind: "clock-ahead",
                    detail:
                        "agent \(agent.identity.name): batch \(batch.order) ended \(Units.formatDuration(clock.ahead)) ahead of the daemon's clock, more than [ingest] max_skew: not moved, its samples from the future are unplaced"
                ))
        }
        // Sections of one logical interface (two epochs in one batch) are counted together, by tick.
        var byName = [InterfaceName: [StepSample]]()
        var names = [InterfaceName]()
        var raw = RawBatch()
        var unplacedTimes: (from: Int64, to: Int64)?
        for section in batch.sections {
            let name = section.descriptor.name
            let seriesID = try self.seriesID(.interface, agent: agent.id, name: name.bytes, at: now, in: db)
            let epoch = try epochID(section.descriptor.epoch, in: db)
            raw.append(series: seriesID, epoch: epoch, firstTick: section.ticks[0], chunk: section.chunk)
            if byName[name] == nil { names.append(name) }
            var link = 0
            var current: LinkState?
            var samples = byName[name] ?? []
            samples.reserveCapacity(samples.count + section.ticks.count)
            for (index, tick) in section.ticks.enumerated() {
                while link < section.links.count, section.links[link].tick <= tick {
                    current = section.links[link].state
                    link += 1
                }
                let time = section.timestamps[index] + shift
                let placeable = clock.placeable(time)
                if !placeable {
                    unplacedTimes = (min(unplacedTimes?.from ?? time, time), max(unplacedTimes?.to ?? time, time))
                }
                samples.append(
                    StepSample(
                        order: order, tick: tick, time: time, epoch: epoch, width: section.descriptor.epoch.width,
                        counters: section.traffic[index], interval: batch.interval, heartbeat: batch.heartbeat,
                        speed: current?.speedMbps ?? 0, kind: current?.kind ?? .unknown,
                        relation: current?.relation ?? [], clockShifted: shift != 0, placeable: placeable,
                        received: now, epochBegan: section.descriptor.began.map { Saturating.sum($0, shift) }))
            }
            byName[name] = samples
            if let latest = section.links.last {
                let index = section.ticks.firstIndex(of: latest.tick) ?? 0
                try updateFacts(seriesID, latest.state, at: section.timestamps[index] + shift, in: db)
            }
        }
        let times = batch.sections.flatMap { [$0.timestamps[0], $0.timestamps[$0.timestamps.count - 1]] }
        let rawTo = (times.max() ?? 0) + shift
        // Raw samples are kept by time, for `[retention] raw`: a batch that ends at a time that cannot be placed
        // (1970, the far future) keeps none, or it would be filed under days retention never reaches (and on
        // PostgreSQL make a partition for each); its counts are in the unplaced totals.
        if clock.placeable(rawTo) {
            try db.insertRaw(
                raw, agent: agent.id, order: order, shift: shift, interval: batch.interval, heartbeat: batch.heartbeat,
                from: (times.min() ?? 0) + shift, to: rawTo)
        }
        let unplacedBefore = unplacedSteps
        var unplacedInterfaces = 0
        for name in names {
            var samples = byName[name]!
            if samples.count > 1 { samples.sort { $0.tick < $1.tick } }
            let seriesID = try self.seriesID(.interface, agent: agent.id, name: name.bytes, at: now, in: db)
            let before = unplacedSteps
            try place(samples, series: seriesID, name: name, agent: agent, in: db)
            if unplacedSteps > before { unplacedInterfaces += 1 }
        }
        if unplacedSteps > unplacedBefore {
            let span = unplacedTimes.map { " (samples from \(RFC3339.text($0.from)) to \(RFC3339.text($0.to)))" } ?? ""
            anomalies.append(
                Anomaly(
                    series: 0, timestamp: now, kind: "unplaced",
                    detail:
                        "agent \(agent.identity.name): \(unplacedSteps - unplacedBefore) step(s) of batch \(batch.order) on \(unplacedInterfaces) interface(s) could not be placed in time\(span): counted as unplaced ([ingest] max_age, max_skew)"
                ))
        }
    }

    /// Keeps the interface's latest link facts, and a history row when they change.
    private mutating func updateFacts(
        _ series: Int64, _ state: LinkState, at time: Int64, in db: some IngestTransaction
    ) throws {
        if facts[series] == nil { facts[series] = try db.facts(series: series) }
        guard facts[series] != state else { return }
        facts[series] = state
        try db.setFacts(series: series, state, at: time)
        catalogueChanged = true
    }

    /// Link facts from their six columns (speed_mbps, operstate, carrier, mtu, link_kind, relation).
    package static func linkState(_ columns: [Int64]) -> LinkState {
        LinkState(
            speedMbps: columns[0] > 0 ? UInt32(truncatingIfNeeded: columns[0]) : nil,
            operState: OperState(rawValue: UInt8(truncatingIfNeeded: columns[1])) ?? .unknown,
            carrier: columns[2] == 2 ? nil : columns[2] == 1, mtu: UInt32(truncatingIfNeeded: columns[3]),
            kind: InterfaceKind(rawValue: UInt8(truncatingIfNeeded: columns[4])) ?? .unknown,
            relation: InterfaceRelation(rawValue: UInt8(truncatingIfNeeded: columns[5])))
    }

    // MARK: Placing samples in counter order

    /// Counts the steps into, through and out of `samples` (one logical interface's samples of one batch, in
    /// counter order) wherever their order puts them: after the last sample, before the first, or inside a gap
    /// (whose step is taken out first). See `docs/windows.md`, "Late and out-of-order data".
    package mutating func place(
        _ samples: [StepSample], series: Int64, name: InterfaceName, agent: AgentRow, in db: some IngestTransaction
    ) throws {
        guard let first = samples.first, let last = samples.last else { return }
        var steps = [(StepSample, StepSample)]()
        for index in samples.indices.dropFirst() { steps.append((samples[index - 1], samples[index])) }
        if let state = try self.state(of: series, in: db) {
            if state.last.position < first.position {
                steps.insert((state.last, first), at: 0)
                states[series]!.last = last
            } else if last.position < state.first.position {
                steps.append((last, state.first))
                states[series]!.first = first
            } else if let gap = try gap(of: series, around: first.position, last.position, in: db) {
                if gap.step.timing == .unplaced {
                    addUnplaced(gap.step.counted, series: series, scopes: gap.scopes, at: gap.recorded, sign: -1)
                } else {
                    if !gap.isVirtual {
                        add(
                            gap.step, from: gap.previous, to: gap.next, series: series, scopes: gap.scopes,
                            parts: gap.parts, sign: -1)
                    }
                    let span = Self.span(of: gap.step, from: gap.previous, to: gap.next)
                    markChanged(from: span.lowerBound, to: span.upperBound, series: [series] + gap.scopes)
                }
                try db.deleteGap(series: series, previous: gap.previous.position)
                steps.insert((gap.previous, first), at: 0)
                steps.append((last, gap.next))
            } else {
                // Inside a measured or idle step, or on top of samples already stored: that step counted these
                // bytes already (`docs/windows.md`); keep the rollups as they are and say so.
                anomalies.append(
                    Anomaly(
                        series: series, timestamp: first.time, kind: "already-counted",
                        detail:
                            "\(agent.identity.name)/\(name): batch \(first.order) falls inside a step already counted"
                    ))
                return
            }
        } else {
            states[series] = SeriesState(first: first, last: last)
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
                let scopes = try self.scopes(of: name, agent: agent, at: received, in: db)
                addUnplaced(step.counted, series: series, scopes: scopes, at: recorded, sign: 1)
                try db.saveGap(
                    Gap(
                        previous: previous, next: next, scopes: scopes, isVirtual: false, step: step,
                        recorded: recorded),
                    series: series, revision: pendingRevision)
                unplacedSteps += 1
                continue
            }
            // Groups by the time of each part of the step's span (`docs/windows.md`, "Scopes"): an instant step's at
            // its end; a step with a span at its last millisecond, unless the agent joined or left a group during it.
            let start = step.timing == .instant ? next.time : CountedStep.start(from: previous, to: next)
            let end = step.timing == .instant ? next.time : next.time - 1
            let scopes: [Int64]
            if let known, known.kind == next.kind, known.relation == next.relation,
                Self.sameGroups(agent.memberships, at: known.time, start),
                Self.sameGroups(agent.memberships, at: known.time, end)
            {
                scopes = known.scopes
                parts = []
            } else if Self.sameGroups(agent.memberships, at: start, end) {
                var at = next
                at.time = end
                scopes = try self.scopes(of: name, agent: agent, at: at, in: db)
                parts = []
                known = (next.kind, next.relation, end, scopes)
            } else {
                (scopes, parts) = try self.scopes(of: name, agent: agent, at: next, from: start, in: db)
                known = nil
            }
            // A gap or outage step stays virtual (reads spread it) while late data may still split it; see
            // SQLiteSchema.
            let isVirtual = step.timing.isInterpolated
            if isVirtual {
                let span = Self.span(of: step, from: previous, to: next)
                markChanged(from: span.lowerBound, to: span.upperBound, series: [series] + scopes)
            } else {
                add(step, from: previous, to: next, series: series, scopes: scopes, parts: parts, sign: 1)
            }
            if step.timing.mayBeSplit {
                try db.saveGap(
                    Gap(
                        previous: previous, next: next, scopes: scopes, isVirtual: isVirtual, step: step, parts: parts),
                    series: series, revision: pendingRevision)
            }
            if step.events.contains(.implausible) {
                anomalies.append(
                    Anomaly(
                        series: series, timestamp: next.time, kind: "implausible",
                        detail: "\(agent.identity.name)/\(name): a step counted above the link's capacity"))
            }
        }
        changedStates.insert(series)
    }

    /// Writes the first and last samples of the series this commit moved (once each, however many batches did).
    package mutating func writeStates(in db: some IngestTransaction) throws {
        try db.writeStates(changedStates.compactMap { series in states[series].map { (series, $0) } })
        changedStates.removeAll(keepingCapacity: true)
    }

    private mutating func state(of series: Int64, in db: some IngestTransaction) throws -> SeriesState? {
        if let known = states[series] { return known }
        guard let state = try db.seriesState(series) else { return nil }
        states[series] = state
        return state
    }

    /// The gap of `series` that holds the samples from `first` to `last`, if one does.
    private func gap(
        of series: Int64, around first: SamplePosition, _ last: SamplePosition, in db: some IngestTransaction
    ) throws -> Gap? {
        guard let gap = try db.gap(series: series, before: first), last < gap.next.position else { return nil }
        return gap
    }

    /// Adds (or with `sign` −1 takes out) an unplaced step's counts to the unplaced totals of the interface and its
    /// scopes, on the UTC day of `time`, when it was received.
    mutating func addUnplaced(_ counted: Traffic, series: Int64, scopes: [Int64], at time: Int64, sign: Int64) {
        let day = RollupLevel.oneDay.bucketStart(time)
        let change = UnplacedTotals(
            traffic: TrafficDelta(clamping: counted) &* TrafficDelta(repeating: sign), steps: sign)
        for id in [series] + scopes {
            unplaced[UnplacedKey(series: id, day: day), default: UnplacedTotals()].add(change)
        }
    }

    /// The time a step's buckets cover: from its start (a new epoch's start, not the sample before it, which may lie
    /// decades back on a host that booted in 1970) to its end; for an instant step, the millisecond of its end.
    static func span(of step: CountedStep, from previous: StepSample, to next: StepSample) -> Range<Int64> {
        guard step.timing != .instant else { return next.time..<Saturating.sum(next.time, 1) }
        return CountedStep.start(from: previous, to: next)..<next.time
    }

    /// Records that the 5-minute buckets of `series` between `from` and `to` changed without a delta row (a
    /// virtual gap came or went), for billing.
    mutating func markChanged(from: Int64, to: Int64, series: [Int64]) {
        for id in series { changedSpans.append((id, min(from, to), max(from, to))) }
        // The first is the interface, the rest its scopes.
        for scope in series.dropFirst() { scopeSeries.insert(scope) }
    }

    // MARK: Scopes

    /// The scope series a step ending at `next` counts toward: the host and the fleet when the standard rule
    /// counts the interface, and each group the agent belonged to at `next.time` whose rule counts it.
    private mutating func scopes(
        of name: InterfaceName, agent: AgentRow, at next: StepSample, in db: some IngestTransaction
    ) throws -> [Int64] {
        var ids = [Int64]()
        let rules = settings.rules
        if rules.standard.counts(name: name, kind: next.kind, relation: next.relation) {
            ids.append(try seriesID(.host, agent: agent.id, name: [], at: next.time, in: db))
            ids.append(try seriesID(.fleet, agent: 0, name: [], at: next.time, in: db))
        }
        for group in Self.groups(of: agent.memberships, at: next.time)
        where rules.rule(for: group).counts(name: name, kind: next.kind, relation: next.relation) {
            ids.append(try seriesID(.group, agent: 0, name: Array(group.description.utf8), at: next.time, in: db))
        }
        return ids
    }

    /// The scopes of a step from `start` to `next` during which the agent joined or left a group: the host and the
    /// fleet whole (they depend on the kind alone), each group for the parts of `[start, next.time)` the agent was in
    /// it (``groups(of:at:)`` at each time), one entry per part.
    private mutating func scopes(
        of name: InterfaceName, agent: AgentRow, at next: StepSample, from start: Int64, in db: some IngestTransaction
    ) throws -> (ids: [Int64], parts: [Range<Int64>?]) {
        var ids = [Int64]()
        var parts = [Range<Int64>?]()
        let rules = settings.rules
        if rules.standard.counts(name: name, kind: next.kind, relation: next.relation) {
            ids.append(try seriesID(.host, agent: agent.id, name: [], at: next.time, in: db))
            ids.append(try seriesID(.fleet, agent: 0, name: [], at: next.time, in: db))
            parts += [nil, nil]
        }
        // The times inside the span where the groups change, then each stretch between them by its groups.
        var cuts = [start]
        for membership in agent.memberships {
            for time in [membership.from, membership.to].compactMap({ $0 }) where start < time && time < next.time {
                cuts.append(time)
            }
        }
        cuts = Array(Set(cuts)).sorted() + [next.time]
        for index in cuts.indices.dropLast() {
            let part = cuts[index]..<cuts[index + 1]
            for group in Self.groups(of: agent.memberships, at: part.lowerBound)
            where rules.rule(for: group).counts(name: name, kind: next.kind, relation: next.relation) {
                let id = try seriesID(.group, agent: 0, name: Array(group.description.utf8), at: next.time, in: db)
                // A group the agent stayed in across a cut keeps one part.
                if let previous = ids.indices.last(where: {
                    ids[$0] == id && parts[$0]?.upperBound == part.lowerBound
                }) {
                    parts[previous] = parts[previous]!.lowerBound..<part.upperBound
                } else {
                    ids.append(id)
                    parts.append(part)
                }
            }
        }
        return (ids, parts)
    }

    /// The groups of the memberships in force at `time`; before the first membership began, the first ones.
    static func groups(of memberships: [Membership], at time: Int64) -> [GroupKey] {
        guard let earliest = memberships.map(\.from).min() else { return [] }
        let at = max(time, earliest)
        return memberships.filter { $0.from <= at && ($0.to.map { at < $0 } ?? true) }.map(\.group).sorted()
    }

    /// Whether ``groups(of:at:)`` gives the same groups at `first` and `second`: no membership begins or ends
    /// between them.
    static func sameGroups(_ memberships: [Membership], at first: Int64, _ second: Int64) -> Bool {
        guard !memberships.isEmpty else { return true }
        var earliest = Int64.max
        for membership in memberships { earliest = min(earliest, membership.from) }
        let (a, b) = (max(first, earliest), max(second, earliest))
        for membership in memberships {
            if (membership.from <= a) != (membership.from <= b) { return false }
            if let to = membership.to, (a < to) != (b < to) { return false }
        }
        return true
    }

    package mutating func seriesID(
        _ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64, in db: some IngestTransaction
    ) throws -> Int64 {
        let key = SeriesKey(kind: kind, agent: agent, name: name)
        if let known = series[key] { return known }
        // Interfaces come and go (containers, VPNs): keep the cache bounded; a miss only costs a lookup.
        if series.count >= 200_000 { series.removeAll(keepingCapacity: true) }
        let id = try db.seriesID(kind, agent: agent, name: name, at: now)
        series[key] = id
        catalogueChanged = true  // perhaps a new series
        return id
    }

    package mutating func epochID(_ epoch: CounterEpoch, in db: some IngestTransaction) throws -> Int64 {
        if let known = epochs[epoch] { return known }
        if epochs.count >= 200_000 { epochs.removeAll(keepingCapacity: true) }
        let id = try db.epochID(epoch)
        epochs[epoch] = id
        return id
    }

    // MARK: Buckets

    /// Adds (or with `sign` −1 takes out) a step's spread at every level, to the interface and its scopes.
    mutating func add(
        _ step: CountedStep, from previous: StepSample, to next: StepSample, series: Int64, scopes all: [Int64],
        parts: [Range<Int64>?] = [], sign: Int64
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
                scopeSeries.insert(scope)
                for (levelIndex, level) in settings.levels.enumerated() {
                    Spreader.spread(step, from: previous, to: next, level: level, sign: sign, part: part) {
                        start, values in
                        deltas[BucketKey(series: scope, level: levelIndex, start: start), default: .empty].merge(
                            values.sumsOnly)
                    }
                }
            }
        }
        if run?.series != series || run?.scopes != scopes {
            flushRun()
            run = Run(series: series, scopes: scopes, levels: Array(repeating: nil, count: settings.levels.count))
        }
        for (levelIndex, level) in settings.levels.enumerated() {
            Spreader.spread(step, from: previous, to: next, level: level, sign: sign) { start, values in
                if let pending = run!.levels[levelIndex], pending.start == start {
                    run!.levels[levelIndex]!.values.merge(values)
                } else {
                    if let pending = run!.levels[levelIndex] { flush(pending, level: levelIndex) }
                    run!.levels[levelIndex] = (start, values)
                }
            }
        }
    }

    /// Consecutive steps of one series mostly land in the same bucket (sixty one-second steps a minute): they are
    /// added up here first, and reach the commit's table of bucket changes once per bucket.
    struct Run {
        var series: Int64
        var scopes: [Int64]
        var levels: [(start: Int64, values: BucketValues)?]
    }

    private mutating func flush(_ entry: (start: Int64, values: BucketValues), level: Int) {
        guard let run else { return }
        deltas[BucketKey(series: run.series, level: level, start: entry.start), default: .empty].merge(entry.values)
        guard !run.scopes.isEmpty else { return }
        let sums = entry.values.sumsOnly
        for scope in run.scopes {
            scopeSeries.insert(scope)
            deltas[BucketKey(series: scope, level: level, start: entry.start), default: .empty].merge(sums)
        }
    }

    mutating func flushRun() {
        guard let run else { return }
        for (level, entry) in run.levels.enumerated() {
            if let entry { flush(entry, level: level) }
        }
        self.run = nil
    }

    /// Writes the commit's bucket changes. Changes to 5-minute buckets that billing has taken in (before the bill
    /// mark) are recorded in `bill_change`, unless `billed` is false: a settled gap moves bytes from its spread
    /// into the rows, which changes no interval's figures.
    package mutating func writeDeltas(revision: Int64, billed: Bool = true, in db: some IngestTransaction) throws {
        flushRun()
        let fiveMinutes = settings.levels.firstIndex(of: .fiveMinutes)
        let billMark = billed && fiveMinutes != nil ? billMark : .min
        var billChanges = [ChangeKey: Change]()
        for span in changedSpans where span.from < billMark {
            var start = RollupLevel.fiveMinutes.bucketStart(span.from)
            while start < min(span.to, billMark) {
                billChanges[ChangeKey(series: span.series, start: start), default: Change()].unknown += 1
                start += RollupLevel.fiveMinutes.width
            }
        }
        // Remote write's late data: changes to buckets of the finest level it has forwarded, interfaces only (it
        // forwards nothing else); one row per series for a virtual gap, whose bytes it must add up again.
        let finest = settings.levels.indices.min { settings.levels[$0] < settings.levels[$1] }
        let forwardMark = billed && finest != nil ? forwardMark : .min
        var forwardChanges = [ChangeKey: Change]()
        if forwardMark > 0, let finest {
            for span in changedSpans where span.from < forwardMark && !scopeSeries.contains(span.series) {
                let start = settings.levels[finest].bucketStart(span.from)
                forwardChanges[ChangeKey(series: span.series, start: start), default: Change()].unknown += 1
            }
        }
        for (key, values) in deltas {
            if key.level == fiveMinutes, key.start < billMark {
                let figures = IntervalFigures(values)
                billChanges[ChangeKey(series: key.series, start: key.start), default: Change()].add(
                    Change(
                        rx: figures.rx, tx: figures.tx, covered: figures.covered, measured: figures.measured,
                        flagged: figures.flagged))
            }
            if key.level == finest, key.start < forwardMark, !scopeSeries.contains(key.series) {
                forwardChanges[ChangeKey(series: key.series, start: key.start), default: Change()].add(
                    Change(rx: values.traffic[.rxBytes], tx: values.traffic[.txBytes]))
            }
        }
        try db.writeBuckets(deltas, levels: settings.levels, revision: revision)
        if !billChanges.isEmpty || !forwardChanges.isEmpty {
            try db.writeChanges(bill: billChanges, forward: forwardChanges, revision: revision)
        }
    }

    // MARK: Settling gaps

    /// Spreads up to `limit` virtual gaps that ended before `cutoff` into the rollup rows and deletes them; returns
    /// how many. Late data for them is then unplaced (`docs/windows.md`).
    package mutating func settleGaps(
        endedBefore cutoff: Int64, policy: RetentionPolicy, now: Int64, limit: Int, in db: some IngestTransaction
    ) throws -> Int {
        // The revision first: another daemon's ingest may split or fill these gaps until this one holds it.
        let revision = try begin(in: db)
        let gaps = try db.virtualGaps(endedBefore: cutoff, limit: limit)
        guard !gaps.isEmpty else { return 0 }
        for (owner, gap) in gaps {
            for (levelIndex, level) in settings.levels.enumerated() {
                let oldest = policy.keeps(level).map { now - $0 } ?? .min
                let parted = gap.parts.contains { $0 != nil }
                Spreader.spread(gap.step, from: gap.previous, to: gap.next, level: level) { start, values in
                    guard start >= oldest else { return }
                    deltas[BucketKey(series: owner, level: levelIndex, start: start), default: .empty].merge(values)
                    for (index, scope) in gap.scopes.enumerated() where !parted || gap.parts[index] == nil {
                        deltas[BucketKey(series: scope, level: levelIndex, start: start), default: .empty]
                            .merge(values.sumsOnly)
                    }
                }
                for (scope, part) in zip(gap.scopes, gap.parts) {
                    guard let part else { continue }
                    Spreader.spread(gap.step, from: gap.previous, to: gap.next, level: level, part: part) {
                        start, values in
                        guard start >= oldest else { return }
                        deltas[BucketKey(series: scope, level: levelIndex, start: start), default: .empty]
                            .merge(values.sumsOnly)
                    }
                }
            }
            try db.deleteGap(series: owner, previous: gap.previous.position)
        }
        try writeDeltas(revision: revision, billed: false, in: db)
        try db.advanceTotals(revision: revision, batches: 0, values: 0, unplacedSteps: 0)
        self.revision = revision
        return gaps.count
    }

    /// Fills `arguments` for one row of a rollup table: series, start, then `BucketColumns.all` in order.
    package static func bucketArguments(
        _ values: BucketValues, series: Int64, start: Int64, revision: Int64, into arguments: inout [Int64]
    ) {
        arguments[0] = series
        arguments[1] = start
        for lane in 0..<8 { arguments[2 + lane] = values.traffic[lane] }
        arguments[10] = values.measuredMilliseconds
        arguments[11] = values.interpolatedMilliseconds
        arguments[12] = Int64(clamping: values.peakRx)
        arguments[13] = Int64(clamping: values.peakTx)
        arguments[14] = Int64(values.speedMbps)
        for lane in 0..<StepEvents.columns.count { arguments[15 + lane] = values.events[lane] }
        arguments[15 + StepEvents.columns.count] = values.flaggedMilliseconds
        arguments[16 + StepEvents.columns.count] = values.memberMilliseconds
        arguments[17 + StepEvents.columns.count] = values.capacity
        arguments[18 + StepEvents.columns.count] = revision
    }
}

/// The stored form of a batch's raw samples: per section, its series, epoch, first tick and ``SeriesChunk``.
package struct RawBatch {
    package var bytes = [UInt8]()

    package mutating func append(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8]) {
        var writer = WireWriter(reservingCapacity: 24)
        writer.writeVarint(UInt64(bitPattern: series))
        writer.writeVarint(UInt64(bitPattern: epoch))
        writer.writeVarint(UInt64(UInt32(bitPattern: firstTick)))
        writer.writeVarint(UInt64(chunk.count))
        bytes += writer.bytes
        bytes += chunk
    }

    /// Each section: (series, epoch, first tick, chunk).
    static func sections(_ bytes: [UInt8]) throws -> [(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8])] {
        var reader = WireReader(bytes)
        var sections = [(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8])]()
        while !reader.isAtEnd {
            let series = Int64(bitPattern: try reader.readVarint())
            let epoch = Int64(bitPattern: try reader.readVarint())
            let tick = Int32(bitPattern: UInt32(truncatingIfNeeded: try reader.readVarint()))
            let length = Int(try reader.readVarint(max: UInt64(bytes.count), "raw chunk"))
            sections.append((series, epoch, tick, Array(try reader.readBytes(length))))
        }
        return sections
    }

    /// Appends the samples of `series` with (shifted) timestamps in `range` from one stored raw batch.
    package static func appendSamples(
        of series: Int64, from bytes: [UInt8], order: Int64, shift: Int64, in range: Range<Int64>,
        epochs: [Int64: CounterEpoch], to samples: inout [RawSample]
    ) throws {
        for section in try sections(bytes) where section.series == series {
            guard let epoch = epochs[section.epoch] else { throw StoreError.damaged("raw samples of an unknown epoch") }
            let chunk = try SeriesChunk.decode(section.chunk)
            for (index, timestamp) in chunk.timestamps.enumerated() where range.contains(timestamp + shift) {
                let start = index * Counter.count
                samples.append(
                    RawSample(
                        order: order, timestamp: timestamp + shift, epoch: epoch,
                        counters: CounterValues(Array(chunk.values[start..<start + Counter.count]))!))
            }
        }
    }

    package init(bytes: [UInt8] = [UInt8]()) {
        self.bytes = bytes
    }
}

/// The 16 bytes of a boot id, as stored.
package enum BootIDBytes {
    package static func bytes(_ bootID: BootID) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: bootID.high >> UInt64(56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: bootID.low >> UInt64(56 - 8 * $0)) }
    }

    package static func bootID(_ bytes: [UInt8]) -> BootID {
        guard bytes.count == 16 else { return BootID(high: 0, low: 0) }
        return BootID(
            high: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, low: bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        )
    }
}

/// Link facts as six integer columns: speed_mbps, operstate, carrier (2 when unknown), mtu, link_kind, relation.
package enum LinkColumns {
    package static func values(_ state: LinkState) -> [Int64] {
        let carrier: Int64 = state.carrier.map { $0 ? 1 : 0 } ?? 2
        return [
            Int64(state.speedMbps ?? 0), Int64(state.operState.rawValue), carrier, Int64(state.mtu),
            Int64(state.kind.rawValue), Int64(state.relation.rawValue),
        ]
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
