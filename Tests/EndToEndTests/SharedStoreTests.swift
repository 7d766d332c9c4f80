import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import PulseStorePostgres
import TestSupport
import Testing

extension EndToEnd {
    /// Two daemons on one PostgreSQL database (a throwaway server of the test's own), two agents that list both, each
    /// the other first, so both daemons take agents at once.
    @Suite(.serialized) struct SharedStoreTests {
        /// The leader is killed (SIGKILL), then the new leader is frozen (SIGSTOP): each time the other daemon takes
        /// the lease within a bounded time, the agents on it fail over, and the frozen leader steps down when it thaws.
        /// At the end every sampled tick is stored once, the totals equal the counters, and every rollup of the
        /// interface reads as one SQLite daemon computes it from the same samples.
        @Test(.timeLimit(.minutes(3)))
        func theLeadPassesWhenTheLeaderIsKilledOrFrozenAndNothingIsLost() throws {
            let server = try PostgresServer.start()
            defer { server.stop() }
            let fleet = try Fleet(agents: ["agent-1", "agent-2"])
            try fleet.useStore(postgresql: try server.createDatabase("fleet"))
            let (firstMetrics, secondMetrics) = (try freePort(), try freePort())
            try fleet.editDaemonConfig {
                $0 + "lease = \"2s\"\n[metrics]\nlisten = \"127.0.0.1:\(firstMetrics)\"\n"
            }
            // The second daemon: the same config, its own port and state directory.
            let secondPort = try freePort()
            let secondConfig = "\(fleet.directory)/netpulsed-b.toml"
            try String(contentsOfFile: "\(fleet.directory)/netpulsed.toml", encoding: .utf8)
                // With the closing quote: one port's digits may begin another's.
                .replacingOccurrences(of: "127.0.0.1:\(fleet.port)\"", with: "127.0.0.1:\(secondPort)\"")
                .replacingOccurrences(of: "127.0.0.1:\(firstMetrics)\"", with: "127.0.0.1:\(secondMetrics)\"")
                .replacingOccurrences(of: "\(fleet.directory)/netpulsed\"", with: "\(fleet.directory)/netpulsed-b\"")
                .replacingOccurrences(of: "\(fleet.directory)/http.sock\"", with: "\(fleet.directory)/http-b.sock\"")
                .write(toFile: secondConfig, atomically: true, encoding: .utf8)
            try fleet.startDaemon()
            try eventually("the first daemon leads") { fleet.daemon!.output.contains("took the lease") }
            let second = try Daemonized(
                [Build.netpulsed, "--config", secondConfig], log: "\(fleet.directory)/netpulsed-b.log")
            try eventually("the second stands by") { second.output.contains("another daemon holds the lease") }

            let config = try fleet.writeAgentConfig(
                "agent-1", interval: "100ms", batch: "400ms", include: #"["lo"]"#,
                endpoint: "127.0.0.1:\(fleet.port)\", \"127.0.0.1:\(secondPort)")
            let agent = try fleet.startAgent("agent-1", config: config)
            let otherConfig = try fleet.writeAgentConfig(
                "agent-2", interval: "100ms", batch: "400ms", include: #"["lo"]"#,
                endpoint: "127.0.0.1:\(secondPort)\", \"127.0.0.1:\(fleet.port)")
            let other = try fleet.startAgent("agent-2", config: otherConfig)
            try eventually("agents connected") {
                agent.output.contains("connected to netpulsed") && other.output.contains("connected to netpulsed")
            }
            Thread.sleep(forTimeInterval: 1.5)

            // SIGKILL the leader: the second takes the lease once it expires (2 s; renewals every 2/3 s).
            let killed = Date()
            fleet.daemon!.killHard()
            try eventually("the second takes the lease", timeout: 15) { second.output.contains("took the lease") }
            let killTakeover = Date().timeIntervalSince(killed)
            #expect(killTakeover < 4, "took \(killTakeover) s")
            try eventually("the agent fails over", timeout: 15) {
                agent.output.components(separatedBy: "connected to netpulsed").count >= 3
            }
            // The first comes back (its log starts afresh), and stands by.
            try fleet.startDaemon()
            try eventually("the first stands by") { fleet.daemon!.output.contains("another daemon holds the lease") }
            Thread.sleep(forTimeInterval: 1)

            // SIGSTOP the leader: the first takes the lease after it expires; the second, thawed, steps down.
            let frozen = Date()
            second.signal(SIGSTOP)
            try eventually("the first takes the lease", timeout: 20) {
                fleet.daemon!.output.contains("took the lease")
            }
            let freezeTakeover = Date().timeIntervalSince(frozen)
            #expect(freezeTakeover < 6, "took \(freezeTakeover) s")
            Thread.sleep(forTimeInterval: 1)
            second.signal(SIGCONT)
            do {
                try eventually("the thawed leader steps down", timeout: 10) {
                    second.output.contains("no longer leads")
                }
            } catch {
                // Once in a full run (never alone), the thawed daemon had not said so within 10 s; its log is
                // deleted with the fleet's directory, so what it said is kept here.
                Issue.record("the thawed daemon's log ends:\n\(second.output.suffix(4_000))")
                throw error
            }
            let location = try PostgresLocation(url: server.url(database: "fleet"))
            let holder = try blocking {
                let store = try await PostgresStore(location: location, access: .reader)
                defer { store.shutdown() }
                return try await store.lease().holder
            }
            #expect(holder.contains("pid \(fleet.daemon!.pid) "), "\(holder)")
            // Each daemon's own metrics say which one leads.
            for (port, leads) in [(firstMetrics, 1), (secondMetrics, 0)] {
                let exposition = try run(["curl", "-sS", "--fail", "http://127.0.0.1:\(port)/metrics"])
                #expect(gauge("netpulse_leader", in: exposition) == Double(leads), "\(port): \(exposition)")
            }
            print("takeover after SIGKILL: \(killTakeover) s, after SIGSTOP: \(freezeTakeover) s")
            Thread.sleep(forTimeInterval: 1.5)

            // Each agent killed (SIGKILL) and started again with its endpoints the other way round, three times, both
            // daemons up: it moves from one daemon to the other and back, replaying what it had sent without an
            // acknowledgement into the other, and each daemon meets again agents it served before, whose rows the
            // other daemon has moved on since.
            let swapped = try [config, otherConfig].map { path in
                let text = try String(contentsOfFile: path, encoding: .utf8)
                let endpoints = try #require(text.split(separator: "\n").first { $0.hasPrefix("endpoints = ") })
                let pair = endpoints.dropFirst("endpoints = [".count).dropLast().components(separatedBy: ", ")
                let reversed = "endpoints = [\(pair.reversed().joined(separator: ", "))]"
                let moved = path.replacingOccurrences(of: ".toml", with: "-swapped.toml")
                try text.replacingOccurrences(of: String(endpoints), with: reversed)
                    .write(toFile: moved, atomically: true, encoding: .utf8)
                return moved
            }
            var running = [agent, other]
            var configs = [config, otherConfig]
            var restarts = [[ClosedRange<Int64>]](repeating: [], count: 2)
            let now = { Int64(Date().timeIntervalSince1970 * 1_000) }
            for round in 0..<3 {
                for (index, name) in ["agent-1", "agent-2"].enumerated() {
                    // Ticks not spooled yet go with the agent: the batch being filled and what the spool writer had
                    // not written yet, which under load (right after the takeovers, with two daemons and PostgreSQL
                    // on two cores) was 1.3 s and 1.6 s of ticks in two full runs: 3 s are allowed.
                    let killed = now() - 3_000
                    running[index].killHard()
                    // Both on the first daemon in even rounds, on the second in odd ones.
                    let useFirst = round % 2 == 0
                    configs[index] = [[config, swapped[0]], [swapped[1], otherConfig]][index][round % 2]
                    running[index] = try fleet.startAgent(name, config: configs[index])
                    let port = useFirst ? fleet.port : secondPort
                    let process = running[index]
                    try eventually("\(name) on the \(useFirst ? "first" : "second") daemon") {
                        process.output.contains("connected to netpulsed at 127.0.0.1:\(port)")
                    }
                    // It may connect before it first samples (at its next tick).
                    restarts[index].append(killed...now() + 500)
                }
                Thread.sleep(forTimeInterval: 1)
            }

            try fleet.stopAndCheckEveryTickStoredOnce(
                running[0], config: configs[0], atLeast: 50, restarts: restarts[0])
            try fleet.stopAndCheckEveryTickStoredOnce(
                running[1], config: configs[1], atLeast: 50, name: "agent-2", restarts: restarts[1])
            for name in ["agent-1", "agent-2"] {
                try fleet.checkWindowFiguresMatchSQLite(agent: name, interface: "lo", interval: 100)
            }
            #expect(second.stop() == 0, "second:\n\(second.output)")
            #expect(fleet.daemon!.stop() == 0, "first:\n\(fleet.daemon!.output)")
        }
    }
}
