import Foundation
import GRDB
import GRDBSQLite
import PulseAnalytics

extension SQLiteStore {
    public func billCursor() async throws -> Int64 {
        try await pool.read { db in try StoreWriter.meta("bill_cursor", db) }
    }

    public func changedBillIntervals(limit: Int) async throws -> [(series: Int64, start: Int64)] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT series_id, start FROM bill_dirty ORDER BY start, series_id LIMIT ?", arguments: [limit]
            ).map { (series: $0[0], start: $0[1]) }
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
        try await pool.read { db in
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
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.series_id, a.found_at, a.method, a.intervals, a.missing, a.p_in, a.p_out, a.p_sum,
                        a.revision, b.period_from, b.period_to
                    FROM bill_adjustment a JOIN bill b ON b.series_id = a.series_id AND b.period_from = a.period_from
                    WHERE b.period_from <= ? AND b.period_to > ? ORDER BY a.found_at
                    """, arguments: [time, time]
            ).filter { row in series.map { $0.contains(row[0] as Int64) } ?? true }.map { row in
                BillAdjustment(
                    series: row[0], foundAt: row[1],
                    bill: Bill(
                        period: Window(from: row[9], to: row[10], name: "billing-period"),
                        method: BillingMethod(rawValue: row[2]) ?? .max, intervals: row[3], missing: row[4],
                        inbound: row[5], outbound: row[6], sum: row[7], revision: row[8]))
            }
        }
    }

    public func saveBills(_ update: BillUpdate) async throws {
        try await pool.write { db in
            for stored in update.bills { try Self.save(stored, in: db) }
            for adjustment in update.adjustments {
                let bill = adjustment.bill
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO bill_adjustment (series_id, period_from, found_at, method, intervals,
                            missing, p_in, p_out, p_sum, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        adjustment.series, bill.period.from, adjustment.foundAt, bill.method.rawValue, bill.intervals,
                        bill.missing, bill.inbound, bill.outbound, bill.sum, bill.revision,
                    ])
            }
            let settle = try db.cachedStatement(sql: "DELETE FROM bill_dirty WHERE series_id = ? AND start = ?")
            for interval in update.settled { try settle.execute(arguments: [interval.series, interval.start]) }
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'bill_cursor'", arguments: [update.cursor])
        }
    }

    /// Writes a bill, and its tracker while it is open.
    static func save(_ stored: StoredBill, in db: Database) throws {
        let bill = stored.bill
        try db.run(
            sql: """
                INSERT OR REPLACE INTO bill (series_id, period_from, period_to, method, intervals, missing, p_in,
                    p_out, p_sum, revision, as_of, issued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                stored.series, bill.period.from, bill.period.to, bill.method.rawValue, bill.intervals, bill.missing,
                bill.inbound, bill.outbound, bill.sum, bill.revision, stored.asOf, stored.issuedAt,
            ])
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

    /// The columns of a bill (its tracker is in `bill_tracker`).
    static let billColumnNames = [
        "series_id", "period_from", "period_to", "method", "intervals", "missing", "p_in", "p_out", "p_sum", "revision",
        "as_of", "issued_at",
    ]
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
                inbound: optional(6), outbound: optional(7), sum: optional(8), revision: integer(9)),
            asOf: integer(10), issuedAt: optional(11))
    }

    static func bill(_ row: Row) -> StoredBill {
        StoredBill(
            series: row[0],
            bill: Bill(
                period: Window(from: row[1], to: row[2], name: "billing-period"),
                method: BillingMethod(rawValue: row[3]) ?? .max, intervals: row[4], missing: row[5], inbound: row[6],
                outbound: row[7], sum: row[8], revision: row[9]),
            asOf: row[10], issuedAt: row[11],
            tracker: row.count > 12 ? (row[12] as Data?).flatMap { BillTracker(encoded: Array($0)) } : nil)
    }
}
