import PulseAnalytics
import PulseCore

@testable import OracleSupport

extension CaseGenerator {
    /// docs/windows.md, worked example 20: a host moved between groups while one of its interfaces was away.
    ///
    /// `edge-7` sends a sample of `eth1` every minute from 10:00 to 14:10 in batches of ten; its `eth0` (a USB
    /// modem, say) is read from 10:00 to 10:10, then not until 14:00, in the same epoch. The agent says `site=acme`
    /// until its batch received at 12:00:02, and `site=globex` from then on: eth0's step from 10:10 to 14:00 spans
    /// the move, so acme gets the part of it before 12:00:02 and globex the rest.
    static func movedDuringAGap() -> OracleCase {
        let start: Int64 = 1_781_085_600_000  // 2026-06-10T10:00:00Z
        var counters = ["eth0": UInt64(5_000_000), "eth1": UInt64(9_000_000)]
        var batches = [OracleCase.Batch]()
        for first in stride(from: 0, through: 250, by: 10) {
            let minutes = Array(first..<(first + 10))
            let time = { (minute: Int) in start + Int64(minute) * 60_000 }
            var sections = [OracleCase.Section]()
            for (name, ifindex) in [("eth0", UInt32(2)), ("eth1", UInt32(3))] {
                let taken = name == "eth1" ? minutes : minutes.filter { $0 <= 10 || $0 >= 240 }
                guard !taken.isEmpty else { continue }
                var samples = [(tick: Int, time: Int64, counters: [UInt64])]()
                for minute in taken {
                    // Four hours of eth0's traffic while it was away are in its first sample after.
                    let bytes: UInt64 = name == "eth0" && minute == 240 ? 2_400_000_000 : 6_000_000
                    counters[name]! += bytes
                    let rx = counters[name]!
                    samples.append((minute - first, time(minute), [rx, rx / 2, rx / 1_000, rx / 2_000, 0, 0, 0, 0]))
                }
                sections.append(
                    OracleCase.Section(
                        name: name, boot: BootID(high: 7, low: 7), ifindex: ifindex, width: .bits64, samples: samples,
                        links: [(samples[0].tick, 1_000, .physical, [])]))
            }
            let received = time(first + 9) + 2_000
            batches.append(
                OracleCase.Batch(
                    agent: "edge-7", stream: 0x77, sequence: UInt64(batches.count + 1), order: UInt64(time(first + 9)),
                    interval: 60_000, heartbeat: 0, received: received, sections: sections,
                    labels: [("site", received >= start + 2 * 3_600_000 ? "globex" : "acme")]))
        }
        var oracleCase = OracleCase(
            agents: [("edge-7", [("site", "acme")])], batches: batches, now: start + 6 * 3_600_000,
            windows: [(start, start + 5 * 3_600_000, 60_000), (start - 36_000_000, start + 50_400_000, 3_600_000)],
            bills: [start],
            config: """
                [labels]
                from_agents = ["site"]
                """)
        oracleCase.bucketLevels = [60_000, 300_000, 3_600_000]
        return oracleCase
    }
}
