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

extension CaseGenerator {
    /// docs/windows.md, worked example 21: a host whose second NIC joins a new bond.
    ///
    /// `db-3` sends a sample of each interface every five minutes, in batches of an hour, from Monday 1 June 2026
    /// 00:00 UTC. `eth0` and `eth1` are physical links of 1 Gbit/s all week. From the batch of Monday 8 June 00:00,
    /// `eth1` is a slave of the new `bond0` (2 Gbit/s), which counts eth1's bytes from then on. The host's figures of
    /// the first week must still rest on two links of 1 Gbit/s, and today's on eth0 and bond0.
    static func joinedABond() -> OracleCase {
        let start: Int64 = 1_780_272_000_000  // 2026-06-01T00:00:00Z
        let bonded = start + 7 * 86_400_000
        var eth0: UInt64 = 1_000_000
        var eth1: UInt64 = 2_000_000
        var base: UInt64?  // eth1's counter at bond0's first sample, where bond0 counts from 0
        var batches = [OracleCase.Batch]()
        for hour in 0..<(7 * 24 + 12) {
            let from = start + Int64(hour) * 3_600_000
            let joined = from >= bonded
            var readings = ["eth0": [UInt64](), "eth1": [UInt64](), "bond0": [UInt64]()]
            for _ in 0..<12 {
                // 30 MB received on eth0 and 20 MB on eth1 per five minutes (a tenth of it at night).
                let night = (hour % 24) < 6
                eth0 += 30_000_000 / (night ? 10 : 1)
                eth1 += 20_000_000 / (night ? 10 : 1)
                readings["eth0"]!.append(eth0)
                readings["eth1"]!.append(eth1)
                if joined {
                    if base == nil { base = eth1 }
                    readings["bond0"]!.append(eth1 - base!)
                }
            }
            let interfaces: [(String, UInt32, UInt32, InterfaceKind, InterfaceRelation)] =
                [("eth0", 2, 1_000, .physical, []), ("eth1", 3, 1_000, .physical, joined ? .bondSlave : [])]
                + (joined ? [("bond0", 9, 2_000, .bond, [])] : [])
            let sections = interfaces.map { name, ifindex, speed, kind, relation in
                OracleCase.Section(
                    name: name, boot: BootID(high: 3, low: 3), ifindex: ifindex, width: .bits64,
                    samples: readings[name]!.enumerated().map { tick, rx in
                        (tick, from + Int64(tick) * 300_000, [rx, rx / 3, rx / 1_200, rx / 3_600, 0, 0, 0, 0])
                    },
                    links: [(0, speed, kind, relation)])
            }
            batches.append(
                OracleCase.Batch(
                    agent: "db-3", stream: 0x33, sequence: UInt64(batches.count + 1), order: UInt64(from),
                    interval: 300_000, heartbeat: 0, received: from + 3_600_000 - 300_000 + 1_500, sections: sections))
        }
        var oracleCase = OracleCase(
            agents: [("db-3", [("site", "ams1")])], batches: batches, now: bonded + 12 * 3_600_000 + 600_000,
            windows: [(start, bonded, 3_600_000), (bonded, bonded + 86_400_000, 300_000)],
            bills: [start],
            config: """
                [labels]
                from_agents = ["site"]
                """)
        oracleCase.bucketLevels = [300_000, 3_600_000]
        return oracleCase
    }
}
