import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import TestSupport
import Testing

extension EndToEnd {
    /// Two daemons on one PostgreSQL database (a throwaway server of the test's own), one agent that lists both.
    @Suite(.serialized) struct SharedStoreTests {
        /// The leader is killed (SIGKILL), then the new leader is frozen (SIGSTOP): each time the other daemon takes
        /// the lease within a bounded time, the agent fails over, and the frozen leader steps down when it thaws.
        /// At the end every sampled tick is stored once and the totals equal the counters.
        @Test(.timeLimit(.minutes(3)))
        func theLeadPassesWhenTheLeaderIsKilledOrFrozenAndNothingIsLost() throws {
            let server = try PostgresServer.start()
            defer { server.stop() }
            let fleet = try Fleet()
            try fleet.useStore(postgresql: try server.createDatabase("fleet"))
            try fleet.editDaemonConfig { $0 + "lease = \"2s\"\n" }
            // The second daemon: the same config, its own port and state directory.
            let secondPort = try freePort()
            let secondConfig = "\(fleet.directory)/netpulsed-b.toml"
            try String(contentsOfFile: "\(fleet.directory)/netpulsed.toml", encoding: .utf8)
                .replacingOccurrences(of: "127.0.0.1:\(fleet.port)", with: "127.0.0.1:\(secondPort)")
                .replacingOccurrences(of: "\(fleet.directory)/netpulsed\"", with: "\(fleet.directory)/netpulsed-b\"")
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
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
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
            try eventually("the thawed leader steps down", timeout: 10) { second.output.contains("no longer leads") }
            let location = try PostgresLocation(url: server.url(database: "fleet"))
            let holder = try blocking {
                let store = try await PostgresStore(location: location, access: .reader)
                defer { store.shutdown() }
                return try await store.lease().holder
            }
            #expect(holder.contains("pid \(fleet.daemon!.pid) "), "\(holder)")
            print("takeover after SIGKILL: \(killTakeover) s, after SIGSTOP: \(freezeTakeover) s")
            Thread.sleep(forTimeInterval: 1.5)

            try fleet.stopAndCheckEveryTickStoredOnce(agent, config: config, atLeast: 50)
            #expect(second.stop() == 0, "second:\n\(second.output)")
            #expect(fleet.daemon!.stop() == 0, "first:\n\(fleet.daemon!.output)")
        }
    }
}
