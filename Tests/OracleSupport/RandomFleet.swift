import PulseAnalytics
import PulseCore

extension CaseGenerator {
    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    mutating func between(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next() % UInt64(range.count))
    }
    mutating func pick<Value>(_ options: [Value]) -> Value { options[Int(random.next() % UInt64(options.count))] }

    /// A small random fleet with its own configuration: one to three agents of one to four interfaces (NICs of 32
    /// and 64 bits, bonds and their slaves, bridges and their ports, veths, loopback, interfaces of unknown kind),
    /// sampled every 10 s or minute for 80 to 480 ticks, with reboots (some after the host was off, most with the
    /// epoch start the agent gives), driver resets, re-created interfaces,
    /// implausible jumps, bursts, idle suppression, short and long outages, clocks stepping back or ahead (a few far
    /// ahead, a few in 1970), and batches that arrive late, out of order or never. The configuration draws a time
    /// zone (UTC, Berlin, Kolkata's 30-minute offset, Sydney south of the equator, St John's), `outage_after`,
    /// `max_rate`, counting rules and exclusions, labels from the daemon or the agents, and billing terms with
    /// overrides, and agents relabelled for good or for a while. What it leaves out, because `docs/windows.md` says
    /// figures then follow the arrival order: late batches of an agent whose clock misbehaves or that suppresses idle
    /// ticks (they could land inside a measured step).
    static func randomFleet(seed: UInt64) -> OracleCase {
        var generator = CaseGenerator(seed: seed)
        let interval: Int64 = generator.pick([10_000, 60_000])
        let ticks = generator.between(80...480)
        // A start near a month's end now and then, so billing periods change within the data.
        let day = generator.between(0...364)
        let start =
            1_767_225_600_000 + Int64(day) * 86_400_000 + Int64(generator.between(0...1_439)) * 60_000
            - (generator.chance(30) ? Int64(ticks) * interval / 2 : 0)
        let heartbeat: Int64 = generator.chance(30) ? 6 * interval : 0
        let batchTicks = generator.pick([1, 5, 10, 30])
        var agents = [Agent]()
        var misbehaving = Set<String>()
        var sites = [String: String]()
        for index in 0..<generator.between(1...3) {
            let name = "r\(index)"
            var interfaces = [Interface]()
            var ifindex: UInt32 = 2
            func add(_ interface: Interface) {
                interfaces.append(interface)
                ifindex += 1
            }
            for slot in 0..<generator.between(1...4) {
                let rate: UInt64 = generator.pick([0, 1_000, 100_000, 10_000_000])
                switch generator.between(0...6) {
                case 0:
                    add(
                        Interface(
                            name: "wan\(slot)", kind: .physical, width: .bits32,
                            speed: generator.pick([0, 100, 1_000]), ifindex: ifindex, rate: rate))
                case 1:
                    add(Interface(name: "bond\(slot)", kind: .bond, speed: 2_000, ifindex: ifindex, rate: rate))
                    add(
                        Interface(
                            name: "eth\(slot)s", kind: .physical, relation: .bondSlave, speed: 1_000,
                            ifindex: ifindex, rate: rate / 2))
                case 2:
                    add(Interface(name: "br\(slot)", kind: .bridge, speed: 0, ifindex: ifindex, rate: rate))
                    add(
                        Interface(
                            name: "veth\(slot)", kind: .veth, relation: .bridgePort, speed: 10_000, ifindex: ifindex,
                            rate: rate))
                case 3: add(Interface(name: "old\(slot)", kind: .unknown, speed: 0, ifindex: ifindex, rate: rate))
                case 4: add(Interface(name: "lo", kind: .loopback, speed: 0, ifindex: 1, rate: 0))
                default:
                    add(
                        Interface(
                            name: "eth\(slot)", kind: .physical, speed: generator.pick([0, 1_000, 10_000]),
                            ifindex: ifindex, rate: rate))
                }
            }
            // One loopback at most: two would be one logical interface.
            var seen = Set<String>()
            interfaces = interfaces.filter { seen.insert($0.name).inserted }
            var agent = Agent(
                name: name, labels: [("site", generator.pick(["fra", "ams"])), ("role", "r\(index % 2)")],
                boot: BootID(high: seed, low: UInt64(index)), interfaces: interfaces,
                stream: seed &+ UInt64(index))
            // A quarter are older agents that do not say when their epochs began.
            agent.knowsStarts = !generator.chance(25)
            agent.bootTimes["\(agent.boot)"] = start - Int64(generator.between(1...30)) * 86_400_000
            agents.append(agent)
            sites[name] = generator.pick(["fra", "ams", "lab"])
        }
        // What happens, drawn per agent up front.
        var plans = [String: [(tick: Int, what: String, length: Int, target: String)]]()
        for agent in agents {
            var plan = [(tick: Int, what: String, length: Int, target: String)]()
            for _ in 0..<generator.between(0...4) {
                let what = generator.pick(
                    ["reboot", "reset", "recreate", "jump", "burst", "down", "off", "back", "ahead"])
                let target = generator.pick(agent.interfaces).name
                let length =
                    what == "down" || what == "off"
                    ? generator.pick([2, 10, 40, 200]) : generator.between(2...(max(3, ticks / 5)))
                plan.append((generator.between(1...(ticks - 1)), what, length, target))
                if what == "back" || what == "ahead" { misbehaving.insert(agent.name) }
            }
            if generator.chance(5) {
                // A clock in 1970 for a while, spooled.
                plan.append((generator.between(1...(ticks - 1)), "1970", generator.between(2...20), ""))
                misbehaving.insert(agent.name)
            }
            plans[agent.name] = plan
        }
        let aheadBy: Int64 = generator.pick([60_000, 2 * 3_600_000, 3 * 86_400_000])
        let backBy: Int64 = generator.pick([30_000, 3_600_000])
        let made = generator.simulate(
            &agents, start: start, ticks: ticks, interval: interval, heartbeat: heartbeat, batchTicks: batchTicks
        ) { agent, tick in
            var now = Happening()
            for event in plans[agent] ?? [] {
                let inside = (event.tick..<event.tick + event.length).contains(tick)
                switch event.what {
                case "reboot": now.reboot = now.reboot || tick == event.tick
                case "down": now.down = now.down || inside
                case "off":
                    // The host is off, then boots: its agent comes back in a new epoch.
                    now.down = now.down || inside
                    now.reboot = now.reboot || tick == event.tick + event.length
                case "back": if inside { now.clockOffset = -backBy }
                case "ahead": if inside { now.clockOffset = aheadBy }
                case "1970": if inside { now.clockOffset = -(start + Int64(tick) * interval - 10_000) }
                default: if tick == event.tick { now.interfaces[event.target, default: []].insert(event.what) }
                }
            }
            return now
        }
        // How batches travel: mostly in order; an agent that keeps its clock and sends every tick may hold a run of
        // batches back and send them later, or have a few overtake each other; one batch in fifty is lost.
        var arrivals = [OracleCase.Batch]()
        var held = [OracleCase.Batch]()
        let end = start + Int64(ticks) * interval
        for (batch, _, tick) in made.sorted(by: { $0.closedAt < $1.closedAt }) {
            if generator.chance(2) { continue }
            let steady = !misbehaving.contains(batch.agent) && heartbeat == 0
            if steady && generator.chance(8) {
                var late = batch
                late.received = end + Int64(generator.between(1...120)) * 60_000
                held.append(late)
            } else if steady && tick > 0 && generator.chance(5), let previous = arrivals.last,
                !misbehaving.contains(previous.agent)
            {
                // The batch before it is overtaken by it.
                arrivals.removeLast()
                var overtaken = batch
                overtaken.received = max(batch.received, previous.received)
                arrivals += [overtaken, previous]
            } else {
                arrivals.append(batch)
            }
        }
        arrivals += held.sorted { $0.received < $1.received }
        // Receive times follow the arrival order.
        var latest = Int64.min
        for index in arrivals.indices {
            latest = max(latest, arrivals[index].received)
            arrivals[index].received = latest
        }
        // A relabelled agent now and then: from some batch on (in arrival order) it sends other labels, perhaps
        // only for a while; the daemon moves it between groups when such a batch arrives (when its `from_agents`
        // takes the keys).
        // The move comes after the agent's first batch was received: a move at that very time would change the groups
        // it had "before its first recorded groups" for steps already formed (see docs/windows.md, "Scopes").
        if generator.chance(35), let agent = agents.randomElement(using: &generator.random),
            let firstReceived = arrivals.first(where: { $0.agent == agent.name })?.received,
            let earliest = arrivals.firstIndex(where: { $0.received > firstReceived })
        {
            let from = generator.between(earliest...max(earliest, arrivals.count - 1))
            let until = generator.chance(30) ? generator.between(from...max(from, arrivals.count - 1)) : arrivals.count
            let labels = [("site", generator.pick(["fra", "ams", "lab"])), ("role", generator.pick(["r0", "r1", "r9"]))]
            for index in arrivals.indices where index >= from && index < until && arrivals[index].agent == agent.name {
                arrivals[index].labels = labels
            }
        }
        // 90 s past a 5-minute boundary: bills kept in the store are then current to the same interval as `now`.
        let now = (max(end, latest) / 300_000 + Int64(generator.between(0...12))) * 300_000 + 90_000
        var config = "[daemon]\ntime_zone = \"\(generator.pick(["UTC", "Europe/Berlin", "Asia/Kolkata", "Australia/Sydney", "America/St_Johns"]))\"\n"
        config += "[ingest]\noutage_after = \"\(generator.pick(["5m", "15m", "2h"]))\"\n"
        if generator.chance(20) { config += "max_rate = 1000000000\n" }
        if generator.chance(20) { config += "max_age = \"2d\"\n" }
        config += "[aggregation]\n"
        config += "count = \(generator.pick(["[\"bond\", \"physical\"]", "[\"physical\", \"veth\"]", "[\"bridge\", \"physical\", \"unknown\"]"]))\n"
        if generator.chance(20) { config += "exclude = [\"wan*\"]\n" }
        if generator.chance(30) { config += "[aggregation.lab]\nmatch = \"site=lab\"\ncount = [\"physical\", \"bond\", \"unknown\"]\n" }
        config += "[labels]\nfrom_agents = \(generator.chance(50) ? "[\"role\", \"site\"]" : "[\"role\"]")\n"
        for agent in agents where generator.chance(50) {
            config += "[labels.\(agent.name)]\nsite = \"\(sites[agent.name]!)\"\n"
        }
        config += "[billing]\nday = \(generator.between(1...31))\n"
        // Spelt as docs/configuration.md spells them.
        let methods = ["in", "out", "max", "sum"]
        let uses = ["count", "exclude"]
        let ranks = ["round", "nearest-rank"]
        config += "method = \"\(generator.pick(methods))\"\n"
        config += "interpolated = \"\(generator.pick(uses))\"\n"
        config += "flagged = \"\(generator.pick(uses))\"\n"
        config += "rank = \"\(generator.pick(ranks))\"\n"
        if generator.chance(50) {
            let agent = generator.pick(agents)
            let scope = generator.pick([
                "fleet", "site=fra", "site=lab", agent.name, "\(agent.name)/\(generator.pick(agent.interfaces).name)",
            ])
            config += "[billing.one]\nmatch = \"\(scope)\"\nday = \(generator.between(1...28))\n"
            config += "method = \"\(generator.pick(methods))\"\n"
            config += "rank = \"\(generator.pick(ranks))\"\n"
        }
        // Windows at each level, aligned to it, one of them holding `now`.
        var windows = [(Int64, Int64, Int64)]()
        for width in [60_000, 300_000, 3_600_000, 86_400_000] as [Int64] where generator.chance(70) {
            let from = (start + Int64(generator.between(0...ticks / 2)) * interval) / width * width
            windows.append((from, from + Int64(generator.between(1...48)) * width, width))
        }
        windows.append((now / 300_000 * 300_000 - 3_600_000, now / 300_000 * 300_000 + 300_000, 300_000))
        var oracleCase = OracleCase(
            agents: agents.map { ($0.name, $0.labels) }, batches: arrivals, now: now, windows: windows,
            bills: [start + Int64(generator.between(0...ticks)) * interval], config: config)
        // A few windows by name, worked out in the fleet's time zone (spelt as docs/windows.md spells them).
        let names = [
            "last-1h", "last-6h", "today", "yesterday", "this-week", "last-week", "this-month", "billing-period",
        ]
        let first = generator.pick(names)
        oracleCase.namedWindows = [first, generator.pick(names.filter { $0 != first })]
        // Top-N over two of the windows: each kind, each ranking, a few places.
        for window in [windows[windows.count - 1], generator.pick(windows)] {
            for kind in ["interface", "host", "group"] {
                oracleCase.top.append(
                    (
                        window.0, window.1, kind, generator.pick(["bytes", "peak", "p95", "errors"]),
                        generator.between(1...5)
                    ))
            }
        }
        return oracleCase
    }

    /// A smaller case that still makes `fails` true, if one can be found by leaving out agents, interfaces and
    /// batches (a minimal reproduction of a failure).
    static func shrink(_ oracleCase: OracleCase, while fails: (OracleCase) async -> Bool) async -> OracleCase {
        var current = oracleCase
        var candidates: [(OracleCase) -> OracleCase?] = []
        for agent in Set(oracleCase.batches.map(\.agent)).sorted() {
            candidates.append { whole in
                var smaller = whole
                smaller.batches.removeAll { $0.agent == agent }
                smaller.agents.removeAll { $0.name == agent }
                return smaller.batches.isEmpty ? nil : smaller
            }
        }
        for name in Set(oracleCase.batches.flatMap { $0.sections.map(\.name) }).sorted() {
            candidates.append { whole in
                var smaller = whole
                for index in smaller.batches.indices { smaller.batches[index].sections.removeAll { $0.name == name } }
                smaller.batches.removeAll { $0.sections.isEmpty }
                return smaller.batches.isEmpty ? nil : smaller
            }
        }
        for candidate in candidates {
            if let smaller = candidate(current), await fails(smaller) { current = smaller }
        }
        // Then whole runs of batches: halves, quarters …
        var size = current.batches.count / 2
        while size >= 1 {
            var offset = 0
            while offset < current.batches.count {
                var smaller = current
                smaller.batches.removeSubrange(offset..<min(offset + size, smaller.batches.count))
                if !smaller.batches.isEmpty, await fails(smaller) { current = smaller } else { offset += size }
            }
            size /= 2
        }
        return current
    }
}
