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
            windows: [(start, start + 300_000, 60_000)], bills: [])
    }
}

extension CaseGenerator {
    /// docs/windows.md, worked examples 14, 15 and 16, as 50 seconds of one host sampled every second:
    ///
    /// - `eth0` physical, `br0` a bridge with the veth `veth1` as its port, and `old0` whose samples carry no kind
    ///   (a spool converted from protocol 1): only `eth0` counts toward the host (example 14);
    /// - a batch of `eth0` from a clock a minute ahead, moved back to end when it was received, 5 ms after the
    ///   previous sample, carrying 1,000,000 bytes: measured, no peak (example 15);
    /// - `now` at 10:00:55, the minute bucket's data covering 50 s (example 16).
    static func kindsPeaksAndTheCurrentBucket() -> OracleCase {
        let start: Int64 = 1_781_085_600_000  // 2026-06-10T10:00:00Z
        let interfaces: [(String, UInt32, InterfaceKind, InterfaceRelation)] = [
            ("eth0", 2, .physical, []), ("br0", 3, .bridge, []), ("veth1", 4, .veth, [.bridgePort]),
            ("old0", 5, .unknown, []),
        ]
        var counters = [String: UInt64]()
        var batches = [OracleCase.Batch]()
        func batch(_ seconds: [Int64], names: [String], shift: Int64 = 0, received: Int64, extra: UInt64 = 0) {
            let sections = interfaces.filter { names.contains($0.0) }.map { name, ifindex, kind, relation in
                var samples = [(tick: Int, time: Int64, counters: [UInt64])]()
                for (tick, second) in seconds.enumerated() {
                    let rx = counters[name, default: 1_000_000] + (extra > 0 ? extra : 100_000 + UInt64(second) * 17)
                    counters[name] = rx
                    samples.append((tick, start + second * 1_000 + shift, [rx, rx / 3, rx / 800, rx / 900, 0, 0, 0, 0]))
                }
                return OracleCase.Section(
                    name: name, boot: BootID(high: 14, low: 14), ifindex: ifindex, width: .bits64, samples: samples,
                    links: [(0, kind == .physical ? 1_000 : 0, kind, relation)])
            }
            batches.append(
                OracleCase.Batch(
                    agent: "kinds-0", stream: 0x1415, sequence: UInt64(batches.count + 1),
                    order: UInt64(batches.count + 1), interval: 1_000, heartbeat: 0, received: received,
                    sections: sections))
        }
        let all = interfaces.map(\.0)
        for first in stride(from: Int64(0), to: 40, by: 10) {
            let seconds = Array((first == 0 ? 0 : first + 1)...(first + 10))
            batch(seconds, names: all, received: start + seconds.last! * 1_000)
        }
        // 40.005 s on a clock 60 s ahead (its tick reads 100.005 s), received at 40.005 s: moved back 60 s.
        batch([40], names: ["eth0"], shift: 60_005, received: start + 40_005, extra: 1_000_000)
        batch(Array(41...50), names: all, received: start + 50_000)
        return OracleCase(
            agents: [("kinds-0", [("site", "lab")])], batches: batches, now: start + 55_000,
            windows: [(start, start + 60_000, 60_000)], bills: [])
    }
}

extension CaseGenerator {
    /// docs/windows.md, worked examples 18 and 19: counts of a new epoch begin with it.
    ///
    /// - `web-01` is shut down after its sample of 1 March 10:00:00 (`eth0` at 9,000,000,000 bytes) and boots on
    ///   16 March at 09:59:20; its agent's first sample, at 10:00:00, reads 4,000,000 and says the epoch began at
    ///   09:59:20 (example 18);
    /// - `lab-02`'s `veth7` was last read on 10 January at 12:00:00; it is created again on 5 March, and the
    ///   agent's read at 08:00:01 finds it with a new ifindex and 5,000,000,000 bytes, its epoch begun after the read
    ///   at 08:00:00 (example 19).
    static func epochStarts() -> OracleCase {
        let march1: Int64 = 1_772_359_200_000  // 2026-03-01T10:00:00Z
        let march16: Int64 = 1_773_655_200_000  // 2026-03-16T10:00:00Z
        let january10: Int64 = 1_768_046_400_000  // 2026-01-10T12:00:00Z
        let march5: Int64 = 1_772_697_600_000  // 2026-03-05T08:00:00Z
        var batches = [OracleCase.Batch]()
        func batch(
            _ agent: String, _ name: String, boot: BootID, ifindex: UInt32, kind: InterfaceKind,
            seconds: ClosedRange<Int64>,
            at start: Int64, from rx: UInt64, perSecond: UInt64, began: Int64?
        ) {
            let samples = seconds.enumerated().map { tick, second in
                let bytes = rx + UInt64(second - seconds.lowerBound) * perSecond
                return (tick, start + second * 1_000, [bytes, bytes / 4, bytes / 1_000, bytes / 1_200, 0, 0, 0, 0])
            }
            let sequence = UInt64(batches.filter { $0.agent == agent }.count + 1)
            batches.append(
                OracleCase.Batch(
                    agent: agent, stream: agent == "web-01" ? 0x1818 : 0x1919, sequence: sequence,
                    order: UInt64(samples.last!.1), interval: 1_000, heartbeat: 0, received: samples.last!.1 + 300,
                    sections: [
                        OracleCase.Section(
                            name: name, boot: boot, ifindex: ifindex, width: .bits64, samples: samples,
                            links: [(0, 1_000, kind, [])], began: began)
                    ]))
        }
        batch(
            "lab-02", "veth7", boot: BootID(high: 19, low: 1), ifindex: 9, kind: .veth, seconds: -10...0, at: january10,
            from: 1_000_000, perSecond: 1_000, began: nil)
        batch(
            "web-01", "eth0", boot: BootID(high: 18, low: 1), ifindex: 2, kind: .physical, seconds: -10...0,
            at: march1, from: 8_999_000_000, perSecond: 100_000, began: march1 - 86_400_000)
        batch(
            "lab-02", "veth7", boot: BootID(high: 19, low: 1), ifindex: 12, kind: .veth, seconds: 1...10, at: march5,
            from: 5_000_000_000, perSecond: 1_000, began: march5)
        batch(
            "web-01", "eth0", boot: BootID(high: 18, low: 2), ifindex: 2, kind: .physical, seconds: 0...10,
            at: march16, from: 4_000_000, perSecond: 100_000, began: march16 - 40_000)
        var oracleCase = OracleCase(
            agents: [("web-01", [("site", "fra")]), ("lab-02", [("site", "lab")])], batches: batches,
            now: march16 + 3_600_000, windows: [(march1 - 36_000_000, march16 + 50_400_000, 300_000)],
            bills: [january10 + 86_400_000 * 5, march1 - 86_400_000 * 10, march1 + 86_400_000 * 5])
        oracleCase.bucketLevels = [300_000]
        return oracleCase
    }
}

extension CaseGenerator {
    /// docs/windows.md, worked example 17: a SmartNIC in switchdev mode on `nic-1`. Its uplink representor `p0`
    /// carries 1 GB of its own and the 2 GB that its VF representor `pf0vf1` carried too (a VM's traffic crosses both),
    /// read every minute for an hour. The links' kinds are what the agent's classifier gives (`kinds`), so the case
    /// rests on the agent's reading of sysfs, not on a kind the test chose.
    static func switchdev(kinds: [String: (InterfaceKind, InterfaceRelation)]) -> OracleCase {
        let start: Int64 = 1_781_085_600_000  // 2026-06-10T10:00:00Z
        var batches = [OracleCase.Batch]()
        for batch in 0..<6 {
            var sections = [OracleCase.Section]()
            for (name, ifindex) in [("p0", UInt32(4)), ("pf0vf1", UInt32(9))] {
                // Per minute: 2 GB / 60 through the VF, and so through p0 too, and 1 GB / 60 of p0's own.
                let samples = (0..<10).map { tick -> (tick: Int, time: Int64, counters: [UInt64]) in
                    let minute = UInt64(batch * 10 + tick)
                    let rx = name == "p0" ? 10_000 + minute * 50_000_000 : 20_000 + minute * 33_333_333
                    return (tick, start + Int64(minute) * 60_000, [rx, rx / 4, rx / 1_000, rx / 4_000, 0, 0, 0, 0])
                }
                let (kind, relation) = kinds[name]!
                sections.append(
                    OracleCase.Section(
                        name: name, boot: BootID(high: 5, low: 5), ifindex: ifindex, width: .bits64, samples: samples,
                        links: [(0, 25_000, kind, relation)]))
            }
            let last = start + Int64(batch * 10 + 9) * 60_000
            batches.append(
                OracleCase.Batch(
                    agent: "nic-1", stream: 0x55, sequence: UInt64(batch + 1), order: UInt64(last), interval: 60_000,
                    heartbeat: 0, received: last + 1_000, sections: sections))
        }
        return OracleCase(
            agents: [("nic-1", [])], batches: batches, now: start + 2 * 3_600_000,
            windows: [(start, start + 3_600_000, 60_000)], bills: [start])
    }
}
