import Foundation
import GRDB
import GRDBSQLite
import PulseAnalytics
import PulseStore

extension SQLiteStore {
    public func billCursor() async throws -> Int64 {
        try await pool.read { db in try SQLiteStore.meta("bill_cursor", db) }
    }

    public func recordedTimeZone() async throws -> String? {
        try await pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'time_zone'") }
    }

    public func recordTimeZone(_ name: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO setting (key, value) VALUES ('time_zone', ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, arguments: [name])
        }
    }

    public func markBillIntervals(before time: Int64) async throws {
        try await pool.write { db in try Self.raiseBillMark(to: time, in: db) }
    }

    /// Moves the bill mark (``ChangeTracker/billMark``) up to `time`, never down.
    static func raiseBillMark(to time: Int64, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO meta (key, value) VALUES ('bill_mark', ?)
                ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)
                """, arguments: [time])
    }

    public func withBillSnapshot<Result: Sendable>(
        _ body: @escaping @Sendable (any BillSnapshot) async throws -> Result
    ) async throws -> Result {
        try await pool.read { db in
            guard try self.storedLevels(db).contains(.fiveMinutes) else {
                throw StoreError.unusable("bills are kept from 5-minute rollups, which this store does not keep")
            }
            let snapshot = StoreBillSnapshot(
                reader: SQLiteSnapshotReader(db: db, revision: try SQLiteStore.meta("revision", db)))
            return try InlineAsync.run { try await body(snapshot) }
        }
    }

    public func openBills() async throws -> [StoredBill] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.billColumnNames.map { "b.\($0)" }.joined(separator: ", ")), t.tracker
                    FROM bill b LEFT JOIN bill_tracker t ON t.series_id = b.series_id AND t.period_from = b.period_from
                    WHERE b.issued_at IS NULL
                    """
            ).map(Self.bill)
        }
    }

    public func bills(series: [Int64]?, containing time: Int64) async throws -> [StoredBill] {
        try await kept(keptBills, series: series, time: time) { db in
            var bills = [StoredBill]()
            func read(_ sql: String, _ arguments: [Int64]) throws {
                let statement = try db.makeStatement(sql: sql)
                try statement.setArguments(StatementArguments(arguments))
                try db.forEachRow(of: statement) { bills.append(Self.bill($0)) }
            }
            guard let series else {
                try read("SELECT \(Self.billColumns) FROM bill WHERE period_from <= ? AND period_to > ?", [time, time])
                return bills
            }
            for slice in Self.slices(series) {
                try read(
                    """
                    SELECT \(Self.billColumns) FROM bill
                    WHERE series_id IN (\(Self.placeholders(slice.count))) AND period_from <= ? AND period_to > ?
                    """, slice + [time, time])
            }
            return bills
        }
    }

    public func billAdjustments(series: [Int64]?, containing time: Int64) async throws -> [BillAdjustment] {
        let wanted = series.map(Set.init)
        return try await kept(keptAdjustments, series: series, time: time) { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(BillAdjustment.columns) FROM \(BillAdjustment.tables)
                    WHERE b.period_from <= ? AND b.period_to > ? ORDER BY a.found_at
                    """, arguments: [time, time]
            ).map { row in
                var columns = Columns(row)
                return try BillAdjustment(row: &columns)
            }.filter { adjustment in wanted.map { $0.contains(adjustment.series) } ?? true }
        }
    }

    /// What `read` gives for `series` at `time`: in the daemon's own store, the answer `memo` kept while no bill has
    /// been written since (``KeptBillsMemo``), else `read` with the latest bill start beside it, kept for next time.
    private func kept<Row: Sendable>(
        _ memo: KeptBillsMemo<Row>, series: [Int64]?, time: Int64,
        _ read: @escaping @Sendable (Database) throws -> [Row]
    ) async throws -> [Row] {
        guard isOwner else { return try await pool.read(read) }
        // Before the read: a bill written meanwhile makes the next call read again.
        let generation = billCommits.load(ordering: .acquiring)
        if let kept = memo.answer(series: series, time: time, generation: generation) { return kept }
        let (rows, latestStart) = try await pool.read { db in (try read(db), try Self.latestBillStart(db)) }
        memo.remember(rows, series: series, time: time, latestStart: latestStart, generation: generation)
        return rows
    }

    /// The latest start of a billing period among the store's bills (nil: none), so an answer for a time is kept
    /// only when no bill starts after it (``KeptBillsMemo``).
    static func latestBillStart(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT max(period_from) FROM bill")
    }

    public func saveBills(_ update: BillUpdate) async throws {
        try await pool.write { db in
            for stored in update.bills { try Self.save(stored, in: db) }
            for adjustment in update.adjustments {
                let bill = adjustment.bill
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO bill_adjustment (series_id, period_from, found_at, method, intervals,
                            missing, p_in, p_out, p_sum, revision, \(BillClassColumns.names.joined(separator: ", ")))
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: StatementArguments(
                        [
                            adjustment.series, bill.period.from, adjustment.foundAt, bill.method.rawValue,
                            bill.intervals, bill.missing, bill.inbound, bill.outbound, bill.sum, bill.revision,
                        ] + Self.classValues(bill)))
            }
            try Self.settleChanges(
                in: "bill_change", columns: BillUpdate.changeColumns, update.settledChanges, db)
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'bill_cursor'", arguments: [update.cursor])
            try Self.raiseBillMark(to: update.cursor, in: db)
        }
        dataChanged()
    }

    /// Settles change records (`bill_change`, `forward_change`: per series and bucket, amounts added since a pass
    /// read them, and the revision of the last change) as a pass read them: a record untouched since goes; one
    /// changed since keeps only what changed after the read (its `columns` less the `amounts` read).
    static func settleChanges(
        in table: String, columns: [String],
        _ records: [SettledChange],
        _ db: Database
    ) throws {
        let remove = try db.cachedStatement(
            sql: "DELETE FROM \(table) WHERE series_id = ? AND start = ? AND revision = ?")
        let reduce = try db.cachedStatement(
            sql: """
                UPDATE \(table) SET \(columns.map { "\($0) = \($0) - ?" }.joined(separator: ", "))
                WHERE series_id = ? AND start = ?
                """)
        for record in records {
            try remove.execute(arguments: [record.series, record.start, record.revision])
            guard db.changesCount == 0 else { continue }
            try reduce.execute(arguments: StatementArguments(record.amounts + [record.series, record.start]))
        }
    }

    /// Writes a bill, and its tracker while it is open.
    static func save(_ stored: StoredBill, in db: Database) throws {
        let bill = stored.bill
        try db.run(
            sql: """
                INSERT OR REPLACE INTO bill (\(billColumns))
                VALUES (\(Array(repeating: "?", count: billColumnNames.count).joined(separator: ", ")))
                """,
            arguments: StatementArguments(
                [
                    stored.series, bill.period.from, bill.period.to, bill.method.rawValue, bill.intervals,
                    bill.missing, bill.inbound, bill.outbound, bill.sum, bill.revision, stored.asOf, stored.issuedAt,
                ] + classValues(bill)))
        if let tracker = stored.tracker {
            try db.run(
                sql: "INSERT OR REPLACE INTO bill_tracker (series_id, period_from, tracker) VALUES (?, ?, ?)",
                arguments: [stored.series, bill.period.from, Data(tracker.encoded)])
        } else {
            try db.run(
                sql: "DELETE FROM bill_tracker WHERE series_id = ? AND period_from = ?",
                arguments: [stored.series, bill.period.from])
        }
    }

    /// The values of ``BillClassColumns/names`` for `bill`.
    static func classValues(_ bill: Bill) -> [(any DatabaseValueConvertible)?] {
        BillClassColumns.counts(bill) + [bill.rank.rawValue]
    }

    /// The columns of a bill (its tracker is in `bill_tracker`).
    static let billColumnNames =
        [
            "series_id", "period_from", "period_to", "method", "intervals", "missing", "p_in", "p_out", "p_sum",
            "revision",
            "as_of", "issued_at",
        ] + BillClassColumns.names
    static let billColumns = billColumnNames.joined(separator: ", ")

    /// A bill from the current row of `statement` (``billColumns``), read straight from SQLite: a fleet of 10,000
    /// interfaces has 10,000 bills to list.
    static func bill(_ row: SQLiteStatement) -> StoredBill {
        func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(row, index) }
        func optional(_ index: Int32) -> Int64? {
            sqlite3_column_type(row, index) == SQLITE_NULL ? nil : sqlite3_column_int64(row, index)
        }
        let method = sqlite3_column_text(row, 3).map { String(cString: $0) } ?? ""
        return StoredBill(
            series: integer(0),
            bill: Bill(
                period: Window(from: integer(1), to: integer(2), name: "billing-period"),
                method: BillingMethod(rawValue: method) ?? .max, intervals: Int(integer(4)), missing: Int(integer(5)),
                classes: BillClassColumns.classes(optional(12), optional(13), optional(14)),
                rank: BillClassColumns.rank(sqlite3_column_text(row, 15).map { String(cString: $0) }),
                inbound: optional(6), outbound: optional(7), sum: optional(8), revision: integer(9)),
            asOf: integer(10), issuedAt: optional(11))
    }

    static func bill(_ row: Row) -> StoredBill {
        StoredBill(
            series: row[0],
            bill: Bill(
                period: Window(from: row[1], to: row[2], name: "billing-period"),
                method: BillingMethod(rawValue: row[3]) ?? .max, intervals: row[4], missing: row[5],
                classes: BillClassColumns.classes(row[12], row[13], row[14]), rank: BillClassColumns.rank(row[15]),
                inbound: row[6], outbound: row[7], sum: row[8], revision: row[9]),
            asOf: row[10], issuedAt: row[11],
            tracker: row.count > 16 ? (row[16] as Data?).flatMap { BillTracker(encoded: Array($0)) } : nil)
    }
}

/// A read transaction of the SQLite store, for the passes of billing and remote write.
struct SQLiteSnapshotReader: SnapshotReader {
    let db: Database
    let revision: Int64

    func readBuckets(
        level: RollupLevel, series: [Int64], from: Int64, to: Int64, fields: BucketFields,
        _ body: (Int64, [Bucket]) throws -> Void
    ) throws {
        let _: [Int64: Never] = try SQLiteStore.readBuckets(
            level: level, series: series, from: from, to: to, fields: fields, table: BucketColumns.table(level),
            in: db
        ) { id, buckets in
            try body(id, buckets)
            return nil
        }
    }

    func spreadVirtualGaps(
        level: RollupLevel, series: Set<Int64>, from: Int64, to: Int64,
        _ add: (Int64, Int64, BucketValues, Int64) -> Void
    ) throws {
        try SQLiteStore.spreadVirtualGaps(level: level, series: series, from: from, to: to, in: db, add)
    }

    func billChangeRows(limit: Int) throws -> [ChangedInterval] {
        let table = BucketColumns.table(.fiveMinutes)
        let statement = try db.makeStatement(
            sql: """
                SELECT c.series_id, c.start, c.rx, c.tx, c.covered, c.unknown, c.revision, c.measured, c.flagged,
                    coalesce(r.rx_bytes, 0), coalesce(r.tx_bytes, 0), coalesce(r.measured_ms + r.interpolated_ms, 0),
                    coalesce(r.measured_ms, 0), coalesce(r.flagged_ms + r.implausible, 0)
                FROM bill_change c LEFT JOIN \(table) r ON r.series_id = c.series_id AND r.start = c.start
                ORDER BY c.start, c.series_id LIMIT ?
                """)
        try statement.setArguments([limit])
        var intervals = [ChangedInterval]()
        try db.forEachRow(of: statement) { row in
            intervals.append(ChangedInterval(columns: (0..<14).map { sqlite3_column_int64(row, $0) }))
        }
        return intervals
    }

    func forwardStates() throws -> [Int64: ForwardState] {
        var states = [Int64: ForwardState]()
        for row in try Row.fetchAll(
            db, sql: "SELECT series_id, counted_rx, counted_tx, sent_rx, sent_tx FROM forward_state")
        {
            let state = ForwardState(
                series: row[0], countedRx: row[1], countedTx: row[2], sentRx: row[3], sentTx: row[4])
            states[state.series] = state
        }
        return states
    }

    func forwardChangeRows(cursor: Int64, limit: Int) throws -> [ForwardChange] {
        let columns = ForwardChange.columns
        let rows =
            try Row.fetchAll(
                db, sql: "SELECT \(columns) FROM forward_change WHERE start >= ?", arguments: [cursor])
            + Row.fetchAll(
                db, sql: "SELECT \(columns) FROM forward_change WHERE start < ? ORDER BY series_id, start LIMIT ?",
                arguments: [cursor, limit])
        return try rows.map { row in
            var cells = SQLiteStore.Columns(row)
            return try ForwardChange(row: &cells)
        }
    }
}
