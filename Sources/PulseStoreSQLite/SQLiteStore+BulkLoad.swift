import Foundation
import GRDB
import GRDBSQLite
import PulseAnalytics
import PulseCore
import PulseStore

/// For benchmarks only: fills a store with the rollups and bills of synthetic interfaces straight into the tables
/// (no raw samples, no counting), so a store of 100,000 interfaces with a month of 5-minute data can be made in
/// minutes rather than by ingesting 26 billion samples. What queries then read is laid out exactly as ingest lays
/// it out; `scripts/bench.sh` says the query figures come from such a store.
extension SQLiteStore {
    /// One agent's interfaces with their buckets of the store's finest level, oldest first.
    public struct BulkAgent: Sendable {
        public var name: String
        public var interfaces: [(name: InterfaceName, buckets: [Bucket])]

        public init(name: String, interfaces: [(name: InterfaceName, buckets: [Bucket])]) {
            self.name = name
            self.interfaces = interfaces
        }
    }

    /// Writes one agent's interfaces and host, adds them to the fleet's sums (`fleet`, by level and start), and
    /// their open bills for the period holding `now` (billing day 1, UTC, `max`). Buckets of the finest level for
    /// which `keepFinest` is false are rolled up into the coarser levels and the bills but not written themselves.
    public func bulkLoad(
        _ agent: BulkAgent, fleet: inout [Int: [Int64: BucketValues]], now: Int64,
        keepFinest: (Int64) -> Bool = { _ in true }
    ) throws {
        let levels = settings.levels
        defer { wrotePastTheWriter() }
        try pool.write { db in
            try db.run(
                sql: "INSERT INTO agent (name, hostname, version, first_seen, last_seen) VALUES (?, ?, 'bench', ?, ?)",
                arguments: [agent.name, agent.name, now, now])
            let agentID = db.lastInsertedRowID
            try db.run(
                sql: "INSERT INTO series (kind, agent_id, name, first_seen, last_seen) VALUES (1, ?, x'', ?, ?)",
                arguments: [agentID, now, now])
            let hostID = db.lastInsertedRowID
            var host = [Int: [Int64: BucketValues]]()
            for interface in agent.interfaces {
                try db.run(
                    sql: """
                        INSERT INTO series (kind, agent_id, name, first_seen, last_seen, link_kind, speed_mbps)
                        VALUES (0, ?, ?, ?, ?, 1, 10000)
                        """, arguments: [agentID, Data(interface.name.bytes), now, now])
                let seriesID = db.lastInsertedRowID
                var rolled = [Int: [Int64: BucketValues]]()
                for bucket in interface.buckets {
                    for (index, level) in levels.enumerated() {
                        rolled[index, default: [:]][level.bucketStart(bucket.start), default: .empty].merge(
                            bucket.values)
                    }
                }
                try Self.write(rolled, series: seriesID, levels: levels, keepFinest: keepFinest, in: db)
                for (index, buckets) in rolled {
                    for (start, values) in buckets {
                        host[index, default: [:]][start, default: .empty].merge(values.sumsOnly)
                        fleet[index, default: [:]][start, default: .empty].merge(values.sumsOnly)
                    }
                }
                try Self.writeBill(interface.buckets, series: seriesID, now: now, in: db)
            }
            try Self.writeSums(host, series: hostID, levels: levels, keepFinest: keepFinest, now: now, in: db)
        }
    }

    /// Writes the fleet's series and bill, and the bill cursor.
    public func finishBulkLoad(
        fleet: [Int: [Int64: BucketValues]], now: Int64, keepFinest: (Int64) -> Bool = { _ in true }
    ) throws {
        let levels = settings.levels
        defer { wrotePastTheWriter() }
        try pool.write { db in
            try db.run(
                sql: "INSERT INTO series (kind, agent_id, name, first_seen, last_seen) VALUES (3, 0, x'', ?, ?)",
                arguments: [now, now])
            let fleetID = db.lastInsertedRowID
            try Self.writeSums(fleet, series: fleetID, levels: levels, keepFinest: keepFinest, now: now, in: db)
            try db.run(
                sql: "UPDATE meta SET value = ? WHERE key = 'bill_cursor'",
                arguments: [RollupLevel.fiveMinutes.bucketStart(now)])
        }
    }

    /// Writes a series' buckets of every level (`rolled`, by index into `levels`); the finest only where kept.
    private static func write(
        _ rolled: [Int: [Int64: BucketValues]], series: Int64, levels: [RollupLevel],
        keepFinest: (Int64) -> Bool, in db: Database
    ) throws {
        let columns = BucketColumns.all
        var arguments = [Int64](repeating: 0, count: 2 + columns.count)
        for (index, buckets) in rolled {
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO \(BucketColumns.table(levels[index])) (series_id, start, \(columns.joined(separator: ", ")))
                    VALUES (?, ?, \(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                    """)
            for (start, values) in buckets.sorted(by: { $0.key < $1.key }) where index > 0 || keepFinest(start) {
                StoreWriter.bucketArguments(values, series: series, start: start, revision: 1, into: &arguments)
                try arguments.withUnsafeBufferPointer { try db.run(statement, integers: $0) }
            }
        }
    }

    /// Writes the buckets of a host or the fleet and its bill from its 5-minute sums.
    private static func writeSums(
        _ rolled: [Int: [Int64: BucketValues]], series: Int64, levels: [RollupLevel],
        keepFinest: (Int64) -> Bool, now: Int64, in db: Database
    ) throws {
        try write(rolled, series: series, levels: levels, keepFinest: keepFinest, in: db)
        if let five = levels.firstIndex(of: .fiveMinutes), let buckets = rolled[five] {
            try writeBill(
                buckets.map { Bucket(level: .fiveMinutes, start: $0.key, values: $0.value) }, series: series,
                now: now, in: db)
        }
    }

    private static func writeBill(_ buckets: [Bucket], series: Int64, now: Int64, in db: Database) throws {
        let cursor = RollupLevel.fiveMinutes.bucketStart(now)
        let span = CivilCalendar.utc.billingPeriod(day: 1, containing: cursor - 1)
        let period = Window(from: span.from, to: span.to, name: "billing-period")
        let tracker = BillTracker.rebuilt(from: buckets, period: period, now: cursor)
        let bill = tracker.bill(period: period, now: cursor, method: .max, revision: 1)
        try save(StoredBill(series: series, bill: bill, asOf: cursor, tracker: tracker), in: db)
    }

    /// Rows were written past the writer: what memory holds of them goes once they are in, and the catalogue may
    /// have changed.
    private func wrotePastTheWriter() {
        recent.forget()
        catalogueCommits.add(1, ordering: .releasing)
        dataChanged()
    }
}
