import PulseAnalytics
import PulseCore

@testable import OracleSupport

extension CaseGenerator {
    /// The worked examples of docs/windows.md on wraps, resets and ambiguity (8, 9 and 10), as one agent's 32-bit
    /// interfaces, each example between two of its samples with steady traffic before and after:
    ///
    /// - `unknown0`, speed unknown: rx bytes 3,000,000,000 → 5,000 in one second (example 8);
    /// - `wan0`, 1000 Mbit/s: rx bytes 4,200,000,000 → 50,000 and rx packets 3,000,000 → 40 in one second
    ///   (example 9);
    /// - `wan1`, 1000 Mbit/s: rx bytes 1,000,000,000, then 2,705,032,704 sixty seconds later, 6 GB sent in between
    ///   (example 10).
    static func countingRules() -> OracleCase {
        let start: Int64 = 1_781_078_400_000  // 2026-06-10T08:00:00Z
        let boot = BootID(high: 32, low: 32)
        /// (interface, ifindex, speed, samples: (second, rx bytes, rx packets))
        let interfaces: [(String, UInt32, UInt32, [(Int64, UInt64, UInt64)])] = [
            (
                "unknown0", 2, 0,
                [
                    (0, 2_999_000_000, 2_000_000), (1, 3_000_000_000, 2_001_000), (2, 5_000, 2_001_100),
                    (3, 1_005_000, 2_002_100),
                ]
            ),
            (
                "wan0", 3, 1_000,
                [
                    (0, 4_199_000_000, 2_999_000), (1, 4_200_000_000, 3_000_000), (2, 50_000, 40),
                    (3, 1_050_000, 1_040),
                ]
            ),
            (
                "wan1", 4, 1_000,
                [
                    (0, 999_000_000, 1_000_000), (1, 1_000_000_000, 1_001_000),
                    (61, 2_705_032_704, 5_001_000), (62, 2_706_032_704, 5_002_000),
                ]
            ),
        ]
        var batches = [OracleCase.Batch]()
        for (index, second) in [0, 1, 2, 3, 61, 62].enumerated() {
            let time = start + Int64(second) * 1_000
            let sections = interfaces.compactMap { name, ifindex, speed, samples -> OracleCase.Section? in
                guard let sample = samples.first(where: { $0.0 == Int64(second) }) else { return nil }
                return OracleCase.Section(
                    name: name, boot: boot, ifindex: ifindex, width: .bits32,
                    samples: [(0, time, [sample.1, sample.1 / 3, sample.2, sample.2 / 3, 0, 0, 0, 0])],
                    links: [(0, speed, .physical, [])])
            }
            batches.append(
                OracleCase.Batch(
                    agent: "edge-32", stream: 0x3232, sequence: UInt64(index + 1), order: UInt64(index + 1),
                    interval: 1_000, heartbeat: 0, received: time + 200, sections: sections))
        }
        return OracleCase(
            agents: [("edge-32", [("site", "lab")])], batches: batches, now: start + 3_600_000,
            windows: [(start, start + 300_000, 60_000)], timeZone: "UTC", bills: [])
    }
}
