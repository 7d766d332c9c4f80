import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import PulseStoreSQLite
import TestSupport

/// Makes a store for the query benchmarks: `interfaces` interfaces (16 per agent) with `days` of 5-minute data
/// (and the hourly and daily rollups, the hosts, the fleet and the open bills), written by the store's bulk loader
/// rather than by ingest (see `SQLiteStore.bulkLoad`), and a daemon config that `netpulse` reads it with.
///
/// With `fineDays`, 5-minute rows are written only for the first day and the last `fineDays` days (the hourly and
/// daily rollups and the bills still cover every day): what the benchmark's queries read is all there — the 30-day
/// ranking reads 5-minute rows only at its edges, the 7-day window lies in the last 8 days — and a store of 100,000
/// interfaces fits a disk of 64 GB (about 23 GB instead of 62).
enum QueryBench {
    static func makeStore(directory: String, interfaces: Int, days: Int, fineDays: Int? = nil) throws {
        let now = WallClock.system.now()
        let settings = StoreSettings(levels: [.fiveMinutes, .oneHour, .oneDay], synchronous: .normal)
        try? FileManager.default.removeItem(atPath: directory)
        let store = try SQLiteStore(path: directory + "/netpulsed/netpulse.db", settings: settings)
        try """
        [daemon]
        state_directory = "\(directory)/netpulsed"
        [rollups]
        levels = ["5m", "1h", "1d"]
        """.write(toFile: directory + "/netpulsed.toml", atomically: true, encoding: .utf8)
        let end = RollupLevel.fiveMinutes.bucketStart(now)
        let start = end - Int64(days) * 86_400_000
        let keepFine: @Sendable (Int64) -> Bool =
            if let fineDays {
                { [start, end] time in time < start + 86_400_000 || time >= end - Int64(fineDays) * 86_400_000 }
            } else {
                { _ in true }
            }
        var random = SplitMix64(seed: 7)
        var fleet = [Int: [Int64: BucketValues]]()
        let began = Date()
        let agents = max(1, interfaces / 16)
        for agent in 0..<agents {
            var list = [(name: InterfaceName, buckets: [Bucket])]()
            for interface in 0..<16 {
                // Each interface its own mean rate (a few kbit/s to a few hundred Mbit/s), a daily cycle, noise.
                let mean = Double(1 << Int.random(in: 10...25, using: &random))
                var buckets = [Bucket]()
                buckets.reserveCapacity(days * 288)
                var time = start
                while time < end {
                    let hour = Double((time / 3_600_000) % 24)
                    let daily = 1 + 0.6 * sin((hour - 6) / 24 * 2 * Double.pi)
                    let rate = mean * daily * Double.random(in: 0.5...1.5, using: &random)
                    var values = BucketValues()
                    values.traffic[.rxBytes] = Int64(rate * 300)
                    values.traffic[.txBytes] = Int64(rate * 300 * Double.random(in: 0.1...0.6, using: &random))
                    values.traffic[.rxPackets] = values.traffic[.rxBytes] / 900
                    values.traffic[.txPackets] = values.traffic[.txBytes] / 600
                    values.traffic[.rxErrors] = Int64.random(in: 0...3, using: &random) == 0 ? 1 : 0
                    values.measuredMilliseconds = 300_000
                    values.peakRx = UInt64(rate * 1.8)
                    values.peakTx = UInt64(rate * 0.9)
                    values.speedMbps = 10_000
                    buckets.append(Bucket(level: .fiveMinutes, start: time, values: values))
                    time += 300_000
                }
                list.append((InterfaceName("eth\(interface)"), buckets))
            }
            try store.bulkLoad(
                SQLiteStore.BulkAgent(name: "host-\(agent)", interfaces: list), fleet: &fleet, now: now,
                keepFinest: keepFine)
            if agent % 100 == 99 {
                print("  \(agent + 1) of \(agents) agents loaded (\(Int(Date().timeIntervalSince(began))) s)")
            }
        }
        try store.finishBulkLoad(fleet: fleet, now: now, keepFinest: keepFine)
        let fine = fineDays.map { " (5-minute rows for the first day and the last \($0) only)" } ?? ""
        print(
            "store of \(agents * 16) interfaces × \(days) days of 5-minute data\(fine): \(Units.formatBytes(Double(store.sizeOnDisk))), made in \(Int(Date().timeIntervalSince(began))) s"
        )
    }
}
