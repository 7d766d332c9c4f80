import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import Testing

@testable import OracleSupport

extension EndToEnd {
    /// The daemon killed again and again while a fleet streams into it, judged by the oracle.
    @Suite(.serialized) struct LoadFaultTests {
        /// A fleet of simulated agents (``LoadAgents``: real mutual TLS, a certificate each, counters of their own
        /// with wraps, resets, reboots, re-created interfaces, idle interfaces and an outage) sends half an hour of
        /// one-second samples as fast as the daemon takes them, while the daemon is killed with SIGKILL and started
        /// again five times. Each agent keeps its batches until they are acknowledged and sends the rest again after
        /// each kill. Afterwards:
        /// - every batch was acknowledged, none refused, and every sample the agents sent is stored exactly once;
        /// - every rollup bucket of every level (interfaces, hosts, groups, fleet), every window figure and every
        ///   bill the daemon kept equals what `Tests/Oracle/oracle.py` computes from the same counters. The oracle's
        ///   buckets sum each interface's counted steps, so this is also "totals equal the agents' counters".
        @Test(.timeLimit(.minutes(8)))
        func daemonKilledUnderLoadAgreesWithTheOracle() async throws {
            let agentCount = Int(ProcessInfo.processInfo.environment["NETPULSE_LOAD_AGENTS"] ?? "") ?? 32
            // Half an hour of samples that ended ten minutes or more ago (on a 5-minute boundary): in the past, as a replayed spool is, so no clock
            // is judged ahead.
            let end = WallClock.system.now() / 300_000 * 300_000 - 600_000
            var oracleCase = CaseGenerator.fleetUnderLoad(agents: agentCount, end: end)
            let fleet = try Fleet(agents: oracleCase.agents.map(\.name))
            defer { fleet.shutdown() }
            // The agents' labels make their groups, as the oracle counts them.
            // The daemon counts and bills as the oracle does: with the case's configuration.
            try fleet.editDaemonConfig { $0 + "\n" + oracleCase.config + "\n" }
            try fleet.startDaemon()
            let load = try LoadAgents(oracleCase, caDirectory: fleet.directory + "/ca", port: fleet.port)
            print("load: \(load.agents.count) agents, \(load.total) batches")
            let started = ContinuousClock.now
            load.start()
            defer { load.stop() }

            // Killed when the load reaches each of these shares, however fast the daemon takes it (a faster daemon
            // once delivered everything before the fifth kill of a timed schedule).
            var kills = [Int]()
            for share in [10, 25, 40, 55, 70] {
                while load.progress.acknowledged < load.total * share / 100 {
                    try await Task.sleep(for: .milliseconds(5))
                }
                let acknowledged = load.progress.acknowledged
                fleet.daemon!.killHard()
                kills.append(acknowledged)
                try fleet.startDaemon()
            }
            print("killed with \(kills) of \(load.total) batches acknowledged")
            #expect(
                kills.allSatisfy { $0 < load.total }, "the load was delivered before the daemon was killed five times")
            do {
                try eventually("every batch acknowledged", timeout: 120, interval: 0.5) {
                    load.progress.acknowledged == load.total
                }
            } catch {
                for agent in load.agents { print(try await agent.eventLoop.submit { agent.state }.get()) }
                throw error
            }
            let progress = load.progress
            print(
                "delivered in \(ContinuousClock.now - started): \(progress.connections) connections, \(progress.duplicates) batches acknowledged as already stored"
            )
            #expect(progress.refusals.isEmpty, "\(progress.refusals.prefix(5))")
            // The kills broke the agents' connections and they dialled again.
            #expect(progress.connections > load.agents.count, "the agents never reconnected")

            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output.suffix(3_000))")
            // A stop while the daemon is still applying what it journaled leaves the rest journaled for its next
            // start (by design: the stop ends within its budget), and a read of the store without a daemon does not
            // see it; with the machine loaded by other tests, a start's recovery outlasted its first billing pass. So
            // it is started until nothing journaled waits, and once more: that daemon's first billing pass takes in
            // everything that arrived.
            var recoveries = 0
            while try journalWaits(fleet.store()) {
                recoveries += 1
                try #require(recoveries <= 5, "what the journal holds was never applied")
                try fleet.startDaemon()
                try eventually("the journal applied", timeout: 120) {
                    fleet.daemon!.output.contains("journaled batch(es) the last run had acknowledged but not stored")
                }
                #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output.suffix(3_000))")
            }
            try fleet.startDaemon(arguments: ["--log-level", "debug"])
            try eventually("a billing pass after the last batch", timeout: 60) {
                fleet.daemon!.output.contains("billing: pass done")
            }
            #expect(fleet.daemon!.stop() == 0)

            let store = try fleet.store()
            // The bills are current to the last pass's cursor: the oracle answers as of that time.
            oracleCase.now = try await store.billCursor()
            let expected = try Oracle.run(oracleCase)
            let differences = try await Oracle.compare(store, oracleCase, expected, arrival: "under SIGKILL")
            for difference in differences.prefix(20) { Issue.record(Comment(rawValue: difference)) }
            #expect(differences.isEmpty, "\(differences.count) differences from the oracle")

            // Exactly once: each interface's stored samples are the ones its agent sent, none twice, none missing.
            var sent = [String: [Int64]]()
            for batch in oracleCase.batches {
                for section in batch.sections {
                    sent["\(batch.agent)/\(section.name)", default: []] += section.samples.map(\.time)
                }
            }
            let series = try await store.series().filter { $0.kind == .interface }
            #expect(series.count == sent.count)
            for record in series {
                let stored = try await store.samples(series: record.id, from: 0, to: .max).map(\.timestamp)
                let key = "\(record.agent!)/\(record.interface!)"
                #expect(stored.sorted() == (sent[key] ?? []).sorted(), "samples of \(key)")
            }
        }
    }
}

/// Whether `store`'s journal holds batches it has not applied.
private func journalWaits(_ store: any MetricStore) throws -> Bool {
    guard let store = store as? any JournaledStore else { return false }
    let waiting = try store.openJournal().entries(after: store.journalApplied(), limit: 1)
    return !waiting.entries.isEmpty || !waiting.damaged.isEmpty
}

extension CaseGenerator {
    /// `agents` agents for half an hour of one-second samples up to `end`, five per batch, each with traffic of its
    /// own: a 1 Gbit/s `eth0`, a busy 100 Mbit/s `wan0` with 32-bit counters (it wraps every few minutes), an idle
    /// `lo` with bursts (idle suppression, 60 s heartbeats), and on every fourth agent a bond of one slave. Between
    /// them: reboots, driver resets, a re-created interface and a three-minute outage.
    static func fleetUnderLoad(agents count: Int, end: Int64) -> OracleCase {
        var generator = CaseGenerator(seed: 2_026)
        let ticks = 1_800
        let start = end - Int64(ticks) * 1_000
        var agents = (0..<count).map { index -> Agent in
            var interfaces = [
                Interface(
                    name: "eth0", kind: .physical, speed: 1_000, ifindex: 2,
                    rate: 200_000 + UInt64(index) * 150_000),
                Interface(
                    name: "wan0", kind: .physical, width: .bits32, speed: 100, ifindex: 3,
                    rate: 6_000_000 + UInt64(index % 5) * 500_000),
                Interface(name: "lo", kind: .loopback, speed: 0, ifindex: 1, rate: 0),
            ]
            if index % 4 == 0 {
                interfaces.append(Interface(name: "bond0", kind: .bond, speed: 2_000, ifindex: 5, rate: 3_000_000))
                interfaces.append(
                    Interface(
                        name: "eth1", kind: .physical, relation: .bondSlave, speed: 1_000, ifindex: 4,
                        rate: 1_500_000))
            }
            return Agent(
                name: String(format: "load-%03d", index),
                labels: [("site", "site-\(index % 3)"), ("role", index % 2 == 0 ? "edge" : "core")],
                boot: BootID(high: UInt64(index) + 1, low: 0x10AD), interfaces: interfaces,
                stream: 0x10AD_0000 + UInt64(index))
        }
        let made = generator.simulate(
            &agents, start: start, ticks: ticks, interval: 1_000, heartbeat: 60_000, batchTicks: 5
        ) { agent, second in
            let index = Int(agent.dropFirst(5))!
            var now = Happening()
            switch index % 8 {
            case 1: now.reboot = second == 900
            case 2: if second == 1_200 { now.interfaces["eth0"] = ["reset"] }
            case 3: if second == 1_500 { now.interfaces["wan0"] = ["recreate"] }
            case 4: now.down = (600..<780).contains(second)
            default: break
            }
            if index % 5 == 0, (300..<310).contains(second) || (1_000..<1_003).contains(second) {
                now.interfaces["lo"] = ["burst"]
            }
            return now
        }
        return OracleCase(
            agents: agents.map { ($0.name, $0.labels) }, batches: made.map(\.batch), now: end,
            windows: [
                (start, end, 60_000), (start, end, 300_000),
                (start / 3_600_000 * 3_600_000, (end / 3_600_000 + 1) * 3_600_000, 3_600_000),
            ],
            bills: [start],
            // The agents' site and role are groups; eth0s are billed by the sum of both directions.
            config: """
                [labels]
                from_agents = ["role", "site"]
                [billing.edge]
                match = "role=edge"
                method = "sum"
                """)
    }
}
