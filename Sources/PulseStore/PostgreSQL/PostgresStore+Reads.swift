import Foundation
import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseCore

extension PostgresStore {
    /// Every row of `query`, from a connection of the read pool.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            var rows = [PostgresRow]()
            for try await row in try await client.query(query) { rows.append(row) }
            return rows
        } catch {
            throw PostgresErrors.describe(error, location: location)
        }
    }

    static func bytes(_ buffer: ByteBuffer?) -> [UInt8]? { buffer.map { Array($0.readableBytesView) } }

    // MARK: Rollups

    public func reduceBuckets<Result: Sendable>(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ reduce: @escaping @Sendable (Int64, [Bucket]) -> Result?
    ) async throws -> [Int64: Result] {
        let fields = fields.isEmpty ? .revision : fields  // a column to select
        let ids = Array(Set(series)).sorted()
        var spread = try await virtualGaps(level: level, series: Set(ids), from: from, to: to)
        var binds = PostgresBindings()
        try binds.append(ids)
        binds.append(from)
        binds.append(to)
        let rows = try await self.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT series_id, start, \(BucketColumns.selectList(fields)) FROM \(try table(for: level))
                    WHERE series_id = ANY($1) AND start >= $2 AND start < $3 ORDER BY series_id, start
                    """, binds: binds))
        var result = [Int64: Result]()
        func finish(_ id: Int64, _ list: [Bucket]) {
            if let value = reduce(id, spread.merge(id, into: list, level: level)) { result[id] = value }
        }
        var current: Int64?
        var list = [Bucket]()
        for row in rows {
            var cells = row.makeIterator()
            func column() throws -> Int64 { try cells.next()!.decode(Int64.self) }
            let id = try column()
            if id != current {
                if let current { finish(current, list) }
                current = id
                list.removeAll(keepingCapacity: true)
            }
            let start = try column()
            let (values, revision) = try BucketColumns.values(fields: fields, column)
            list.append(Bucket(level: level, start: start, values: values, revision: revision))
        }
        if let current { finish(current, list) }
        for id in spread.remaining { finish(id, []) }
        return result
    }

    public func sums(
        level: RollupLevel, series: [Int64]?, from: Int64, to: Int64, fields: BucketFields = .all
    ) async throws -> [Int64: BucketValues] {
        let fields = fields.isEmpty ? .revision : fields  // a column to select
        var ids = series ?? []
        if series == nil { ids = try await rows("SELECT id FROM series").map { try $0.decode(Int64.self) } }
        var binds = PostgresBindings()
        try binds.append(ids)
        binds.append(from)
        binds.append(to)
        let aggregates = BucketColumns.aggregateList(fields) { "(\($0))::bigint" }
        var result = [Int64: BucketValues]()
        for row in try await rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT series_id, \(aggregates) FROM \(try table(for: level))
                    WHERE series_id = ANY($1) AND start >= $2 AND start < $3 GROUP BY series_id
                    """, binds: binds))
        {
            var cells = row.makeIterator()
            func column() throws -> Int64 { try cells.next()!.decode(Int64.self) }
            let id = try column()
            result[id] = try BucketColumns.values(fields: fields, column).values
        }
        let spread = try await virtualGaps(level: level, series: Set(ids), from: from, to: to)
        for (id, buckets) in spread.buckets {
            for entry in buckets.values { result[id, default: .empty].merge(entry.values) }
        }
        return result
    }

    /// The spread of the virtual gaps that add to `series` at `level` in `[from, to)`.
    func virtualGaps(level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64) async throws
        -> VirtualGaps.Spread
    {
        var spread = VirtualGaps.Spread()
        guard !series.isEmpty else { return spread }
        let end = VirtualGaps.end(level: level, to: to)
        for row in try await rows(
            "SELECT series_id, prev, next, scopes, step, revision FROM gap WHERE virtual AND to_ts > \(from) AND from_ts < \(end)"
        ) {
            let (owner, previous, next, scopes, step, revision) = try row.decode(
                (Int64, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer, Int64).self)
            try VirtualGaps.spread(
                VirtualGaps.Row(
                    owner: owner, previous: Array(previous.readableBytesView), next: Array(next.readableBytesView),
                    scopes: Array(scopes.readableBytesView), step: Array(step.readableBytesView), revision: revision),
                level: level, series: series, from: from, to: to
            ) { spread.add($0, $1, $2, $3) }
        }
        return spread
    }

    func table(for level: RollupLevel) throws -> String {
        guard settings.levels.contains(level) else {
            throw StoreError.unusable("the store keeps no \(level) rollups (levels: \(settings.levels))")
        }
        return SQLiteSchema.rollupTable(level)
    }

    public func levels() async throws -> [RollupLevel] { settings.levels }

    // MARK: Catalogue

    public func series() async throws -> [SeriesRecord] {
        try await rows(
            """
            SELECT s.id, s.kind::bigint, convert_to(a.name, 'UTF8'), s.name, s.first_seen, s.speed_mbps, s.operstate,
                s.carrier, s.mtu, s.link_kind, s.relation, st.last
            FROM series s LEFT JOIN agent a ON a.id = s.agent_id
            LEFT JOIN series_state st ON st.series_id = s.id
            ORDER BY s.kind, a.name COLLATE "C", s.name
            """
        ).compactMap { row in
            var cells = row.makeIterator()
            func integer() throws -> Int64 { try cells.next()!.decode(Int64.self) }
            func bytes() throws -> [UInt8]? { Self.bytes(try cells.next()!.decode(ByteBuffer?.self)) }
            let (id, kind, agent, name, firstSeen) = (
                try integer(), try integer(), try bytes(), try bytes(), try integer()
            )
            let facts = try (0..<6).map { _ in try integer() }
            return CatalogueRows.series(
                id: id, kind: kind, agent: agent, name: name ?? [], firstSeen: firstSeen, facts: facts,
                lastState: try bytes())
        }
    }

    public func agents() async throws -> [AgentRecord] {
        try await rows(
            """
            SELECT a.name, a.hostname, a.version, a.labels, a.first_seen, a.last_seen,
                (SELECT COALESCE(SUM(dropped), 0)::bigint FROM stream WHERE agent_id = a.id)
            FROM agent a ORDER BY a.name COLLATE "C"
            """
        ).map { row in
            let (name, hostname, version, labels, first, last, dropped) = try row.decode(
                (String, String, String, String, Int64, Int64, Int64).self)
            return AgentRecord(
                name: name, hostname: hostname, version: version, labels: LabelText.decode(labels), firstSeen: first,
                lastSeen: last, droppedBatches: dropped)
        }
    }

    public func memberships() async throws -> [Membership] {
        try await rows(
            """
            SELECT a.name, m.key, m.value, m.from_ts, m.to_ts FROM membership m JOIN agent a ON a.id = m.agent_id
            ORDER BY a.name COLLATE "C", m.from_ts, m.key COLLATE "C", m.value COLLATE "C"
            """
        ).map { row in
            let (agent, key, value, from, to) = try row.decode((String, String, String, Int64, Int64?).self)
            return Membership(agent: agent, group: GroupKey(key: key, value: value), from: from, to: to)
        }
    }

    public func samples(series: Int64, from: Int64, to: Int64) async throws -> [RawSample] {
        guard
            let agent = try await rows("SELECT agent_id FROM series WHERE id = \(series)").first?.decode(Int64.self)
        else { return [] }
        var epochs = [Int64: CounterEpoch]()
        for row in try await rows("SELECT id, boot_id, ifindex, width FROM epoch") {
            let (id, boot, ifindex, width) = try row.decode((Int64, ByteBuffer, Int64, Int64).self)
            epochs[id] = CounterEpoch(
                bootID: BootIDBytes.bootID(Array(boot.readableBytesView)), ifindex: UInt32(truncatingIfNeeded: ifindex),
                width: CounterWidth(rawValue: UInt8(truncatingIfNeeded: width)) ?? .bits64)
        }
        var samples = [RawSample]()
        for row in try await rows(
            """
            SELECT ord, shift, data FROM raw WHERE agent_id = \(agent) AND last_ts >= \(from) AND first_ts < \(to)
            ORDER BY ord
            """)
        {
            let (order, shift, data) = try row.decode((Int64, Int64, ByteBuffer).self)
            try RawBatch.appendSamples(
                of: series, from: Array(data.readableBytesView), order: order, shift: shift, in: from..<to,
                epochs: epochs, to: &samples)
        }
        return samples
    }

    public func anomalies(since: Int64) async throws -> [Anomaly] {
        try await rows("SELECT series_id, ts, kind, detail FROM anomaly WHERE ts >= \(since) ORDER BY ts, id").map {
            let (series, time, kind, detail) = try $0.decode((Int64, Int64, String, String).self)
            return Anomaly(series: series, timestamp: time, kind: kind, detail: detail)
        }
    }

    public func totals() async throws -> IngestTotals {
        var values = [String: Int64]()
        for row in try await rows("SELECT key, value FROM meta WHERE key IN ('batches', 'values', 'revision')") {
            let (key, value) = try row.decode((String, Int64).self)
            values[key] = value
        }
        return IngestTotals(
            batches: values["batches"] ?? 0, values: values["values"] ?? 0, revision: values["revision"] ?? 0)
    }
}
