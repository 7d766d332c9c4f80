import PulseAnalytics
import PulseCore

@testable import OracleSupport

extension CaseGenerator {
    /// docs/windows.md, worked examples 11 to 13, as six hours of one interface (1000 Mbit/s, sampled every minute)
    /// from the start of a billing period, `now` 90 s past its sixth hour (the bills kept in the store are then current
    /// to the same interval):
    ///
    /// - 00:00–02:00 measured (24 intervals);
    /// - a 10-minute gap from 02:00 (2 intervals spread from it: interpolated);
    /// - 02:10–03:00 measured (10 intervals), with one step counting 20 GB in a minute at 02:30, above what the
    ///   link can carry (implausible: 1 flagged interval);
    /// - a two-hour outage from 03:00 (24 intervals that only its spread reaches: missing; its bytes in totals);
    /// - 05:00–06:00 measured (12 intervals).
    static func billingRules(strict: Bool = false) -> OracleCase {
        let start: Int64 = 1_780_272_000_000  // 2026-06-01T00:00:00Z
        let minutes = Array(0...120) + Array(130...180) + Array(300...360)
        var rx: UInt64 = 1_000_000_000
        var batches = [OracleCase.Batch]()
        for (index, minute) in minutes.enumerated() {
            if index > 0 {
                let elapsed = UInt64(minute - minutes[index - 1])
                rx += minute == 151 ? 20_000_000_000 : elapsed * (400_000 + UInt64(minute) * 7_919 % 900_000)
            }
            let time = start + Int64(minute) * 60_000
            let section = OracleCase.Section(
                name: "eth0", boot: BootID(high: 7, low: 7), ifindex: 2, width: .bits64,
                samples: [(0, time, [rx, rx / 4, rx / 1_000, rx / 4_000, 0, 0, 0, 0])],
                links: [(0, 1_000, .physical, [])])
            batches.append(
                OracleCase.Batch(
                    agent: "billed-0", stream: 0xB111, sequence: UInt64(index + 1), order: UInt64(index + 1),
                    interval: 60_000, heartbeat: 0, received: time + 500, sections: [section]))
        }
        return OracleCase(
            agents: [("billed-0", [])], batches: batches, now: start + 6 * 3_600_000 + 90_000,
            windows: [(start, start + 6 * 3_600_000, 300_000)], bills: [start],
            config: """
                [labels.billed-0]
                site = "lab"
                [billing]
                interpolated = "\(strict ? "exclude" : "count")"
                flagged = "\(strict ? "exclude" : "count")"
                rank = "\(strict ? "nearest-rank" : "round")"
                [billing.sum]
                match = "billed-0"
                method = "sum"
                """)
    }
}
