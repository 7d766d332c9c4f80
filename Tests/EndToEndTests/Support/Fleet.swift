import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import PulseStorePostgres
import PulseStoreSQLite
import TestSupport
import Testing

/// A throwaway deployment: a CA and certificates made with the real `netpulse ca`, configs, and the real
/// `netpulsed` and `netpulse-agent` processes, optionally inside a network namespace.
final class Fleet: @unchecked Sendable {
    let directory: String
    let port: Int
    let netns: String?
    var daemon: Daemonized?
    var agents: [String: Daemonized] = [:]
    /// The PostgreSQL database the daemon stores into (``useStore(postgresql:)``); nil: its SQLite file.
    private(set) var postgresql: String?

    init(netns: String? = nil, agents: [String] = ["agent-1"]) throws {
        directory = NSTemporaryDirectory() + "netpulse-e2e-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.netns = netns
        port = try freePort()
        try run([Build.cli, "ca", "init", "--dir", "\(directory)/ca"])
        try run([Build.cli, "ca", "issue", "--dir", "\(directory)/ca", "--daemon", "netpulsed", "--ip", "127.0.0.1"])
        for agent in agents { try issueAgent(agent) }
        try """
        [daemon]
        state_directory = "\(directory)/netpulsed"
        [listen]
        address = "127.0.0.1:\(port)"
        handshake_timeout = "10s"
        [tls]
        ca = "\(directory)/ca/ca.pem"
        certificate = "\(directory)/ca/netpulsed.pem"
        key = "\(directory)/ca/netpulsed-key.pem"
        [http]
        socket = "\(directory)/http.sock"
        """.write(toFile: "\(directory)/netpulsed.toml", atomically: true, encoding: .utf8)
    }

    func issueAgent(_ name: String) throws {
        try run([Build.cli, "ca", "issue", "--dir", "\(directory)/ca", "--agent", name])
    }

    /// Rewrites the daemon's config before it starts (to tune limits and timeouts for one test).
    func editDaemonConfig(_ edit: (String) -> String) throws {
        let path = "\(directory)/netpulsed.toml"
        try edit(try String(contentsOfFile: path, encoding: .utf8)).write(
            toFile: path, atomically: true, encoding: .utf8)
    }

    var storePath: String { "\(directory)/netpulsed/netpulse.db" }

    /// Makes the daemon store into a PostgreSQL database (`[store] postgresql`) instead of its SQLite file.
    func useStore(postgresql url: String) throws {
        postgresql = url
        try editDaemonConfig { $0 + "\n[store]\npostgresql = \"\(url)\"\n" }
    }

    /// Writes an agent config; `extra` is appended verbatim (TOML tables).
    func writeAgentConfig(
        _ name: String, interval: String = "200ms", batch: String = "600ms", heartbeat: String = "0s",
        include: String = #"["*"]"#, exclude: String = "[]", certificate: String? = nil, ca: String? = nil,
        budget: String = "0", endpoint: String? = nil, extra: String = ""
    ) throws -> String {
        let path = "\(directory)/\(name).toml"
        try """
        [agent]
        id = "\(name)"
        state_directory = "\(directory)/\(name)"
        [sampling]
        interval = "\(interval)"
        link_state_interval = "2s"
        include = \(include)
        exclude = \(exclude)
        [throttle]
        idle_heartbeat = "\(heartbeat)"
        upload_budget = \(budget)
        [batch]
        interval = "\(batch)"
        jitter = 0.1
        [daemon]
        endpoints = ["\(endpoint ?? "127.0.0.1:\(port)")"]
        ca = "\(ca ?? "\(directory)/ca/ca.pem")"
        certificate = "\(directory)/ca/\(certificate ?? name).pem"
        key = "\(directory)/ca/\(certificate ?? name)-key.pem"
        backoff_initial = "100ms"
        backoff_max = "1s"
        \(extra)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts `netpulsed` (with `environment` added to its own) and, unless told not to, waits until it listens.
    func startDaemon(
        arguments: [String] = [], environment: [String: String] = [:], waitUntilListening: Bool = true
    ) throws {
        let command =
            environment.isEmpty
            ? [Build.netpulsed]
            : ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0)=\($1)" } + [Build.netpulsed]
        let process = try Daemonized(
            command + ["--config", "\(directory)/netpulsed.toml"] + arguments, log: "\(directory)/netpulsed.log",
            netns: netns)
        daemon = process
        guard waitUntilListening else { return }
        do {
            try eventually("netpulsed listening") {
                guard process.isRunning else {
                    throw CommandFailure(description: "netpulsed exited:\n\(process.output)")
                }
                return process.output.contains("listening on")
            }
        } catch {
            throw CommandFailure(description: "\(error); its log:\n\(process.output.suffix(3_000))")
        }
    }

    /// Starts an agent with a config written by ``writeAgentConfig``.
    @discardableResult
    /// Starts an agent, in the fleet's namespace unless `namespace` names another.
    /// `wrapper` goes before the agent's command line (a program that sets up its world and execs the rest).
    func startAgent(
        _ name: String, config: String, namespace: String? = nil, environment: [String: String] = [:],
        wrapper: [String] = []
    ) throws -> Daemonized {
        let command =
            environment.isEmpty
            ? [Build.agent]
            : ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0)=\($1)" } + [Build.agent]
        let process = try Daemonized(
            wrapper + command + ["--config", config], log: "\(directory)/\(name).log", netns: namespace ?? netns)
        agents[name] = process
        return process
    }

    /// Writes a previous run's backlog into an agent's spool before it starts: `batches` one-second batches of ten
    /// 100 ms ticks of busy `lo` counters (an epoch of its own), ending `batches` seconds after `from` (ms), as the
    /// agent would have spooled them through an outage. About 100 bytes per batch on the wire: a backlog large enough
    /// to outlast the upload budget's one-second burst (16 KiB) without an outage of minutes in the test.
    ///
    /// `stream` and `firstOrdinal` make the backlogs of several earlier runs (each run its stream, after a reboot).
    func writeBacklog(
        _ agent: String, batches: Int, from first: Int64, stream: UInt64 = 0xB0B, firstOrdinal: Int = 1
    ) throws {
        let spool = "\(directory)/\(agent)/spool"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let descriptor = InterfaceDescriptor(
            id: 1, name: "lo", epoch: CounterEpoch(bootID: BootID(high: 7, low: stream), ifindex: 1, width: .bits64))
        let describe = Describe(stream: stream, interfaces: [descriptor])
        var generator = SplitMix64(seed: 42)
        var counters = CounterValues()
        for index in 0..<batches {
            let ticks = (0..<10).map { _ -> [UInt64] in
                counters[.rxBytes] += UInt64.random(in: 1_000...90_000, using: &generator)
                counters[.txBytes] += UInt64.random(in: 1_000...90_000, using: &generator)
                counters[.rxPackets] += UInt64.random(in: 10...900, using: &generator)
                counters[.txPackets] += UInt64.random(in: 10...900, using: &generator)
                return counters.values
            }
            let start = first + Int64(index) * 1_000
            let batch = WireBatch(
                stream: stream, sequence: UInt64(index + 1), order: UInt64(start), interval: 100, heartbeat: 0,
                timestamps: (0..<10).map { start + Int64($0) * 100 },
                sections: [BatchSection(descriptorID: 1, ticks: Array(0..<10), values: ticks.flatMap { $0 })])
            let name = String(format: "%020d.np2", firstOrdinal + index)
            try Data(WireCodec.encode(.describe(describe)) + WireCodec.encode(.batch(batch))).write(
                to: URL(fileURLWithPath: "\(spool)/\(name)"))
        }
    }

    /// The daemon's store, opened read-only as `netpulse` opens it.
    func store() throws -> any MetricStore {
        if let postgresql {
            let location = try PostgresLocation(url: postgresql)
            return try blocking { try await PostgresStore(location: location, access: .reader) }
        }
        return try SQLiteStore(path: storePath, readOnly: true)
    }

    /// Raw samples of one interface, as stored (in counter order).
    func samples(_ agent: String, _ interface: String) throws -> [RawSample] {
        guard postgresql != nil || FileManager.default.fileExists(atPath: storePath) else { return [] }
        let store = try store()
        return try blocking {
            guard
                let series = try await store.series().first(where: {
                    $0.kind == .interface && $0.agent == agent && $0.interface == InterfaceName(interface)
                })
            else { return [] }
            return try await store.samples(series: series.id, from: 0, to: .max)
        }
    }

    /// The agents the store knows.
    func storedAgents() throws -> [AgentRecord] {
        let store = try store()
        return try blocking { try await store.agents() }
    }

    /// Stops `agent` (streaming `lo` every 100 ms; its open batch goes to its spool), lets a second run deliver
    /// whatever is left, then checks what a user relies on after daemons were killed under it: every tick sampled
    /// before the stop is stored (no gap a lost batch would leave), none twice, and the rollups' total is the counter
    /// delta (every step counted once).
    func stopAndCheckEveryTickStoredOnce(
        _ agent: Daemonized, config: String, atLeast minimum: Int, name: String = "agent-1",
        restarts: [ClosedRange<Int64>] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(agent.stop() == 0, sourceLocation: sourceLocation)
        let stoppedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let leftover = Set(spooledFiles(name))
        let second = try startAgent(name, config: config)
        try eventually("second run connected") { second.output.contains("connected to netpulsed") }
        try eventually("first run's batches delivered", timeout: 30) {
            leftover.isDisjoint(with: spooledFiles(name))
        }
        #expect(second.stop() == 0, sourceLocation: sourceLocation)

        let samples = try self.samples(name, "lo").filter { $0.timestamp <= stoppedAt }
        #expect(samples.count > minimum, sourceLocation: sourceLocation)
        // A lost batch would leave a gap of four ticks or more; a late tick under load leaves at most two. While the
        // test had the agent killed and started again (`restarts`, ms), it sampled nothing.
        let gaps = zip(samples, samples.dropFirst()).filter { previous, next in
            !restarts.contains { $0.contains(previous.timestamp) && $0.contains(next.timestamp) }
        }.map { (length: $1.timestamp - $0.timestamp, after: $0.timestamp) }
        let largest = gaps.max { $0.length < $1.length }
        #expect(
            gaps.allSatisfy { $0.length <= 350 },
            "largest gap \(largest?.length ?? 0) ms after \(largest?.after ?? 0); restarts \(restarts)",
            sourceLocation: sourceLocation)
        let all = try self.samples(name, "lo")
        #expect(Set(all.map(\.timestamp)).count == all.count, "a sample stored twice", sourceLocation: sourceLocation)
        let store = try store()
        let total = try blocking {
            let series = try await store.series().first {
                $0.kind == .interface && $0.agent == name && $0.interface == "lo"
            }!
            return try await store.sums(level: .oneMinute, series: [series.id], from: 0, to: .max)[series.id]!
        }
        #expect(
            total.traffic[.rxBytes] == Int64(all.last!.counters[.rxBytes] - all.first!.counters[.rxBytes]),
            sourceLocation: sourceLocation)
    }

    /// Checks that the store's window figures for one interface are what one daemon on SQLite computes from the same
    /// traffic: the stored raw samples, batch by batch (their batch order, interval and heartbeat as the agent sent
    /// them; the heartbeat of ``writeAgentConfig``, 0, by default; the interface's link facts), are given to a fresh SQLite store in order, and every rollup level of the
    /// interface (the buckets window figures are read from: bytes, packets, errors, peaks, coverage) must read the same.
    func checkWindowFiguresMatchSQLite(
        agent: String, interface: String, interval: Int64, heartbeat: Int64 = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let shared = try store()
        let name = InterfaceName(interface)
        let (record, samples) = try blocking {
            let record = try await shared.series().first {
                $0.kind == .interface && $0.agent == agent && $0.interface == name
            }!
            return (record, try await shared.samples(series: record.id, from: 0, to: .max))
        }
        var batches = [IngestBatch]()
        var start = 0
        while start < samples.count {
            var end = start
            while end < samples.count && samples[end].order == samples[start].order { end += 1 }
            let group = samples[start..<end]
            // One section per counter epoch (a batch across a reboot holds two).
            var epochs = [CounterEpoch]()
            for sample in group where !epochs.contains(sample.epoch) { epochs.append(sample.epoch) }
            let sections = epochs.enumerated().map { index, epoch in
                let ticks = group.indices.filter { group[$0].epoch == epoch }.map { $0 - start }
                return BatchSection(
                    descriptorID: UInt32(index), ticks: ticks,
                    values: ticks.flatMap { group[start + $0].counters.values })
            }
            let wire = WireBatch(
                stream: 1, sequence: UInt64(batches.count + 1), order: UInt64(group.first!.order),
                interval: UInt64(interval), heartbeat: UInt64(heartbeat), timestamps: group.map(\.timestamp),
                sections: sections,
                linkStates: record.facts.map { facts in
                    sections.map { LinkStateRecord(descriptorID: $0.descriptorID, tick: $0.ticks[0], state: facts) }
                } ?? [])
            batches.append(
                IngestBatch(
                    agent: AgentIdentity(name: agent, hostname: agent, version: "replayed"), batch: wire,
                    descriptors: epochs.enumerated().map {
                        InterfaceDescriptor(id: UInt32($0.offset), name: name, epoch: $0.element)
                    }))
            start = end
        }
        let path = "\(directory)/replayed-\(agent).db"
        let single = try SQLiteStore(path: path)
        let replay = batches
        let (expected, actual) = try blocking {
            _ = try await single.ingest(replay, receivedAt: samples.last!.timestamp + 60_000)
            let replayed = try await single.series().first {
                $0.kind == .interface && $0.agent == agent && $0.interface == name
            }!
            var expected = [String]()
            var actual = [String]()
            for level in RollupLevel.standard {
                for bucket in try await single.buckets(level: level, series: [replayed.id], from: 0, to: .max)[
                    replayed.id] ?? []
                {
                    expected.append("\(level) \(bucket.start) \(bucket.values)")
                }
                for bucket in try await shared.buckets(level: level, series: [record.id], from: 0, to: .max)[record.id]
                    ?? []
                {
                    actual.append("\(level) \(bucket.start) \(bucket.values)")
                }
            }
            return (expected, actual)
        }
        #expect(expected.count >= RollupLevel.standard.count, sourceLocation: sourceLocation)
        #expect(actual == expected, sourceLocation: sourceLocation)
    }

    func spooledFiles(_ agent: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(directory)/\(agent)/spool")) ?? []).filter {
            $0.hasSuffix(".np2")
        }
    }

    func shutdown() {
        for agent in agents.values { agent.stop() }
        daemon?.stop()
    }

    deinit {
        shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
