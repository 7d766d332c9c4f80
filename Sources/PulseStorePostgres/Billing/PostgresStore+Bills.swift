import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseStore

/// Bills and remote write in PostgreSQL: the same rows and passes as in SQLite (SQLiteStore+Bills.swift,
/// SQLiteStore+Forwarding.swift). A write that moves the bill or forward mark takes the revision row first, as ingest
/// does (``PostgresIngestTransaction/lockRevision()``): a commit that read the old mark has then committed before the
/// mark moves, so no change to an interval billing or remote write has taken in goes unrecorded.
extension PostgresStore {
    static let lockRevision = "SELECT value FROM meta WHERE key = 'revision' FOR UPDATE"

    // MARK: Bills

    public func billCursor() async throws -> Int64 {
        try await read { session in try await PostgresSnapshotReader.meta(session)["bill_cursor"] ?? 0 }
    }

    public func recordedTimeZone() async throws -> String? {
        try await read { session in
            try await session.query("SELECT value FROM setting WHERE key = 'time_zone'").first?.decode(String.self)
        }
    }

    public func recordTimeZone(_ name: String) async throws {
        try await write { session in
            try await session.query(
                """
                INSERT INTO setting (key, value) VALUES ('time_zone', \(name))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
        }
    }

    public func markBillIntervals(before time: Int64) async throws {
        try await leaderWrite { session in try await Self.raiseMark("bill_mark", to: time, session) }
    }

    /// Moves a mark up to `time`, never down, holding the revision row until the transaction ends.
    static func raiseMark(_ key: String, to time: Int64, _ session: PostgresSession) async throws {
        try await session.execute(lockRevision)
        try await session.query("UPDATE meta SET value = GREATEST(value, \(time)) WHERE key = \(key)")
    }

    public func withBillSnapshot<Result: Sendable>(
        _ body: @escaping @Sendable (any BillSnapshot) async throws -> Result
    ) async throws -> Result {
        guard settings.levels.contains(.fiveMinutes) else {
            throw StoreError.unusable("bills are kept from 5-minute rollups, which this store does not keep")
        }
        return try await read { session in
            let revision = try await PostgresSnapshotReader.meta(session)["revision"] ?? 0
            return try await body(
                StoreBillSnapshot(reader: PostgresSnapshotReader(session: session, revision: revision)))
        }
    }

    static let billSelect = """
        SELECT b.series_id, b.period_from, b.period_to, b.method, b.intervals, b.missing, b.p_in, b.p_out, b.p_sum,
            b.revision, b.as_of, b.issued_at, b.measured, b.interpolated, b.flagged, b.rank_rule, t.tracker
        FROM bill b LEFT JOIN bill_tracker t ON t.series_id = b.series_id AND t.period_from = b.period_from
        """

    static func bill(_ row: PostgresRow) throws -> StoredBill {
        let (
            series, from, to, method, intervals, missing, inbound, outbound, sum, revision, asOf, issuedAt, measured,
            interpolated, flagged, rankRule, tracker
        ) = try row.decode(
            (
                Int64, Int64, Int64, String, Int64, Int64, Int64?, Int64?, Int64?, Int64, Int64, Int64?, Int64?, Int64?,
                Int64?, String?, ByteBuffer?
            ).self)
        let classes = BillClassColumns.classes(measured, interpolated, flagged)
        let rank = BillClassColumns.rank(rankRule)
        return StoredBill(
            series: series,
            bill: Bill(
                period: Window(from: from, to: to, name: "billing-period"),
                method: BillingMethod(rawValue: method) ?? .max, intervals: Int(intervals), missing: Int(missing),
                classes: classes, rank: rank, inbound: inbound, outbound: outbound, sum: sum, revision: revision),
            asOf: asOf, issuedAt: issuedAt,
            tracker: tracker.flatMap { BillTracker(encoded: Array($0.readableBytesView)) })
    }

    public func openBills() async throws -> [StoredBill] {
        try await read { session in
            try await session.query(PostgresQuery(unsafeSQL: Self.billSelect + " WHERE b.issued_at IS NULL"))
                .map(Self.bill)
        }
    }

    public func bills(series: [Int64]?, containing time: Int64) async throws -> [StoredBill] {
        try await read { session in
            // Without trackers, as the SQLite store lists them.
            var binds = PostgresBindings()
            binds.append(time)
            var filter = ""
            if let series {
                binds.append(series)
                filter = " AND b.series_id = ANY($2)"
            }
            return try await session.query(
                PostgresQuery(
                    unsafeSQL: Self.billSelect.replacingOccurrences(of: "t.tracker", with: "NULL::bytea")
                        + " WHERE b.period_from <= $1 AND b.period_to > $1" + filter, binds: binds)
            ).map(Self.bill)
        }
    }

    public func billAdjustments(series: [Int64]?, containing time: Int64) async throws -> [BillAdjustment] {
        try await read { session in
            try await session.query(
                """
                SELECT \(unescaped: BillAdjustment.columns) FROM \(unescaped: BillAdjustment.tables)
                WHERE b.period_from <= \(time) AND b.period_to > \(time) ORDER BY a.found_at
                """
            ).map { row in
                var columns = CellColumns(row, table: "bill_adjustment")
                return try BillAdjustment(row: &columns)
            }.filter { adjustment in series.map { $0.contains(adjustment.series) } ?? true }
        }
    }

    public func saveBills(_ update: BillUpdate) async throws {
        try await leaderWrite { session in
            // The revision row is taken last (in raiseMark), just before COMMIT: a pass writing thousands of bills
            // must not hold every daemon's ingest off while it does.
            for stored in update.bills {
                let bill = stored.bill
                let counts = BillClassColumns.counts(bill)
                try await session.query(
                    """
                    INSERT INTO bill (series_id, period_from, period_to, method, intervals, missing, p_in, p_out,
                        p_sum, revision, as_of, issued_at, measured, interpolated, flagged, rank_rule)
                    VALUES (\(stored.series), \(bill.period.from), \(bill.period.to), \(bill.method.rawValue),
                        \(Int64(bill.intervals)), \(Int64(bill.missing)), \(bill.inbound), \(bill.outbound),
                        \(bill.sum), \(bill.revision), \(stored.asOf), \(stored.issuedAt), \(counts[0]), \(counts[1]),
                        \(counts[2]), \(bill.rank.rawValue))
                    ON CONFLICT (series_id, period_from) DO UPDATE SET period_to = excluded.period_to,
                        method = excluded.method, intervals = excluded.intervals, missing = excluded.missing,
                        p_in = excluded.p_in, p_out = excluded.p_out, p_sum = excluded.p_sum,
                        revision = excluded.revision, as_of = excluded.as_of, issued_at = excluded.issued_at,
                        measured = excluded.measured, interpolated = excluded.interpolated,
                        flagged = excluded.flagged, rank_rule = excluded.rank_rule
                    """)
                if let tracker = stored.tracker {
                    try await session.query(
                        """
                        INSERT INTO bill_tracker (series_id, period_from, tracker)
                        VALUES (\(stored.series), \(bill.period.from), \(ByteBuffer(bytes: tracker.encoded)))
                        ON CONFLICT (series_id, period_from) DO UPDATE SET tracker = excluded.tracker
                        """)
                } else {
                    try await session.query(
                        "DELETE FROM bill_tracker WHERE series_id = \(stored.series) AND period_from = \(bill.period.from)"
                    )
                }
            }
            for adjustment in update.adjustments {
                let bill = adjustment.bill
                let counts = BillClassColumns.counts(bill)
                try await session.query(
                    """
                    INSERT INTO bill_adjustment (series_id, period_from, found_at, method, intervals, missing, p_in,
                        p_out, p_sum, revision, measured, interpolated, flagged, rank_rule)
                    VALUES (\(adjustment.series), \(bill.period.from), \(adjustment.foundAt), \(bill.method.rawValue),
                        \(Int64(bill.intervals)), \(Int64(bill.missing)), \(bill.inbound), \(bill.outbound),
                        \(bill.sum), \(bill.revision), \(counts[0]), \(counts[1]), \(counts[2]), \(bill.rank.rawValue))
                    ON CONFLICT (series_id, period_from, found_at) DO UPDATE SET method = excluded.method,
                        intervals = excluded.intervals, missing = excluded.missing, p_in = excluded.p_in,
                        p_out = excluded.p_out, p_sum = excluded.p_sum, revision = excluded.revision,
                        measured = excluded.measured, interpolated = excluded.interpolated,
                        flagged = excluded.flagged, rank_rule = excluded.rank_rule
                    """)
            }
            try await Self.settleChanges(
                in: "bill_change", columns: BillUpdate.changeColumns, update.settledChanges, session)
            try await session.query("UPDATE meta SET value = \(update.cursor) WHERE key = 'bill_cursor'")
            try await Self.raiseMark("bill_mark", to: update.cursor, session)
        }
    }

    /// Settles change records as a pass read them (see ``SQLiteStore/settleChanges(in:columns:_:_:)``).
    static func settleChanges(
        in table: String, columns: [String],
        _ records: [SettledChange], _ session: PostgresSession
    ) async throws {
        for record in records {
            let removed = try await session.query(
                PostgresQuery(
                    unsafeSQL: """
                        DELETE FROM \(table) WHERE series_id = \(record.series) AND start = \(record.start)
                            AND revision = \(record.revision) RETURNING 1
                        """))
            guard removed.isEmpty else { continue }
            let updates = zip(columns, record.amounts).map { "\($0) = \($0) - \($1)" }.joined(separator: ", ")
            try await session.execute(
                "UPDATE \(table) SET \(updates) WHERE series_id = \(record.series) AND start = \(record.start)")
        }
    }
}
