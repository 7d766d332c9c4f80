import Foundation
import GRDB
import GRDBSQLite
import PulseAnalytics
import PulseCore

/// The ingest side of ``SQLiteStore``: deduplication, counted steps in counter order, spreading into every rollup
/// level and scope, late data, raw chunks, link facts, memberships. Works inside one write transaction at a time;
/// its caches mirror rows the transaction may roll back, so they are dropped after a failure.
struct StoreWriter {
    let settings: StoreSettings

    struct AgentRow {
        var id: Int64
        var identity: AgentIdentity
        var lastSeen: Int64
        /// Memberships, oldest first.
        var memberships: [Membership]
    }

    struct SeriesKey: Hashable {
        var kind: SeriesKind
        var agent: Int64
        var name: [UInt8]
    }

    struct SeriesState {
        var first: StepSample
        var last: StepSample
    }

    struct BucketKey: Hashable {
        var series: Int64
        var level: Int
        var start: Int64
    }

    var agents: [String: AgentRow] = [:]
    var streams: [StreamKey: Int64] = [:]
    var ranges: [Int64: [ClosedRange<UInt64>]] = [:]
    var series: [SeriesKey: Int64] = [:]
    var epochs: [CounterEpoch: Int64] = [:]
    var states: [Int64: SeriesState] = [:]
    var facts: [Int64: LinkState] = [:]
    var revision: Int64?
    /// Changes to 5-minute buckets before this are recorded for billing (`bill_change`).
    var billMark: Int64 = 0
    /// Buckets of the finest level before this were forwarded by remote write: late changes to them are recorded in
    /// `forward_change` (0 while remote write has sent nothing).
    var forwardMark: Int64 = 0

    /// The commit being built: bucket changes, spans changed by virtual gaps, anomalies, and its revision.
    var deltas: [BucketKey: BucketValues] = [:]
    var changedSpans: [(series: Int64, from: Int64, to: Int64)] = []
    /// The host, group and fleet series the commit changed (remote write forwards interfaces only).
    var scopeSeries = Set<Int64>()
    var changedStates = Set<Int64>()
    var run: Run?
    var anomalies: [Anomaly] = []
    var pendingRevision: Int64 = 0

    struct StreamKey: Hashable {
        var agent: Int64
        var stream: UInt64
    }

    init(settings: StoreSettings) {
        self.settings = settings
    }

    /// Forgets everything cached (after a failed commit, whose rows were rolled back).
    mutating func reset() {
        self = StoreWriter(settings: settings)
    }

    // MARK: The commit

    mutating func ingest(_ batches: [IngestBatch], receivedAt now: Int64, in db: Database) throws -> [IngestOutcome] {
        let revision = try begin(in: db)
        var outcomes = [IngestOutcome]()
        outcomes.reserveCapacity(batches.count)
        var stored: Int64 = 0
        var values: Int64 = 0
        for batch in batches {
            var agent = try agentRow(batch.agent, at: now, in: db)
            if agent.identity.labels != batch.agent.labels {
                try relabel(&agent, to: batch.agent.labels, at: now, in: db)
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
        if stored > 0 || !deltas.isEmpty || !changedSpans.isEmpty {
            try writeStates(in: db)
            try writeDeltas(revision: revision, in: db)
            for anomaly in anomalies {
                try db.run(
                    sql: "INSERT INTO anomaly (series_id, ts, kind, detail, revision) VALUES (?, ?, ?, ?, ?)",
                    arguments: [anomaly.series, anomaly.timestamp, anomaly.kind, anomaly.detail, revision])
            }
            try db.run(
                sql: """
                    UPDATE meta SET value = CASE key WHEN 'revision' THEN ? WHEN 'batches' THEN value + ?
                        ELSE value + ? END WHERE key IN ('revision', 'batches', 'values')
                    """, arguments: [revision, stored, values])
            self.revision = revision
        }
        return outcomes
    }

    /// Clears the commit being built and returns its revision.
    mutating func begin(in db: Database) throws -> Int64 {
        deltas.removeAll(keepingCapacity: true)
        changedSpans.removeAll(keepingCapacity: true)
        scopeSeries.removeAll(keepingCapacity: true)
        changedStates.removeAll(keepingCapacity: true)
        run = nil
        anomalies.removeAll()
        billMark =
            try Int64.fetchOne(
                db, sql: "SELECT max(value) FROM meta WHERE key IN ('bill_cursor', 'bill_mark')") ?? 0
        forwardMark = try Self.meta("forward_mark", db)
        pendingRevision = try (self.revision ?? Self.meta("revision", db)) + 1
        return pendingRevision
    }

    static func meta(_ key: String, _ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) ?? 0
    }

    // MARK: Agents, labels, deduplication

    private mutating func agentRow(_ identity: AgentIdentity, at now: Int64, in db: Database) throws -> AgentRow {
        if var known = agents[identity.name] {
            if known.identity.hostname == identity.hostname, known.identity.version == identity.version,
                now - known.lastSeen < 60_000
            {
                return known
            }
            try db.run(
                sql: "UPDATE agent SET hostname = ?, version = ?, last_seen = ? WHERE id = ?",
                arguments: [identity.hostname, identity.version, now, known.id])
            known.identity.hostname = identity.hostname
            known.identity.version = identity.version
            known.lastSeen = now
            return known
        }
        try db.run(
            sql: """
                INSERT INTO agent (name, hostname, version, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, version = excluded.version,
                    last_seen = excluded.last_seen
                """,
            arguments: [identity.name, identity.hostname, identity.version, now, now])
        let row = try Row.fetchOne(db, sql: "SELECT id, labels FROM agent WHERE name = ?", arguments: [identity.name])!
        let id: Int64 = row[0]
        let memberships = try Row.fetchAll(
            db, sql: "SELECT key, value, from_ts, to_ts FROM membership WHERE agent_id = ? ORDER BY from_ts",
            arguments: [id]
        ).map {
            Membership(agent: identity.name, group: GroupKey(key: $0[0], value: $0[1]), from: $0[2], to: $0[3])
        }
        var stored = identity
        stored.labels = LabelText.decode(row[1])
        return AgentRow(id: id, identity: stored, lastSeen: now, memberships: memberships)
    }

    /// Records that the agent's labels changed at `now`: memberships of groups it left end, new ones begin.
    private mutating func relabel(_ agent: inout AgentRow, to labels: Labels, at now: Int64, in db: Database) throws {
        let groups = Set(labels.pairs.map { GroupKey(key: $0.key, value: $0.value) })
        for index in agent.memberships.indices where agent.memberships[index].to == nil {
            let membership = agent.memberships[index]
            guard !groups.contains(membership.group) else { continue }
            agent.memberships[index].to = now
            try db.run(
                sql: "UPDATE membership SET to_ts = ? WHERE agent_id = ? AND key = ? AND value = ? AND from_ts = ?",
                arguments: [now, agent.id, membership.group.key, membership.group.value, membership.from])
        }
        let current = Set(agent.memberships.filter { $0.to == nil }.map(\.group))
        for group in groups.subtracting(current).sorted() {
            agent.memberships.append(Membership(agent: agent.identity.name, group: group, from: now, to: nil))
            try db.run(
                sql:
                    "INSERT OR REPLACE INTO membership (agent_id, key, value, from_ts, to_ts) VALUES (?, ?, ?, ?, NULL)",
                arguments: [agent.id, group.key, group.value, now])
        }
        agent.identity.labels = labels
        try db.run(
            sql: "UPDATE agent SET labels = ? WHERE id = ?", arguments: [LabelText.encode(labels), agent.id])
    }

    /// Whether this is the first delivery of the batch; if so it is recorded (and its drops counted).
    private mutating func recordFirstDelivery(agent: Int64, batch: IngestBatch, in db: Database) throws -> Bool {
        let key = StreamKey(agent: agent, stream: batch.stream)
        let stream: Int64
        if let known = streams[key] {
            stream = known
        } else {
            try db.run(
                sql: "INSERT INTO stream (agent_id, stream) VALUES (?, ?) ON CONFLICT DO NOTHING",
                arguments: [agent, Int64(bitPattern: batch.stream)])
            stream = try Int64.fetchOne(
                db, sql: "SELECT id FROM stream WHERE agent_id = ? AND stream = ?",
                arguments: [agent, Int64(bitPattern: batch.stream)])!
            streams[key] = stream
            ranges[stream] = try Row.fetchAll(
                db, sql: "SELECT first, last FROM stream_range WHERE stream_id = ? ORDER BY first", arguments: [stream]
            ).map { UInt64(bitPattern: $0[0] as Int64)...UInt64(bitPattern: $0[1] as Int64) }
        }
        var known = ranges[stream] ?? []
        let sequence = batch.sequence
        // The range that starts after the sequence; the one before it may hold or end just before it.
        let after = known.firstIndex { $0.lowerBound > sequence } ?? known.count
        if after > 0, known[after - 1].contains(sequence) { return false }
        let joinsBefore = after > 0 && known[after - 1].upperBound &+ 1 == sequence
        let joinsAfter = after < known.count && known[after].lowerBound == sequence &+ 1
        func row(_ range: ClosedRange<UInt64>) -> StatementArguments {
            [stream, Int64(bitPattern: range.lowerBound), Int64(bitPattern: range.upperBound)]
        }
        switch (joinsBefore, joinsAfter) {
        case (true, true):
            let merged = known[after - 1].lowerBound...known[after].upperBound
            try db.run(
                sql: "DELETE FROM stream_range WHERE stream_id = ? AND first = ?",
                arguments: [stream, Int64(bitPattern: known[after].lowerBound)])
            try db.run(
                sql: "UPDATE stream_range SET last = ? WHERE stream_id = ? AND first = ?",
                arguments: [Int64(bitPattern: merged.upperBound), stream, Int64(bitPattern: merged.lowerBound)])
            known[after - 1] = merged
            known.remove(at: after)
        case (true, false):
            known[after - 1] = known[after - 1].lowerBound...sequence
            try db.run(
                sql: "UPDATE stream_range SET last = ? WHERE stream_id = ? AND first = ?",
                arguments: [Int64(bitPattern: sequence), stream, Int64(bitPattern: known[after - 1].lowerBound)])
        case (false, true):
            try db.run(
                sql: "UPDATE stream_range SET first = ? WHERE stream_id = ? AND first = ?",
                arguments: [Int64(bitPattern: sequence), stream, Int64(bitPattern: known[after].lowerBound)])
            known[after] = sequence...known[after].upperBound
        case (false, false):
            try db.run(
                sql: "INSERT INTO stream_range (stream_id, first, last) VALUES (?, ?, ?)",
                arguments: row(sequence...sequence))
            known.insert(sequence...sequence, at: after)
        }
        ranges[stream] = known
        if batch.droppedBefore > 0 {
            try db.run(
                sql: "UPDATE stream SET dropped = dropped + ? WHERE id = ?",
                arguments: [Int64(clamping: batch.droppedBefore), stream])
        }
        return true
    }

    // MARK: Samples

    private mutating func store(_ batch: IngestBatch, agent: AgentRow, receivedAt now: Int64, in db: Database) throws {
        // The clock check: a batch that ends in the future is moved back to end when it was received.
        let shift = batch.lastTimestamp > now + settings.clockTolerance ? now - batch.lastTimestamp : 0
        if shift != 0 {
            anomalies.append(
                Anomaly(
                    series: 0, timestamp: now, kind: "clock-ahead",
                    detail:
                        "agent \(agent.identity.name): batch \(batch.order) ended \(Units.formatDuration(-shift)) ahead of the daemon's clock; moved back"
                ))
        }
        guard let order = Int64(exactly: batch.order) else {
            throw StoreError.invalidBatch("batch order \(batch.order) is out of range")
        }
        // Sections of one logical interface (two epochs in one batch) are counted together, by tick.
        var byName = [InterfaceName: [StepSample]]()
        var names = [InterfaceName]()
        var raw = RawBatch()
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
                samples.append(
                    StepSample(
                        order: order, tick: tick, time: section.timestamps[index] + shift, epoch: epoch,
                        width: section.descriptor.epoch.width, counters: section.traffic[index],
                        interval: batch.interval, heartbeat: batch.heartbeat, speed: current?.speedMbps ?? 0,
                        kind: current?.kind ?? .unknown, relation: current?.relation ?? [], clockShifted: shift != 0))
            }
            byName[name] = samples
            if let latest = section.links.last {
                let index = section.ticks.firstIndex(of: latest.tick) ?? 0
                try updateFacts(seriesID, latest.state, at: section.timestamps[index] + shift, in: db)
            }
        }
        let times = batch.sections.flatMap { [$0.timestamps[0], $0.timestamps[$0.timestamps.count - 1]] }
        try insertRaw(
            raw, agent: agent.id, order: order, shift: shift, interval: batch.interval, heartbeat: batch.heartbeat,
            from: (times.min() ?? 0) + shift, to: (times.max() ?? 0) + shift, in: db)
        for name in names {
            var samples = byName[name]!
            if samples.count > 1 { samples.sort { $0.tick < $1.tick } }
            let seriesID = try self.seriesID(.interface, agent: agent.id, name: name.bytes, at: now, in: db)
            try place(samples, series: seriesID, name: name, agent: agent, in: db)
        }
    }

    /// Stores a batch's raw samples as one row (see the `raw` table).
    mutating func insertRaw(
        _ raw: RawBatch, agent: Int64, order: Int64, shift: Int64, interval: Int64, heartbeat: Int64, from: Int64,
        to: Int64, in db: Database
    ) throws {
        try db.run(
            sql: """
                INSERT INTO raw (agent_id, ord, shift, interval, heartbeat, first_ts, last_ts, data)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [agent, order, shift, interval, heartbeat, from, to, Data(raw.bytes)])
    }

    /// Keeps the interface's latest link facts, and a history row when they change.
    private mutating func updateFacts(_ series: Int64, _ state: LinkState, at time: Int64, in db: Database) throws {
        if facts[series] == nil {
            facts[series] = try Row.fetchOne(
                db, sql: "SELECT speed_mbps, operstate, carrier, mtu, link_kind, relation FROM series WHERE id = ?",
                arguments: [series]
            ).map { Self.linkState($0, from: 0) }
        }
        guard facts[series] != state else { return }
        facts[series] = state
        let carrier: Int64 = state.carrier.map { $0 ? 1 : 0 } ?? 2
        let values: [Int64] = [
            Int64(state.speedMbps ?? 0), Int64(state.operState.rawValue), carrier, Int64(state.mtu),
            Int64(state.kind.rawValue), Int64(state.relation.rawValue),
        ]
        try db.run(
            sql: """
                UPDATE series SET speed_mbps = ?, operstate = ?, carrier = ?, mtu = ?, link_kind = ?, relation = ?
                WHERE id = ?
                """, arguments: StatementArguments(values + [series]))
        try db.run(
            sql: """
                INSERT OR REPLACE INTO link_state (series_id, ts, speed_mbps, operstate, carrier, mtu, link_kind,
                    relation) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: StatementArguments([series, time] + values))
    }

    /// Link facts from six columns of `row` from `first`: speed, operstate, carrier, mtu, kind, relation.
    static func linkState(_ row: Row, from first: Int) -> LinkState {
        linkState((0..<6).map { row[first + $0] as Int64 })
    }

    /// Link facts from their six columns (speed_mbps, operstate, carrier, mtu, link_kind, relation).
    static func linkState(_ columns: [Int64]) -> LinkState {
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
    mutating func place(
        _ samples: [StepSample], series: Int64, name: InterfaceName, agent: AgentRow, in db: Database
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
                if !gap.isVirtual {
                    let removed = CountedStep.between(gap.previous, gap.next, maximumRate: settings.maximumRate)
                    add(removed, from: gap.previous, to: gap.next, series: series, scopes: gap.scopes, sign: -1)
                }
                markChanged(from: gap.previous.time, to: gap.next.time, series: [series] + gap.scopes)
                try db.run(
                    sql: "DELETE FROM gap WHERE series_id = ? AND prev_order = ? AND prev_tick = ?",
                    arguments: [series, gap.previous.order, gap.previous.tick])
                steps.insert((gap.previous, first), at: 0)
                steps.append((last, gap.next))
            } else {
                // Inside a measured or idle step, or on top of samples already stored: that step counted these
                // bytes already (`docs/windows.md`); keep the rollups as they are and say so.
                anomalies.append(
                    Anomaly(
                        series: series, timestamp: first.time, kind: "unplaced",
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
        for (previous, next) in steps {
            let step = CountedStep.between(previous, next, maximumRate: settings.maximumRate)
            let scopes: [Int64]
            if let known, known.kind == next.kind, known.relation == next.relation,
                Self.sameGroups(agent.memberships, at: known.time, next.time)
            {
                scopes = known.scopes
            } else {
                scopes = try self.scopes(of: name, agent: agent, at: next, in: db)
                known = (next.kind, next.relation, next.time, scopes)
            }
            // A gap step stays virtual (reads spread it) while late data may still split it; see SQLiteSchema.
            let isVirtual = step.timing == .gap
            if isVirtual {
                markChanged(from: previous.time, to: next.time, series: [series] + scopes)
            } else {
                add(step, from: previous, to: next, series: series, scopes: scopes, sign: 1)
            }
            if step.timing.mayBeSplit {
                try db.cachedStatement(
                    sql: """
                        INSERT OR REPLACE INTO gap (series_id, prev_order, prev_tick, next_order, next_tick, prev, next,
                            scopes, step, virtual, from_ts, to_ts, revision)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [
                    series, previous.order, previous.tick, next.order, next.tick, Data(SampleCoding.encode(previous)),
                    Data(SampleCoding.encode(next)), Data(SampleCoding.encode(ids: scopes)),
                    Data(SampleCoding.encode(step)), isVirtual, min(previous.time, next.time),
                    max(previous.time, next.time), pendingRevision,
                ])
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
    mutating func writeStates(in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO series_state (series_id, first, last) VALUES (?, ?, ?)")
        for series in changedStates {
            guard let state = states[series] else { continue }
            try statement.execute(arguments: [
                series, Data(SampleCoding.encode(state.first)), Data(SampleCoding.encode(state.last)),
            ])
        }
        changedStates.removeAll(keepingCapacity: true)
    }

    private mutating func state(of series: Int64, in db: Database) throws -> SeriesState? {
        if let known = states[series] { return known }
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT first, last FROM series_state WHERE series_id = ?", arguments: [series])
        else { return nil }
        let state = SeriesState(
            first: try SampleCoding.decode(Array(row[0] as Data)), last: try SampleCoding.decode(Array(row[1] as Data)))
        states[series] = state
        return state
    }

    private func gap(
        of series: Int64, around first: SamplePosition, _ last: SamplePosition, in db: Database
    ) throws -> (previous: StepSample, next: StepSample, scopes: [Int64], isVirtual: Bool)? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT prev, next, scopes, next_order, next_tick, virtual FROM gap
                    WHERE series_id = ? AND (prev_order < ? OR (prev_order = ? AND prev_tick < ?))
                    ORDER BY prev_order DESC, prev_tick DESC LIMIT 1
                    """,
                arguments: [series, first.order, first.order, first.tick])
        else { return nil }
        let next = SamplePosition(order: row[3], tick: row[4])
        guard last < next else { return nil }
        return (
            try SampleCoding.decode(Array(row[0] as Data)), try SampleCoding.decode(Array(row[1] as Data)),
            try SampleCoding.decodeIDs(Array(row[2] as Data)), row[5] as Bool
        )
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
        of name: InterfaceName, agent: AgentRow, at next: StepSample, in db: Database
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

    mutating func seriesID(
        _ kind: SeriesKind, agent: Int64, name: [UInt8], at now: Int64, in db: Database
    ) throws -> Int64 {
        let key = SeriesKey(kind: kind, agent: agent, name: name)
        if let known = series[key] { return known }
        // Interfaces come and go (containers, VPNs): keep the cache bounded; a miss only costs a lookup.
        if series.count >= 200_000 { series.removeAll(keepingCapacity: true) }
        try db.cachedStatement(
            sql: """
                INSERT INTO series (kind, agent_id, name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """
        ).execute(arguments: [kind.rawValue, agent, Data(name), now, now])
        let id = try Int64.fetchOne(
            db, sql: "SELECT id FROM series WHERE kind = ? AND agent_id = ? AND name = ?",
            arguments: [kind.rawValue, agent, Data(name)])!
        series[key] = id
        return id
    }

    mutating func epochID(_ epoch: CounterEpoch, in db: Database) throws -> Int64 {
        if let known = epochs[epoch] { return known }
        if epochs.count >= 200_000 { epochs.removeAll(keepingCapacity: true) }
        let arguments: StatementArguments = [
            Data(BootIDBytes.bytes(epoch.bootID)), Int64(epoch.ifindex), Int64(epoch.width.rawValue),
        ]
        try db.run(
            sql: "INSERT INTO epoch (boot_id, ifindex, width) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            arguments: arguments)
        let id = try Int64.fetchOne(
            db, sql: "SELECT id FROM epoch WHERE boot_id = ? AND ifindex = ? AND width = ?", arguments: arguments)!
        epochs[epoch] = id
        return id
    }

    // MARK: Buckets

    /// Adds (or with `sign` −1 takes out) a step's spread at every level, to the interface and its scopes.
    mutating func add(
        _ step: CountedStep, from previous: StepSample, to next: StepSample, series: Int64, scopes: [Int64],
        sign: Int64
    ) {
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
    mutating func writeDeltas(revision: Int64, billed: Bool = true, in db: Database) throws {
        flushRun()
        let fiveMinutes = settings.levels.firstIndex(of: .fiveMinutes)
        var statements = [Statement]()
        for level in settings.levels {
            let table = SQLiteSchema.rollupTable(level)
            let columns = SQLiteSchema.bucketColumns
            let updates = columns.map { column in
                switch column {
                case "peak_rx", "peak_tx", "speed_mbps": "\(column) = max(\(column), excluded.\(column))"
                case "revision": "revision = excluded.revision"
                default: "\(column) = \(column) + excluded.\(column)"
                }
            }
            statements.append(
                try db.cachedStatement(
                    sql: """
                        INSERT INTO \(table) (series_id, start, \(columns.joined(separator: ", ")))
                        VALUES (?, ?, \(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                        ON CONFLICT (series_id, start) DO UPDATE SET \(updates.joined(separator: ", "))
                        """))
        }
        let billMark = billed && fiveMinutes != nil ? billMark : .min
        let changed = try db.cachedStatement(
            sql: """
                INSERT INTO bill_change (series_id, start, rx, tx, covered, unknown, revision)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (series_id, start) DO UPDATE SET rx = rx + excluded.rx, tx = tx + excluded.tx,
                    covered = covered + excluded.covered, unknown = unknown + excluded.unknown,
                    revision = excluded.revision
                """)
        for span in changedSpans where span.from < billMark {
            var start = RollupLevel.fiveMinutes.bucketStart(span.from)
            while start < min(span.to, billMark) {
                try changed.execute(arguments: [span.series, start, 0, 0, 0, 1, revision])
                start += RollupLevel.fiveMinutes.width
            }
        }
        // Remote write's late data: changes to buckets of the finest level it has forwarded, interfaces only (it
        // forwards nothing else); one row per series for a virtual gap, whose bytes it must add up again.
        let finest = settings.levels.indices.min { settings.levels[$0] < settings.levels[$1] }
        let forwardMark = billed && finest != nil ? forwardMark : .min
        let forwarded = try db.cachedStatement(
            sql: """
                INSERT INTO forward_change (series_id, start, rx, tx, unknown, revision) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (series_id, start) DO UPDATE SET rx = rx + excluded.rx, tx = tx + excluded.tx,
                    unknown = unknown + excluded.unknown, revision = excluded.revision
                """)
        if forwardMark > 0, let finest {
            for span in changedSpans where span.from < forwardMark && !scopeSeries.contains(span.series) {
                let start = settings.levels[finest].bucketStart(span.from)
                try forwarded.execute(arguments: [span.series, start, 0, 0, 1, revision])
            }
        }
        var arguments = [Int64](repeating: 0, count: 2 + SQLiteSchema.bucketColumns.count)
        for (key, values) in deltas {
            Self.bucketArguments(values, series: key.series, start: key.start, revision: revision, into: &arguments)
            try arguments.withUnsafeBufferPointer { try db.run(statements[key.level], integers: $0) }
            if key.level == fiveMinutes, key.start < billMark {
                try changed.execute(arguments: [
                    key.series, key.start, values.traffic[.rxBytes], values.traffic[.txBytes],
                    values.coveredMilliseconds, 0, revision,
                ])
            }
            if key.level == finest, key.start < forwardMark, !scopeSeries.contains(key.series) {
                try forwarded.execute(arguments: [
                    key.series, key.start, values.traffic[.rxBytes], values.traffic[.txBytes], 0, revision,
                ])
            }
        }
    }

    /// Fills `arguments` for one row of a rollup table: series, start, then `SQLiteSchema.bucketColumns` in order.
    static func bucketArguments(
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
        for lane in 0..<5 { arguments[15 + lane] = values.events[lane] }
        arguments[20] = revision
    }
}

/// The stored form of a batch's raw samples: per section, its series, epoch, first tick and ``SeriesChunk``.
struct RawBatch {
    var bytes = [UInt8]()

    mutating func append(series: Int64, epoch: Int64, firstTick: Int32, chunk: [UInt8]) {
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
}

/// Labels as stored in the agent table: `key=value` lines.
enum LabelText {
    static func encode(_ labels: Labels) -> String {
        labels.pairs.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
    }

    static func decode(_ text: String) -> Labels {
        Labels(
            text.split(separator: "\n").compactMap { line in
                line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            })
    }
}

/// The 16 bytes of a boot id, as stored.
enum BootIDBytes {
    static func bytes(_ bootID: BootID) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: bootID.high >> UInt64(56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: bootID.low >> UInt64(56 - 8 * $0)) }
    }

    static func bootID(_ bytes: [UInt8]) -> BootID {
        guard bytes.count == 16 else { return BootID(high: 0, low: 0) }
        return BootID(
            high: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }, low: bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        )
    }
}

extension Database {
    /// Runs one statement compiled once per connection: ingest runs the same few statements thousands of times a
    /// second, and compiling (parsing, authorizing) them each time cost more than running them.
    func run(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// Steps `statement` (arguments already set), calling `body` with the SQLite statement on each row, for
    /// reads of many integer rows that would otherwise build a `Row` of boxed values each.
    func forEachRow(of statement: Statement, _ body: (SQLiteStatement) throws -> Void) throws {
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)),
                    sql: statement.sql)
            }
            try body(handle)
        }
    }

    /// Runs a cached statement with only integer arguments, bound straight to SQLite: the bucket upserts, the
    /// hottest statement of ingest, skip building `StatementArguments` (boxed values) for every row.
    func run(_ statement: Statement, integers: UnsafeBufferPointer<Int64>) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (index, value) in integers.enumerated() { sqlite3_bind_int64(handle, Int32(index + 1), value) }
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)),
                sql: statement.sql)
        }
    }
}
