import PulseAnalytics
import PulseCore

/// What happens to one agent at one second of a scenario.
struct Happening {
    /// The agent is not running: nothing is sampled.
    var down = false
    /// The agent's clock, relative to true time (ms).
    var clockOffset: Int64 = 0
    /// The kernel rebooted just before this second: a new boot id, counters restart.
    var reboot = false
    /// Per interface: `reset` (driver reset), `recreate` (new ifindex), `jump` (an implausible step), `burst`.
    var interfaces: [String: Set<String>] = [:]
}

extension CaseGenerator {
    /// Runs `agents` from `start` for `ticks` samples of `interval` ms and returns the batches each makes, in the
    /// order they were closed, with `received` = the true time of closing plus two seconds.
    mutating func simulate(
        _ agents: inout [Agent], start: Int64, ticks: Int, interval: Int64, heartbeat: Int64, batchTicks: Int,
        happening: (String, Int) -> Happening
    ) -> [(batch: OracleCase.Batch, closedAt: Int64, tick: Int)] {
        var made = [(batch: OracleCase.Batch, closedAt: Int64, tick: Int)]()
        for index in agents.indices {
            var open = [(time: Int64, samples: [(interface: Int, time: Int64, counters: [UInt64], epoch: String)])]()
            var openTicks = 0
            var lastAgentTime = Int64.min
            var wasDown = false
            func close(_ agent: inout Agent, trueTime: Int64, tick: Int) {
                let times = Set(open.flatMap { $0.samples.map(\.time) }).sorted()
                guard !times.isEmpty else {
                    // Only idle ticks, none due for a heartbeat: no batch.
                    open.removeAll()
                    openTicks = 0
                    return
                }
                let tickOf = Dictionary(uniqueKeysWithValues: times.enumerated().map { ($1, $0) })
                var sections = [OracleCase.Section]()
                for (position, interface) in agent.interfaces.enumerated() {
                    // One section per epoch of the interface in this batch (a re-created interface has two).
                    let samples = open.flatMap { $0.samples.filter { $0.interface == position } }
                    var epochs = [String]()
                    for sample in samples where !epochs.contains(sample.epoch) { epochs.append(sample.epoch) }
                    for epoch in epochs {
                        let mine = samples.filter { $0.epoch == epoch }
                        let parts = epoch.split(separator: "/")
                        let first = tickOf[mine[0].time]!
                        sections.append(
                            OracleCase.Section(
                                name: interface.name, boot: BootID(uuidString: parts[0])!, ifindex: UInt32(parts[1])!,
                                width: interface.width,
                                samples: mine.map { (tickOf[$0.time]!, $0.time, $0.counters) },
                                links: [(first, interface.speed, interface.kind, interface.relation)],
                                began: agent.began[epoch]))
                    }
                }
                agent.sequence += 1
                agent.order = max(agent.order + 1, UInt64(times.last!))
                made.append(
                    (
                        OracleCase.Batch(
                            agent: agent.name, stream: agent.stream, sequence: agent.sequence, order: agent.order,
                            interval: interval, heartbeat: heartbeat, received: trueTime + 2_000, sections: sections),
                        trueTime, tick
                    ))
                open.removeAll()
                openTicks = 0
            }
            var agent = agents[index]
            for tick in 0..<ticks {
                let trueTime = start + Int64(tick) * interval
                let now = happening(agent.name, tick)
                for position in agent.interfaces.indices {
                    let events = now.interfaces[agent.interfaces[position].name] ?? []
                    if now.reboot {
                        agent.interfaces[position].counters = agent.interfaces[position].counters.map { _ in
                            (random.next() as UInt64) % 1_000
                        }
                    }
                    if events.contains("reset") {
                        agent.interfaces[position].counters = agent.interfaces[position].counters.map { $0 % 97 }
                    }
                    if events.contains("recreate") {
                        agent.interfaces[position].ifindex += 1
                        agent.interfaces[position].counters = [UInt64](repeating: 0, count: 8)
                    }
                    let idle = agent.interfaces[position].rate == 0
                    if events.contains("burst") {
                        agent.interfaces[position].rate = 10_000
                        advance(&agent.interfaces[position], seconds: interval / 1_000)
                        agent.interfaces[position].rate = 0
                    } else if !idle {
                        advance(&agent.interfaces[position], seconds: interval / 1_000, scale: 1)
                    }
                    if events.contains("jump") {
                        agent.interfaces[position].counters[0] &+= 50_000_000_000
                    }
                }
                if now.reboot {
                    agent.boot = BootID(high: random.next() as UInt64, low: random.next() as UInt64)
                    // Booted up to two intervals before this second, by the clock the agent has now.
                    agent.bootTimes["\(agent.boot)"] =
                        trueTime + now.clockOffset - Int64((random.next() as UInt64) % UInt64(2 * interval))
                }
                if now.down {
                    if !wasDown { close(&agent, trueTime: trueTime, tick: tick) }
                    wasDown = true
                    agent.last.removeAll()
                    continue
                }
                wasDown = false
                let agentTime = trueTime + now.clockOffset
                if agentTime <= lastAgentTime { close(&agent, trueTime: trueTime, tick: tick) }
                // The agent's previous read (a restarted agent's first read knows only the boot).
                let lastRead = lastAgentTime == Int64.min ? agentTime - interval : lastAgentTime
                lastAgentTime = agentTime
                var samples = [(interface: Int, time: Int64, counters: [UInt64], epoch: String)]()
                for (position, interface) in agent.interfaces.enumerated() {
                    let epoch = "\(agent.boot)/\(interface.ifindex)"
                    let key = interface.name
                    if agent.knowsStarts, agent.began[epoch] == nil, let before = agent.epochOf[key], before != epoch {
                        // As the agent's sampler says it (`docs/protocol.md`): a new boot began at the boot time, an
                        // interface re-created in the same boot after the read before (one in twenty: a start after
                        // the sample, which the daemon must ignore).
                        let sameBoot = before.hasPrefix("\(agent.boot)/")
                        var start = sameBoot || agent.bootTimes["\(agent.boot)"] == nil
                            ? lastRead : agent.bootTimes["\(agent.boot)"]!
                        if (random.next() as UInt64) % 20 == 0 { start = agentTime + 3_600_000 }
                        agent.began[epoch] = start
                    }
                    agent.epochOf[key] = epoch
                    if heartbeat > 0, let last = agent.last[key], last.epoch == epoch {
                        if last.counters == interface.counters {
                            if agentTime - last.sentAt >= heartbeat {
                                samples.append((position, agentTime, interface.counters, epoch))
                                agent.last[key] = (agentTime, interface.counters, epoch, true, agentTime)
                            } else {
                                agent.last[key] = (agentTime, interface.counters, epoch, false, last.sentAt)
                            }
                            continue
                        }
                        if !last.sent { samples.append((position, last.time, last.counters, epoch)) }
                    }
                    samples.append((position, agentTime, interface.counters, epoch))
                    agent.last[key] = (agentTime, interface.counters, epoch, true, agentTime)
                }
                open.append((agentTime, samples))
                openTicks += 1
                if openTicks == batchTicks { close(&agent, trueTime: trueTime, tick: tick) }
            }
            close(&agent, trueTime: start + Int64(ticks) * interval, tick: ticks)
            agents[index] = agent
        }
        return made
    }
}
