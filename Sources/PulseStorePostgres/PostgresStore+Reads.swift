import Foundation
import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseCore
import PulseStore

extension PostgresStore {
    // MARK: Rollups

    public func reduceBuckets<Result: Sendable>(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ reduce: @escaping @Sendable (Int64, [Bucket]) -> Result?
    ) async throws -> [Int64: Result] {
        let fields = fields.isEmpty ? .revision : fields  // a column to select
        let table = try table(for: level)
        return try await read { session in
            var result = [Int64: Result]()
            try await PostgresSnapshotReader(session: session, revision: 0).readBuckets(
                level: level, series: Array(Set(series)).sorted(), from: from, to: to, fields: fields, table: table
            ) { id, list in
                if let value = reduce(id, list) { result[id] = value }
            }
            return result
        }
    }

    public func sums(
        level: RollupLevel, series: [Int64]?, from: Int64, to: Int64, fields: BucketFields = .all
    ) async throws -> [Int64: BucketValues] {
        let fields = fields.isEmpty ? .revision : fields  // a column to select
        let table = try table(for: level)
        return try await read { session in
            var ids = series ?? []
            if series == nil {
                ids = try await session.query("SELECT id FROM series").map { try $0.decode(Int64.self) }
            }
            let aggregates = BucketColumns.aggregateList(fields) { "(\($0))::bigint" }
            var result = [Int64: BucketValues]()
            for row in try await session.query(
                """
                SELECT series_id, \(aggregates) FROM \(table)
                WHERE series_id = ANY($1) AND start >= $2 AND start < $3 GROUP BY series_id
                """, series: ids, from: from, to: to)
            {
                var columns = CellColumns(row, table: table)
                let id = try columns.next()
                result[id] = try BucketColumns.values(fields: fields, from: &columns).values
            }
            try await PostgresSnapshotReader(session: session, revision: 0).spreadVirtualGaps(
                level: level, series: Set(ids), from: from, to: to
            ) { id, _, values, _ in result[id, default: .empty].merge(values) }
            return result
        }
    }

    func table(for level: RollupLevel) throws -> String {
        guard settings.levels.contains(level) else {
            throw StoreError.unusable("the store keeps no \(level) rollups (levels: \(settings.levels))")
        }
        return BucketColumns.table(level)
    }

    public func levels() async throws -> [RollupLevel] { settings.levels }

    // MARK: Catalogue

    public func series() async throws -> [SeriesRecord] {
        try await read { session in
            try await session.query(
                """
                SELECT s.id, s.kind::bigint, convert_to(a.name, 'UTF8'), s.name, s.first_seen, s.speed_mbps,
                    s.operstate, s.carrier, s.mtu, s.link_kind, s.relation, st.last
                FROM series s LEFT JOIN agent a ON a.id = s.agent_id
                LEFT JOIN series_state st ON st.series_id = s.id
                ORDER BY s.kind, a.name COLLATE "C", s.name
                """
            ).compactMap { row in
                let (id, kind, agent, name, firstSeen, speed, operstate, carrier, mtu, linkKind, relation, last) =
                    try row.decode(
                        (
                            Int64, Int64, ByteBuffer?, ByteBuffer?, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                            ByteBuffer?
                        ).self)
                func bytes(_ buffer: ByteBuffer?) -> [UInt8]? { buffer.map { Array($0.readableBytesView) } }
                return CatalogueRows.series(
                    id: id, kind: kind, agent: bytes(agent), name: bytes(name) ?? [], firstSeen: firstSeen,
                    facts: [speed, operstate, carrier, mtu, linkKind, relation], lastState: bytes(last))
            }
        }
    }

    public func agents() async throws -> [AgentRecord] {
        try await read { session in
            try await session.query(
                """
                SELECT a.name, a.hostname, a.version, a.labels, a.first_seen, a.last_seen,
                    (SELECT COALESCE(SUM(dropped), 0)::bigint FROM stream WHERE agent_id = a.id)
                FROM agent a ORDER BY a.name COLLATE "C"
                """
            ).map { row in
                let (name, hostname, version, labels, first, last, dropped) = try row.decode(
                    (String, String, String, String, Int64, Int64, Int64).self)
                return AgentRecord(
                    name: name, hostname: hostname, version: version, labels: LabelText.decode(labels),
                    firstSeen: first, lastSeen: last, droppedBatches: dropped)
            }
        }
    }

    public func memberships() async throws -> [Membership] {
        try await read { session in
            try await session.query(
                """
                SELECT a.name, m.key, m.value, m.from_ts, m.to_ts FROM membership m JOIN agent a ON a.id = m.agent_id
                ORDER BY a.name COLLATE "C", m.from_ts, m.key COLLATE "C", m.value COLLATE "C"
                """
            ).map { row in
                let (agent, key, value, from, to) = try row.decode((String, String, String, Int64, Int64?).self)
                return Membership(agent: agent, group: GroupKey(key: key, value: value), from: from, to: to)
            }
        }
    }

    public func samples(series: Int64, from: Int64, to: Int64) async throws -> [RawSample] {
        try await read { session in
            guard
                let agent = try await session.query("SELECT agent_id FROM series WHERE id = \(series)").first?.decode(
                    Int64.self)
            else { return [] }
            var epochs = [Int64: CounterEpoch]()
            for row in try await session.query("SELECT id, boot_id, ifindex, width FROM epoch") {
                let (id, boot, ifindex, width) = try row.decode((Int64, ByteBuffer, Int64, Int64).self)
                epochs[id] = CounterEpoch(
                    bootID: BootIDBytes.bootID(Array(boot.readableBytesView)),
                    ifindex: UInt32(truncatingIfNeeded: ifindex),
                    width: CounterWidth(rawValue: UInt8(truncatingIfNeeded: width)) ?? .bits64)
            }
            var samples = [RawSample]()
            for row in try await session.query(
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
    }

    public func anomalies(since: Int64) async throws -> [Anomaly] {
        try await read { session in
            try await session.query(
                "SELECT \(unescaped: Anomaly.columns) FROM anomaly WHERE ts >= \(since) ORDER BY ts, id"
            )
            .map {
                var columns = CellColumns($0, table: "anomaly")
                return try Anomaly(row: &columns)
            }
        }
    }

    public func totals() async throws -> IngestTotals {
        try await read { session in
            let meta = try await PostgresSnapshotReader.meta(session)
            return IngestTotals { meta[$0] ?? 0 }
        }
    }

    public func unplacedDays(series: [Int64], from: Int64, to: Int64) async throws -> [Int64: [UnplacedDay]] {
        guard !series.isEmpty else { return [:] }
        return try await read { session in
            var result = [Int64: [UnplacedDay]]()
            let rows = try await session.query(
                """
                SELECT series_id, day, \(TrafficCounter.allCases.map(\.name).joined(separator: ", ")), steps
                FROM unplaced WHERE series_id = ANY($1) AND day >= $2 AND day < $3 ORDER BY series_id, day
                """, series: series, from: from, to: to)
            for row in rows {
                var cells = row.makeIterator()
                guard let id = try cells.next()?.decode(Int64.self), let day = try cells.next()?.decode(Int64.self)
                else { continue }
                var totals = UnplacedTotals()
                for lane in 0..<8 { totals.traffic[lane] = try cells.next()?.decode(Int64.self) ?? 0 }
                totals.steps = try cells.next()?.decode(Int64.self) ?? 0
                if !totals.isEmpty { result[id, default: []].append(UnplacedDay(day: day, totals: totals)) }
            }
            return result
        }
    }
}

/// A read transaction of the PostgreSQL store (``SnapshotReader``), and the reads every other call is made of.
struct PostgresSnapshotReader: SnapshotReader {
    let session: PostgresSession
    let revision: Int64

    static func meta(_ session: PostgresSession) async throws -> [String: Int64] {
        var values = [String: Int64]()
        for row in try await session.query("SELECT key, value FROM meta") {
            let (key, value) = try row.decode((String, Int64).self)
            values[key] = value
        }
        return values
    }

    func readBuckets(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ body: (Int64, [Bucket]) throws -> Void
    ) async throws {
        try await readBuckets(
            level: level, series: series, from: from, to: to, fields: fields, table: BucketColumns.table(level),
            body)
    }

    func readBuckets(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields, table: String,
        _ body: (Int64, [Bucket]) throws -> Void
    ) async throws {
        var spread = VirtualGaps.Spread()
        try await spreadVirtualGaps(level: level, series: Set(series), from: from, to: to) {
            spread.add($0, $1, $2, $3)
        }
        let rows = try await session.query(
            """
            SELECT ARRAY[series_id, start, \(BucketColumns.selectList(fields))] FROM \(table)
            WHERE series_id = ANY($1) AND start >= $2 AND start < $3 ORDER BY series_id, start
            """, series: series, from: from, to: to)
        func finish(_ id: Int64, _ list: [Bucket]) throws { try body(id, spread.merge(id, into: list, level: level)) }
        var current: Int64?
        var list = [Bucket]()
        // Each row is one array cell (``BigintArray``): reading thousands of buckets, decoding each column as a cell
        // of its own was most of the time.
        let width = 2 + BucketColumns.names(fields).count
        for row in rows {
            guard let cell = row.first else { continue }
            let numbers = try BigintArray.decode(cell)
            guard numbers.count == width else {
                throw BigintArray.Malformed(description: "a bucket row of \(numbers.count) values, not \(width)")
            }
            var columns = DecodedColumns(numbers: numbers, index: 0)
            let id = columns.next()
            if id != current {
                if let current { try finish(current, list) }
                current = id
                list.removeAll(keepingCapacity: true)
            }
            let start = columns.next()
            let (values, revision) = BucketColumns.values(fields: fields, from: &columns)
            list.append(Bucket(level: level, start: start, values: values, revision: revision))
        }
        if let current { try finish(current, list) }
        for id in spread.remaining { try finish(id, []) }
    }

    func spreadVirtualGaps(
        level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void
    ) async throws {
        guard !series.isEmpty else { return }
        let end = VirtualGaps.end(level: level, to: to)
        let rows: [PostgresRow]
        if let owners = try await gapOwners(of: series, from: from) {
            // A few interfaces and hosts (a bill rebuilt, a host's page), fewer than the gaps overlapping the time:
            // only their interfaces' gaps, by the gap table's key.
            guard !owners.isEmpty else { return }
            var binds = PostgresBindings()
            binds.append(owners)
            rows = try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT series_id, prev, next, scopes, step, revision FROM gap
                        WHERE series_id = ANY($1) AND virtual AND to_ts > \(from) AND from_ts < \(end)
                        """, binds: binds))
        } else {
            rows = try await session.query(
                """
                SELECT series_id, prev, next, scopes, step, revision FROM gap
                WHERE virtual AND to_ts > \(from) AND from_ts < \(end)
                """)
        }
        for row in rows {
            let (owner, previous, next, scopes, step, revision) = try row.decode(
                (Int64, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer, Int64).self)
            try VirtualGaps.spread(
                VirtualGaps.Row(
                    owner: owner, previous: Array(previous.readableBytesView), next: Array(next.readableBytesView),
                    scopes: Array(scopes.readableBytesView), step: Array(step.readableBytesView), revision: revision),
                level: level, series: series, from: from, to: to, add)
        }
    }

    /// As ``SQLiteStore/gapOwners(of:from:in:)``: the interfaces whose gaps can add to `series` when they are
    /// better looked up by key (``VirtualGaps/ownersByKey(of:overlapping:rows:interfaces:)``), nil when every gap
    /// overlapping the time is to be read.
    func gapOwners(of series: Set<Int64>, from: Int64) async throws -> [Int64]? {
        try await VirtualGaps.ownersByKey(
            of: series,
            overlapping: { limit in
                Int(
                    try await session.query(
                        "SELECT count(*) FROM (SELECT 1 FROM gap WHERE virtual AND to_ts > \(from) LIMIT \(Int64(limit + 1))) AS g"
                    ).first?.decode(Int64.self) ?? 0)
            },
            rows: { ids in
                var binds = PostgresBindings()
                binds.append(ids)
                return try await session.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT id, kind::bigint, agent_id FROM series WHERE id = ANY($1)", binds: binds)
                ).map { row in
                    let (id, kind, agent) = try row.decode((Int64, Int64, Int64).self)
                    return (id: id, kind: SeriesKind(rawValue: Int(kind)), agent: agent)
                }
            },
            interfaces: { agents in
                var binds = PostgresBindings()
                binds.append(agents)
                return try await session.query(
                    PostgresQuery(
                        unsafeSQL:
                            "SELECT id FROM series WHERE kind = \(SeriesKind.interface.rawValue) AND agent_id = ANY($1)",
                        binds: binds)
                ).map { try $0.decode(Int64.self) }
            })
    }

    func billChangeRows(limit: Int) async throws -> [ChangedInterval] {
        let table = BucketColumns.table(.fiveMinutes)
        return try await session.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT c.series_id, c.start, c.rx, c.tx, c.covered, c.unknown, c.revision, c.measured, c.flagged,
                        coalesce(r.rx_bytes, 0), coalesce(r.tx_bytes, 0), coalesce(r.measured_ms + r.interpolated_ms, 0),
                        coalesce(r.measured_ms, 0), coalesce(r.flagged_ms + r.implausible, 0)
                    FROM bill_change c LEFT JOIN \(table) r ON r.series_id = c.series_id AND r.start = c.start
                    ORDER BY c.start, c.series_id LIMIT \(limit)
                    """)
        ).map { row in ChangedInterval(columns: try row.map { try $0.decode(Int64.self) }) }
    }

    func forwardStates() async throws -> [Int64: ForwardState] {
        var states = [Int64: ForwardState]()
        for row in try await session.query(
            "SELECT series_id, counted_rx, counted_tx, sent_rx, sent_tx FROM forward_state")
        {
            let (series, countedRx, countedTx, sentRx, sentTx) = try row.decode(
                (Int64, Int64, Int64, Int64, Int64).self)
            states[series] = ForwardState(
                series: series, countedRx: countedRx, countedTx: countedTx, sentRx: sentRx, sentTx: sentTx)
        }
        return states
    }

    func forwardChangeRows(cursor: Int64, limit: Int) async throws -> [ForwardChange] {
        let columns = ForwardChange.columns
        let rows =
            try await session.query(
                PostgresQuery(unsafeSQL: "SELECT \(columns) FROM forward_change WHERE start >= \(cursor)"))
            + (try await session.query(
                PostgresQuery(
                    unsafeSQL:
                        "SELECT \(columns) FROM forward_change WHERE start < \(cursor) ORDER BY series_id, start LIMIT \(limit)"
                )))
        return try rows.map { row in
            var cells = CellColumns(row, table: "forward_change")
            return try ForwardChange(row: &cells)
        }
    }
}

/// A row's cells decoded one after the other, for the shared decoders (``StoreRow``, ``BucketColumnSource``); a
/// row with fewer than asked for is damaged.
struct CellColumns: BucketColumnSource, StoreRow {
    var cells: PostgresRow.Iterator
    /// For the error: the table the row is of.
    let table: String

    init(_ row: PostgresRow, table: String) {
        cells = row.makeIterator()
        self.table = table
    }

    private mutating func decode<Value: PostgresDecodable>(_: Value.Type) throws -> Value {
        guard let cell = cells.next() else {
            throw StoreError.damaged("a row of \(table) has fewer columns than asked for")
        }
        return try cell.decode(Value.self)
    }

    mutating func next() throws -> Int64 { try decode(Int64.self) }
    mutating func integer() throws -> Int64 { try decode(Int64.self) }
    mutating func optionalInteger() throws -> Int64? { try decode(Int64?.self) }
    mutating func text() throws -> String { try decode(String.self) }
    mutating func optionalText() throws -> String? { try decode(String?.self) }
}

/// A row already decoded into integers (``BigintArray``), read from `index` on.
struct DecodedColumns: BucketColumnSource {
    let numbers: [Int64]
    var index: Int

    mutating func next() -> Int64 {
        defer { index += 1 }
        return numbers[index]
    }
}
