import Foundation
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// Failover, backpressure, spool overflow, connection limits and config errors, with the real binaries.
    @Suite(.serialized) struct BehaviourTests {
        @Test(.timeLimit(.minutes(2)))
        func failsOverToTheNextEndpoint() throws {
            let fleet = try Fleet()
            try fleet.startDaemon()
            let dead = try freePort()
            let config = try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#)
            // Put an endpoint where nothing listens first.
            let text = try String(contentsOfFile: config, encoding: .utf8)
                .replacingOccurrences(
                    of: #"endpoints = ["127.0.0.1:\#(fleet.port)"]"#,
                    with: #"endpoints = ["127.0.0.1:\#(dead)", "127.0.0.1:\#(fleet.port)"]"#)
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("connected to the second endpoint") {
                agent.output.contains("connected to netpulsed at 127.0.0.1:\(fleet.port)")
            }
            #expect(agent.output.contains("cannot connect to 127.0.0.1:\(dead)"))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 3 }
        }

        /// A daemon that falls behind asks agents to batch less often; they do, and return to normal afterwards.
        @Test(.timeLimit(.minutes(2)))
        func agentsFollowTheDaemonsPace() throws {
            let fleet = try Fleet(agents: ["agent-1", "agent-2"])
            // Commits gather a second of batches; more than 16 in one commit counts as falling behind.
            try fleet.editDaemonConfig { $0 + "\n[store]\ncommit_delay = \"1s\"\n[ingest]\npace_threshold = 16\n" }
            try fleet.startDaemon()
            let agents = try ["agent-1", "agent-2"].map { name in
                try fleet.startAgent(
                    name,
                    config: try fleet.writeAgentConfig(name, interval: "100ms", batch: "100ms", include: #"["lo"]"#))
            }
            try eventually("agents told to slow down", timeout: 30) {
                agents.allSatisfy { $0.output.contains("daemon asks to slow down: sampling ×1, batching ×4") }
            }
            #expect(fleet.daemon!.output.contains("asking agents to slow down"))
            // Slowed down, each batch holds several ticks instead of one or two.
            try eventually("bigger batches", timeout: 30) {
                // Samples of one batch share its order.
                Dictionary(grouping: try fleet.samples("agent-1", "lo"), by: \.order).values.map(\.count).max() ?? 0
                    >= 3
            }
            try eventually("back to normal", timeout: 60) {
                agents.allSatisfy { $0.output.contains("back to normal pace") }
            }
        }

        /// Agents replaying their spools into a daemon whose queue holds 16 batches: no commit takes more (the
        /// connections stop reading while it is full; without the limit a commit took every agent's 32 batches in
        /// flight), the daemon says so once, and every batch is stored, in order, none twice.
        @Test(.timeLimit(.minutes(3)))
        func aFullIngestQueueStopsReadingAndLosesNothing() throws {
            let names = ["agent-1", "agent-2", "agent-3", "agent-4"]
            let fleet = try Fleet(agents: names)
            // Each commit gathers a second of batches.
            try fleet.editDaemonConfig { $0 + "\n[store]\ncommit_delay = \"1s\"\n[ingest]\nqueue_limit = 16\n" }
            let agents = try names.map { name in
                try fleet.startAgent(
                    name,
                    config: try fleet.writeAgentConfig(name, interval: "100ms", batch: "100ms", include: #"["lo"]"#))
            }
            // A backlog of about 60 batches each.
            try eventually("backlogs spooled", timeout: 30) { names.allSatisfy { fleet.spooledFiles($0).count >= 60 } }
            try fleet.startDaemon(arguments: ["--log-level", "debug"])
            let started = Int64(Date().timeIntervalSince1970 * 1_000)
            // Fresh batches go ahead of each backlog: wait for both.
            try eventually("the backlogs are delivered and fresh batches follow", timeout: 90) {
                try zip(names, agents).allSatisfy { name, agent in
                    try agent.output.contains("replay done")
                        && fleet.samples(name, "lo").contains { $0.timestamp > started + 5_000 }
                }
            }
            let log = fleet.daemon!.output
            let commits = log.split(separator: "\n").compactMap { line -> Int? in
                guard let range = line.range(of: "committed ") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            #expect(commits.reduce(0, +) >= 4 * 50, "the backlogs went through the queue")
            #expect(commits.max() ?? 0 <= 16, "largest commit \(commits.max() ?? 0)")
            // Said once per episode: again only after ingest caught up in between.
            let full = log.components(separatedBy: "ingest queue full (16 batches").count - 1
            #expect(full >= 1 && full <= log.components(separatedBy: "ingest caught up").count, "\(full) times")
            for name in names {
                // Sampled every 100 ms from before the daemon started: no sample missing, none twice.
                let times = try fleet.samples(name, "lo").map(\.timestamp)
                let steps = zip(times, times.dropFirst()).map { $1 - $0 }
                #expect(
                    steps.allSatisfy { $0 > 0 } && (steps.max() ?? 0) < 1_000,
                    "\(name): largest step \(steps.max() ?? 0) ms")
            }
            #expect(agents.allSatisfy(\.isRunning) && fleet.daemon!.isRunning)
        }

        /// The daemon's disk fills up: it holds the batches it cannot store, unacknowledged (refusing none and
        /// closing no connection), asks agents to slow down and says why once; once there is room again it stores
        /// them and everything sent meanwhile. (Before, every failed commit closed the connections of all its
        /// batches, with a line per commit.)
        @Test(.timeLimit(.minutes(3)))
        func aFullDiskHoldsBatchesUntilThereIsRoom() throws {
            let fleet = try Fleet()
            let state = fleet.directory + "/netpulsed"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            // The daemon's state directory on a file system of its own, small enough to fill.
            try run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", state])
            defer { _ = try? run(["umount", "-l", state], allowFailure: true) }
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "200ms", include: #"["lo"]"#))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 5 }

            let filler = state + "/filler"
            _ = try run(["dd", "if=/dev/zero", "of=\(filler)", "bs=1M"], allowFailure: true)
            try eventually("the daemon says it cannot write", timeout: 30) {
                fleet.daemon!.output.contains("cannot write: the disk is full")
            }
            try eventually("the agent is asked to slow down", timeout: 30) {
                agent.output.contains("daemon asks to slow down")
            }
            try FileManager.default.removeItem(atPath: filler)
            try eventually("the daemon writes again", timeout: 30) {
                fleet.daemon!.output.contains("the store writes again after")
            }
            let resumed = Int64(Date().timeIntervalSince1970 * 1_000)
            try eventually("fresh points arrive") {
                try fleet.samples("agent-1", "lo").contains { $0.timestamp > resumed + 1_000 }
            }
            // Every sample through the outage, none twice.
            let times = try fleet.samples("agent-1", "lo").map(\.timestamp)
            let steps = zip(times, times.dropFirst()).map { $1 - $0 }
            #expect(steps.allSatisfy { $0 > 0 } && (steps.max() ?? 0) < 1_000, "largest step \(steps.max() ?? 0) ms")
            let log = fleet.daemon!.output
            #expect(log.components(separatedBy: "cannot write: the disk is full").count - 1 == 1, "said once:\n\(log)")
            #expect(!agent.output.contains("disconnected from"), "the connection stayed:\n\(agent.output)")
            #expect(fleet.daemon!.isRunning && agent.isRunning)
        }

        /// The agent's state directory fills up: batches it cannot spool are lost, counted and reported, with one
        /// line when it starts and one when it ends (before, a line per batch); sampling goes on, and once there is
        /// room the batches flow again and the daemon hears how many were lost.
        @Test(.timeLimit(.minutes(3)))
        func aFullSpoolDiskLosesBatchesKnowinglyAndRecovers() throws {
            let fleet = try Fleet()
            let state = fleet.directory + "/agent-1"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", state])
            defer { _ = try? run(["umount", "-l", state], allowFailure: true) }
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "100ms", include: #"["lo"]"#))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 5 }

            let filler = state + "/filler"
            _ = try run(["dd", "if=/dev/zero", "of=\(filler)", "bs=64k"], allowFailure: true)
            try eventually("the agent says batches are lost", timeout: 30) {
                // Keep the disk full: the spool files of batches acknowledged meanwhile free room that the next
                // batches could take (under load, the first attempts at a write could all find some).
                _ = try run(
                    ["dd", "if=/dev/zero", "of=\(filler)", "bs=4k", "oflag=append", "conv=notrunc"], allowFailure: true)
                return agent.output.contains("batches are lost until it works again")
            }
            // The disk stays full for two seconds (about 20 batches), not a wait for an event.
            Thread.sleep(forTimeInterval: 2)
            try FileManager.default.removeItem(atPath: filler)
            try eventually("the agent stores batches again", timeout: 30) {
                agent.output.contains("batches are stored again after")
            }
            try eventually("the daemon hears of the lost batches", timeout: 30) {
                fleet.daemon!.output.contains("batch(es) lost from its spool (full, or its disk failing)")
            }
            let resumed = Int64(Date().timeIntervalSince1970 * 1_000)
            try eventually("fresh points arrive") {
                try fleet.samples("agent-1", "lo").contains { $0.timestamp > resumed + 500 }
            }
            let said = agent.output.components(separatedBy: "batches are lost until it works again").count - 1
            #expect(said == 1, "said once:\n\(agent.output)")
            #expect(try fleet.storedAgents().first { $0.name == "agent-1" }?.droppedBatches ?? 0 >= 10)
            #expect(agent.isRunning && fleet.daemon!.isRunning)
        }

        /// A slow disk under the agent's state directory (every fsync takes 0.4 s, through a FUSE file system,
        /// `Tests/Tools/slow_fs.py`) does not delay sampling: the spool is written by a thread of its own. Before,
        /// the sampling loop waited for each batch's two fsyncs, and every stored sample of the run showed a hole of
        /// about 0.8 s each batch.
        @Test(
            .enabled(if: isRoot && FileManager.default.fileExists(atPath: "/dev/fuse"), "needs root and FUSE"),
            .timeLimit(.minutes(2)))
        func aSlowSpoolDiskDoesNotDelaySampling() throws {
            let fleet = try Fleet()
            let state = fleet.directory + "/agent-1"
            let backing = fleet.directory + "/agent-1-disk"
            for directory in [state, backing] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            let disk = try Daemonized(
                ["/usr/bin/python3", Build.root + "/Tests/Tools/slow_fs.py", backing, state, "0.4"],
                log: fleet.directory + "/slow_fs.out")
            defer {
                _ = try? run(["umount", "-l", state], allowFailure: true)
                disk.killHard()
            }
            try eventually("the slow disk is mounted") {
                try String(contentsOfFile: "/proc/mounts", encoding: .utf8).contains(" \(state) fuse")
            }
            try fleet.startDaemon()
            let agent = try fleet.startAgent(
                "agent-1",
                config: try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "1s", include: #"["lo"]"#))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 5 }
            let from = try fleet.samples("agent-1", "lo").last!.timestamp
            // Eight batches' worth of sampling on the slow disk, each batch's write taking 0.8 s.
            try eventually("eight seconds of points", timeout: 40) {
                try fleet.samples("agent-1", "lo").last!.timestamp > from + 8_000
            }
            let samples = try fleet.samples("agent-1", "lo").filter { $0.timestamp >= from }
            let gaps = zip(samples, samples.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(gaps.allSatisfy { $0 <= 350 }, "gaps \(gaps) ms:\n\(agent.output)")
            #expect(!agent.output.contains("lost"), "\(agent.output)")
            #expect(agent.stop() == 0)
        }

        /// A full spool drops its oldest batches, counts them, and the daemon hears about it.
        @Test(.timeLimit(.minutes(2)))
        func fullSpoolDropsTheOldestAndReportsIt() throws {
            let fleet = try Fleet()
            let config = try fleet.writeAgentConfig(
                "agent-1", interval: "100ms", batch: "100ms", include: #"["*"]"#, extra: "[spool]\nmax_size = 8192")
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("spool full", timeout: 60) { agent.output.contains("spool full: dropped") }
            try fleet.startDaemon()
            try eventually("daemon told of the drops", timeout: 30) {
                fleet.daemon!.output.contains("batch(es) lost from its spool (full, or its disk failing)")
            }
            try eventually("drops recorded in the store") {
                try fleet.storedAgents().first { $0.name == "agent-1" }?.droppedBatches ?? 0 > 0
            }
        }

        /// Connections that never finish TLS are closed at the handshake timeout, and connections beyond the limit
        /// are refused, while existing agents carry on.
        @Test(.timeLimit(.minutes(2)))
        func handshakeTimeoutAndConnectionLimit() async throws {
            let fleet = try Fleet()
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "[listen]\n", with: "[listen]\nmax_connections = 2\n")
                    .replacingOccurrences(of: "handshake_timeout = \"10s\"", with: "handshake_timeout = \"3s\"")
            }
            try fleet.startDaemon()
            try fleet.startAgent("agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("points arrive") { try fleet.samples("agent-1", "lo").count >= 2 }

            // A plain TCP client that says nothing: closed after the 3 s handshake timeout.
            let silent = try TCPProbe(port: fleet.port)
            let start = Date()
            #expect(silent.waitForClose(timeout: 10))
            let waited = Date().timeIntervalSince(start)
            #expect(waited > 2 && waited < 8, "closed after \(waited) s")

            // The limit is two connections: the agent and one more. The silent connection counts until the daemon's
            // event loop has finished closing it, a moment after the client sees the close; and the second must be
            // accepted before the third is made, so the third is the one refused.
            try await Task.sleep(for: .milliseconds(500))
            let second = try TCPProbe(port: fleet.port)
            try await Task.sleep(for: .milliseconds(300))
            let third = try TCPProbe(port: fleet.port)
            #expect(third.waitForClose(timeout: 2))
            #expect(!second.waitForClose(timeout: 0.5))
            try eventually("daemon logs the refusal") {
                fleet.daemon!.output.contains(
                    "refused 1 connection(s): 1 with 2 connections open ([listen] max_connections)")
            }
            let before = try fleet.samples("agent-1", "lo").count
            try eventually("the agent goes on") { try fleet.samples("agent-1", "lo").count > before }
        }

        /// Clients that open connections and never finish a handshake hold only the handshake slots of their
        /// address: an agent from another address connects meanwhile (without the separate limits the flood took
        /// every connection slot until the handshake timeout), and the flood is logged in a line, not one per
        /// connection.
        @Test(.timeLimit(.minutes(2)))
        func aHandshakeFloodDoesNotLockAgentsOut() async throws {
            let fleet = try Fleet()
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(
                    of: "[listen]\n", with: "[listen]\nmax_connections = 24\nmax_handshakes_per_address = 4\n"
                ).replacingOccurrences(of: "handshake_timeout = \"10s\"", with: "handshake_timeout = \"90s\"")
            }
            try fleet.startDaemon()
            // 40 silent connections from 127.0.0.2 (another address of the loopback interface).
            let flood = try (0..<40).map { _ in try TCPProbe(port: fleet.port, from: "127.0.0.2") }
            try eventually("all but 4 refused at once", timeout: 10) { flood.filter { $0.hasClosed() }.count == 36 }
            try fleet.startAgent("agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("the agent's points arrive long before the flood times out", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= 2
            }
            #expect(flood.filter { $0.hasClosed() }.count == 36, "the flood's 4 connections are still held")
            let lines = fleet.daemon!.output.split(separator: "\n").filter { $0.contains("refused ") }
            #expect(!lines.isEmpty && lines.count <= 3, "\(lines)")
            #expect(
                lines.first?.contains("with 4 handshakes pending from 127.0.0.2 ([listen] max_handshakes_per_address)")
                    == true, "\(lines)")
        }

        /// Silent connections from 40 addresses of one /24 (127.0.5.1 … 127.0.5.40) hold only that network's
        /// handshake slots (`max_handshakes_per_network`), while an agent from 127.0.0.1 delivers: before, each
        /// address was limited on its own, so the 40 took every connection slot until the handshake timeout.
        @Test(.timeLimit(.minutes(2)))
        func aHandshakeFloodFromOneNetworkDoesNotLockAgentsOut() throws {
            let fleet = try Fleet()
            defer { fleet.shutdown() }
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(
                    of: "[listen]\n",
                    with:
                        "[listen]\nmax_connections = 24\nmax_handshakes_per_address = 4\nmax_handshakes_per_network = 8\n"
                ).replacingOccurrences(of: "handshake_timeout = \"10s\"", with: "handshake_timeout = \"90s\"")
            }
            try fleet.startDaemon()
            let flood = try (1...40).map { try TCPProbe(port: fleet.port, from: "127.0.5.\($0)") }
            try eventually("all but 8 refused at once", timeout: 10) { flood.filter { $0.hasClosed() }.count == 32 }
            try fleet.startAgent("agent-1", config: try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#))
            try eventually("the agent's points arrive long before the flood times out", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= 2
            }
            #expect(flood.filter { $0.hasClosed() }.count == 32, "the flood's 8 connections are still held")
            let lines = fleet.daemon!.output.split(separator: "\n").filter { $0.contains("refused ") }
            #expect(!lines.isEmpty && lines.count <= 3, "\(lines)")
            #expect(
                lines.first?.contains(
                    "with 8 handshakes pending from 127.0.5.0/24 ([listen] max_handshakes_per_network)")
                    == true, "\(lines)")
        }

        /// The same from IPv6: in a network namespace of its own, netpulsed listens on `[::]`; silent connections
        /// from 40 addresses of one /64 (`Tests/Tools/hold_connections.py`) hold only that network's slots, and an
        /// agent connecting from `::1` (another /64) delivers. Before, one /64 could fill every slot.
        @Test(.enabled(if: isRoot, "needs root to create network namespaces"), .timeLimit(.minutes(2)))
        func aHandshakeFloodFromOneIPv6NetworkDoesNotLockAgentsOut() throws {
            let network = try IPv6TestNetwork(addresses: 41)
            defer { network.remove() }
            let fleet = try Fleet(netns: network.name)
            defer { fleet.shutdown() }
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "address = \"127.0.0.1:", with: "address = \"[::]:")
                    .replacingOccurrences(
                        of: "[listen]\n",
                        with:
                            "[listen]\nmax_connections = 24\nmax_handshakes_per_address = 4\nmax_handshakes_per_network = 8\n"
                    ).replacingOccurrences(of: "handshake_timeout = \"10s\"", with: "handshake_timeout = \"90s\"")
            }
            try fleet.startDaemon()
            let target = network.addresses[0]
            let sources = Array(network.addresses.dropFirst())
            let flood = try Daemonized(
                ["/usr/bin/python3", Build.root + "/Tests/Tools/hold_connections.py", target, "\(fleet.port)"]
                    + sources, log: fleet.directory + "/flood.log", netns: network.name)
            defer { flood.killHard() }
            // The flood's last report: connections still held, and closed by the daemon.
            func floodState() -> (held: Int, closed: Int)? {
                guard let line = flood.output.split(separator: "\n").last(where: { $0.hasPrefix("held ") }) else {
                    return nil
                }
                let numbers = line.split(separator: " ").compactMap { Int($0) }
                return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
            }
            try eventually("all but 8 refused at once", timeout: 10) {
                guard flood.isRunning else { throw CommandFailure(description: "the flood ended: \(flood.output)") }
                return floodState().map { $0.held == 8 && $0.closed == 32 } ?? false
            }
            let agent = try fleet.writeAgentConfig("agent-1", include: #"["lo"]"#, endpoint: "[::1]:\(fleet.port)")
            try fleet.startAgent("agent-1", config: agent)
            try eventually("the agent's points arrive long before the flood times out", timeout: 30) {
                try fleet.samples("agent-1", "lo").count >= 2
            }
            #expect(floodState().map { $0.held == 8 && $0.closed == 32 } == true, "the flood's 8 are still held")
            let lines = fleet.daemon!.output.split(separator: "\n").filter { $0.contains("refused ") }
            #expect(!lines.isEmpty && lines.count <= 3, "\(lines)")
            #expect(
                lines.first?.contains(
                    "with 8 handshakes pending from 2001:db8:1::/64 ([listen] max_handshakes_per_network)") == true,
                "\(lines)")
        }

        /// An agent that says HELLO and then nothing is closed at the idle timeout, with an ERROR saying why.
        @Test(.timeLimit(.minutes(2)))
        func idleConnectionsAreClosed() async throws {
            let fleet = try Fleet(agents: ["quiet"])
            try fleet.editDaemonConfig {
                $0.replacingOccurrences(of: "[listen]\n", with: "[listen]\nidle_timeout = \"2s\"\n")
            }
            try fleet.startDaemon()
            let started = Date()
            let outcome = try await RawClient.exchange(
                port: fleet.port, ca: fleet.directory + "/ca/ca.pem", certificate: fleet.directory + "/ca/quiet.pem",
                key: fleet.directory + "/ca/quiet-key.pem",
                send: [WireCodec.encode(.hello(Hello(agentID: "quiet", hostname: "x", agentVersion: "0")))],
                timeout: .seconds(10))
            let waited = Date().timeIntervalSince(started)
            #expect(outcome.closed)
            #expect(waited > 1.5 && waited < 8, "closed after \(waited) s")
            let codes = outcome.messages.compactMap { if case .error(let error) = $0 { error.code } else { nil } }
            #expect(codes == [.timeout])
        }

        /// A stop does not wait for the dashboards being drawn: a round of 2,000 declared pages takes far longer than
        /// a stop may (systemd's TimeoutStopSec), and the daemon exits at once and cleanly, publishing nothing of the
        /// round it broke off.
        @Test(.timeLimit(.minutes(2)))
        func aStopDoesNotWaitForADrawingInProgress() throws {
            let fleet = try Fleet()
            let declared = (0..<500).map {
                "[dashboard.d\($0)]\nscope = \"fleet\"\npanels = [\"throughput\", \"top_hosts\", \"errors\", \"heatmap\"]\n"
            }
            try fleet.editDaemonConfig { $0 + "\n[dashboards]\nhost_pages = false\n" + declared.joined() }
            try fleet.startDaemon()
            let index = fleet.directory + "/netpulsed/dashboards/index.html"
            // Drawing starts with the daemon; a round publishes its pages and the index only once all are drawn.
            let started = Date()
            let status = fleet.daemon!.stop(timeout: 60)
            let took = Date().timeIntervalSince(started)
            #expect(status == 0)
            #expect(took < 10, "the stop took \(took) s")
            #expect(
                !FileManager.default.fileExists(atPath: index), "the round had ended before the stop: nothing tested")
        }

        @Test func badConfigsNameFileLineAndKeyAndExitNonZero() throws {
            let fleet = try Fleet()
            let path = fleet.directory + "/bad.toml"
            try "[listen]\naddress = \"127.0.0.1:7420\"\nmax_connections = \"many\"\n".write(
                toFile: path, atomically: true, encoding: .utf8)
            let daemon = try Daemonized([Build.netpulsed, "--config", path], log: fleet.directory + "/bad.log")
            daemon.process.waitUntilExit()
            #expect(daemon.process.terminationStatus == 2)
            #expect(daemon.output.contains("\(path):3: 'listen.max_connections' must be a whole number, not a string"))

            let agentPath = fleet.directory + "/bad-agent.toml"
            try "[sampling]\ninterval = \"1s\"\nexclude = \"lo\"\n".write(
                toFile: agentPath, atomically: true, encoding: .utf8)
            let agent = try Daemonized([Build.agent, "--config", agentPath], log: fleet.directory + "/bad-agent.log")
            agent.process.waitUntilExit()
            #expect(agent.process.terminationStatus == 2)
            #expect(
                agent.output.contains(
                    "\(agentPath):3: 'sampling.exclude' must be an array of strings such as [\"a\", \"b\"]"))

            // Missing certificate files are named too, and nothing starts.
            let config = try fleet.writeAgentConfig("agent-1", ca: "/nonexistent/ca.pem")
            let check = try Daemonized([Build.cli, "check-config", config], log: fleet.directory + "/check.log")
            check.process.waitUntilExit()
            #expect(check.process.terminationStatus == 2)
            #expect(check.output.contains("/nonexistent/ca.pem: cannot read the CA certificate"))

            // So are those of TLS to PostgreSQL.
            try fleet.editDaemonConfig {
                $0 + """

                    [store]
                    postgresql = "postgresql://netpulse@db.internal/fleet?sslmode=verify-full&sslrootcert=/nonexistent/pg-ca.pem"

                    """
            }
            let daemonCheck = try Daemonized(
                [Build.cli, "check-config", fleet.directory + "/netpulsed.toml"], log: fleet.directory + "/check-d.log")
            daemonCheck.process.waitUntilExit()
            #expect(daemonCheck.process.terminationStatus == 2)
            #expect(
                daemonCheck.output.contains("cannot read /nonexistent/pg-ca.pem (sslrootcert of [store] postgresql)"),
                "\(daemonCheck.output)")
        }
    }
}

/// A raw TCP connection that sends nothing, to watch the daemon close it.
final class TCPProbe {
    let fd: Int32

    private var closed = false

    /// Connects to the daemon on 127.0.0.1, from `source` (another loopback address) when given.
    init(port: Int, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw CommandFailure(description: "bind to \(source) failed: \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw CommandFailure(description: "connect failed: \(errno)") }
    }

    /// Whether the peer closed the connection within `timeout` seconds.
    func waitForClose(timeout: Double) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1000)) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) <= 0
    }

    /// Whether the peer has closed the connection by now (without waiting).
    func hasClosed() -> Bool {
        if !closed { closed = waitForClose(timeout: 0) }
        return closed
    }

    deinit { close(fd) }
}
