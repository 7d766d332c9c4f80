import PulseAnalytics
import PulseCore

@testable import OracleSupport

extension CaseGenerator {
    /// Two hours at 1 s of two agents with everything that can go wrong.
    static func anomalies(seed: UInt64) -> OracleCase {
        var generator = CaseGenerator(seed: seed)
        let start: Int64 = 1_781_078_400_000  // 2026-06-10T08:00:00Z
        var agents = [
            Agent(
                name: "web-01", labels: [("role", "web"), ("site", "fra1")], boot: BootID(high: 1, low: 1),
                interfaces: [
                    Interface(name: "eth0", kind: .physical, speed: 1_000, ifindex: 2, rate: 2_000_000),
                    Interface(name: "wan0", kind: .physical, width: .bits32, speed: 100, ifindex: 7, rate: 8_000_000),
                    Interface(name: "veth9", kind: .veth, speed: 0, ifindex: 9, rate: 1_000_000),
                    Interface(name: "bond0", kind: .bond, speed: 2_000, ifindex: 3, rate: 3_000_000),
                    Interface(
                        name: "eth1", kind: .physical, relation: .bondSlave, speed: 1_000, ifindex: 4, rate: 1_500_000),
                    Interface(name: "a<b&c", kind: .virtual, speed: 0, ifindex: 11, rate: 700),
                ], stream: 0xAAAA),
            Agent(
                name: "db-01", labels: [("site", "fra1")], boot: BootID(high: 2, low: 2),
                interfaces: [
                    Interface(name: "eth0", kind: .physical, speed: 1_000, ifindex: 2, rate: 500_000),
                    Interface(name: "lo", kind: .loopback, speed: 0, ifindex: 1, rate: 0),
                ], stream: 0xBBBB),
        ]
        let ticks = 7_200
        var made = generator.simulate(
            &agents, start: start, ticks: ticks, interval: 1_000, heartbeat: 60_000, batchTicks: 10
        ) {
            agent, second in
            var now = Happening()
            if agent == "web-01" {
                if second == 1_500 { now.interfaces["eth0"] = ["reset"] }
                if second == 3_000 { now.interfaces["wan0"] = ["recreate"] }
                if second == 5_000 { now.interfaces["eth0"] = ["jump"] }
                if second >= 2_400 { now.clockOffset = -1_200_000 }
            } else {
                if (500..<520).contains(second) || (2_000..<2_010).contains(second) { now.interfaces["lo"] = ["burst"] }
                if (1_000..<1_100).contains(second) { now.clockOffset = 7_200_000 }
                if (3_700..<4_000).contains(second) { now.down = true }
                if second == 4_000 { now.reboot = true }
            }
            return now
        }
        let end = start + Int64(ticks) * 1_000
        // How batches travel: web-01's spool holds 10 minutes back until the end; db-01's batches of 5 minutes
        // overtake each other; one batch is lost for good.
        var held = [OracleCase.Batch]()
        var arrivals = [OracleCase.Batch]()
        var shuffled = [OracleCase.Batch]()
        for (batch, closedAt, tick) in made.sorted(by: { $0.closedAt < $1.closedAt }) {
            _ = closedAt
            if batch.agent == "web-01", (1_800..<2_400).contains(tick) {
                held.append(batch)
            } else if batch.agent == "web-01", (3_300..<3_310).contains(tick) {
                continue
            } else if batch.agent == "db-01", (600..<900).contains(tick) {
                shuffled.append(batch)
                if tick >= 890 {
                    arrivals += shuffled.shuffled(using: &generator.random)
                    shuffled.removeAll()
                }
            } else {
                arrivals.append(batch)
            }
        }
        arrivals += shuffled
        for index in held.indices { held[index].received = end + 60_000 }
        arrivals += held
        made.removeAll()
        var oracleCase = OracleCase(
            agents: agents.map { ($0.name, $0.labels) }, batches: arrivals, now: end + 3_600_000,
            windows: [
                (start, end, 60_000), (start - 3_600_000, end + 3_600_000, 300_000),
                (start - 8 * 3_600_000, start + 16 * 3_600_000, 3_600_000), (start, start + 1_800_000, 60_000),
            ],
            bills: [start],
            // web-01 and db-01 set their site and role; db-01 is billed from the 10th, inbound; web-01's wan0 by
            // the sum of both directions, at the textbook rank.
            config: """
                [labels]
                from_agents = ["role", "site"]
                [billing.db]
                match = "db-01"
                day = 10
                method = "in"
                [billing.wan]
                match = "web-01/wan0"
                method = "sum"
                rank = "nearest-rank"
                """)
        // Every top-N: each kind by each ranking, over the whole run and over its first half hour (its minute buckets);
        // `counted` is `netpulse top` without options (the fleet's counted interfaces: no veth9, eth1, a<b&c or lo).
        for (from, to) in [(start - 3_600_000, end + 3_600_000), (start, start + 1_800_000)] {
            for kind in ["interface", "counted", "host", "group"] {
                for ranking in ["bytes", "peak", "p95", "errors"] {
                    oracleCase.top.append((from, to, kind, ranking, 4))
                }
            }
        }
        return oracleCase
    }

    /// Three months at 5-minute samples in Europe/Berlin (February to April 2026): months of 28, 31 and 30 days,
    /// the change to summer time, billing days that do not exist in every month, a late start, an outage, a spool
    /// replayed days late, and a week of data that arrives after everything else.
    static func billing(seed: UInt64) -> OracleCase {
        var generator = CaseGenerator(seed: seed)
        let start: Int64 = 1_769_900_400_000  // 2026-02-01T00:00:00+01:00
        var agents = [
            Agent(
                name: "edge-1", labels: [("customer", "acme"), ("site", "ams")], boot: BootID(high: 3, low: 3),
                interfaces: [Interface(name: "eth0", kind: .physical, speed: 10_000, ifindex: 2, rate: 40_000_000)],
                stream: 0xCCCC),
            Agent(
                name: "edge-2", labels: [("site", "ams")], boot: BootID(high: 4, low: 4),
                interfaces: [Interface(name: "eth0", kind: .physical, speed: 10_000, ifindex: 2, rate: 25_000_000)],
                stream: 0xDDDD),
        ]
        let ticks = 25_620  // to 2026-05-01T00:00:00+02:00
        let made = generator.simulate(
            &agents, start: start, ticks: ticks, interval: 300_000, heartbeat: 0, batchTicks: 48
        ) {
            agent, tick in
            var now = Happening()
            // edge-1 starts on the third day: its first bill has missing intervals.
            if agent == "edge-1", tick < 2 * 288 { now.down = true }
            // edge-2 is down for two days in March.
            if agent == "edge-2", (37 * 288..<39 * 288).contains(tick) { now.down = true }
            return now
        }
        // edge-1's batches of a week in March arrive after everything else.
        let lateWeek = 45 * 288..<52 * 288
        // edge-2 cannot reach the daemon from April 1 to 3 and replays its spool in order when it can: its intervals
        // were taken in empty by then, and the open April bill swaps the replayed ones in.
        let spooled = 59 * 288..<62 * 288
        let replayedAt = start + Int64(spooled.upperBound) * 300_000 + 60_000
        var arrivals = made.filter { !($0.batch.agent == "edge-1" && lateWeek.contains($0.tick)) }.map {
            var batch = $0.batch
            if batch.agent == "edge-2" && spooled.contains($0.tick) { batch.received = replayedAt }
            return batch
        }
        arrivals = arrivals.enumerated().sorted { ($0.element.received, $0.offset) < ($1.element.received, $1.offset) }
            .map(\.element)
        let end = start + Int64(ticks) * 300_000
        arrivals += made.filter { $0.batch.agent == "edge-1" && lateWeek.contains($0.tick) }.map {
            var batch = $0.batch
            batch.received = end + 60_000
            return batch
        }
        let bills = (0..<3).map { month in start + Int64(month) * 30 * 86_400_000 + 20 * 86_400_000 }
        // A minute past a 5-minute boundary: the bills kept in the store are then current to the same interval.
        var oracleCase = OracleCase(
            agents: agents.map { ($0.name, $0.labels) }, batches: arrivals, now: end + 43_200_000 + 60_000,
            windows: [
                // February in Berlin, hour by hour; the day of the change to summer time (23 hours) at 5 minutes;
                // the UTC days of the three months.
                (1_769_900_400_000, 1_772_319_600_000, 3_600_000), (1_774_738_800_000, 1_774_821_600_000, 300_000),
                (1_769_904_000_000, 1_777_593_600_000, 86_400_000),
            ],
            bills: bills,
            // The late week is about six weeks old when it arrives: placed because max_age is set that long (by
            // default it would be unplaced, `docs/windows.md`, "Time that cannot be placed"). Customers are billing
            // groups, from the daemon's labels only: acme from the 31st (the month's last day when shorter) by the
            // sum; edge-2 from the 15th, outbound, at the textbook rank; edge-1's NIC by its inbound rate, without
            // its interpolated intervals.
            config: """
                [daemon]
                time_zone = "Europe/Berlin"
                [ingest]
                max_age = "100d"
                [labels]
                from_agents = ["site"]
                [labels.edge-1]
                customer = "acme"
                [billing]
                group_by = ["customer"]
                [billing.acme]
                match = "customer=acme"
                day = 31
                method = "sum"
                [billing.edge-2]
                match = "edge-2"
                day = 15
                method = "out"
                rank = "nearest-rank"
                [billing.edge-1-nic]
                match = "edge-1/eth0"
                day = 31
                method = "in"
                interpolated = "exclude"
                """)
        // Minute buckets are checked by the anomalies case; here every 5-minute, hourly and daily one.
        oracleCase.bucketLevels = [300_000, 3_600_000, 86_400_000]
        oracleCase.lateDataAt = start + Int64(lateWeek.lowerBound) * 300_000 + 86_400_000
        // Every window a snapshot or the CLI can name, in Berlin, at the end of April.
        oracleCase.namedWindows = [
            "last-1h", "last-24h", "last-7d", "today", "yesterday", "this-week", "last-week", "this-month",
            "last-month", "this-year", "billing-period", "last-billing-period",
        ]
        // The top hosts and interfaces of February in Berlin, by each ranking: p95 from 5-minute rates, which the
        // window's hourly resolution would not give.
        for kind in ["interface", "host", "group"] {
            for ranking in ["bytes", "peak", "p95", "errors"] {
                oracleCase.top.append((1_769_900_400_000, 1_772_319_600_000, kind, ranking, 3))
            }
        }
        return oracleCase
    }
}

extension CaseGenerator {
    /// Eighteen days at one-minute samples of four agents whose times cannot all be placed (`docs/windows.md`, "Time
    /// that cannot be placed"):
    /// - `rtc-0` reboots without a real-time clock on day 14: half an hour sampled in 1970 and spooled (the daemon's
    ///   certificate is not valid yet then), NTP sets the clock in the middle of a batch, and the spool is sent
    ///   behind the first live batches;
    /// - `ahead-0`'s clock is three years ahead for twenty minutes on day 4 (further than `max_skew`);
    /// - `old-0`'s first day is spooled and delivered only at the end, older than `max_age`;
    /// - `gone-0` is off for fifteen days (a step longer than `max_age`).
    static func clocks(seed: UInt64) -> OracleCase {
        var generator = CaseGenerator(seed: seed)
        let start: Int64 = 1_790_812_800_000  // 2026-10-01T00:00:00Z
        let interval: Int64 = 60_000
        func agent(_ name: String, _ index: UInt64) -> Agent {
            Agent(
                name: name, labels: [("site", "lab")], boot: BootID(high: index, low: 0xC10C),
                interfaces: [
                    Interface(name: "eth0", kind: .physical, speed: 1_000, ifindex: 2, rate: 1_000_000 * index)
                ], stream: 0xC10C_0000 + index)
        }
        var agents = [agent("rtc-0", 1), agent("ahead-0", 2), agent("old-0", 3), agent("gone-0", 4)]
        let ticks = 18 * 1_440
        let reboot = 14 * 1_440
        let ntp = reboot + 25
        let made = generator.simulate(
            &agents, start: start, ticks: ticks, interval: interval, heartbeat: 0, batchTicks: 10
        ) { agent, tick in
            var now = Happening()
            switch agent {
            case "rtc-0":
                now.reboot = tick == reboot
                // From the reboot until NTP the clock counts from 1970-01-01T00:00:10Z.
                if (reboot..<ntp).contains(tick) { now.clockOffset = -(start + Int64(reboot) * interval - 10_000) }
            case "ahead-0":
                if (4 * 1_440..<4 * 1_440 + 20).contains(tick) { now.clockOffset = 3 * 365 * 86_400_000 }
            case "gone-0":
                now.down = (1_000..<1_000 + 15 * 1_440).contains(tick)
            default:
                break
            }
            return now
        }
        let end = start + Int64(ticks) * interval
        let spoolSent = start + Int64(ntp + 11) * interval
        let arrivals = made.map { item -> OracleCase.Batch in
            var batch = item.batch
            // rtc-0's batches closed while its clock read 1970 wait in its spool until after NTP; old-0's first day
            // arrives at the end.
            if batch.agent == "rtc-0", (reboot + 1..<ntp).contains(item.tick) {
                batch.received = spoolSent
            }
            if batch.agent == "old-0", item.tick < 1_440 { batch.received = end + 60_000 }
            return batch
        }.enumerated().sorted { ($0.element.received, $0.offset) < ($1.element.received, $1.offset) }.map(\.element)
        var oracleCase = OracleCase(
            agents: agents.map { ($0.name, $0.labels) }, batches: arrivals, now: end + 3_600_000,
            windows: [
                (start, start + 86_400_000, 300_000), (end - 86_400_000, end, 300_000), (start, end, 3_600_000),
                (start, end, 86_400_000),
            ],
            bills: [start + 10 * 86_400_000], config: "[labels]\nfrom_agents = [\"site\"]\n")
        oracleCase.bucketLevels = [300_000, 3_600_000, 86_400_000]
        return oracleCase
    }
}
