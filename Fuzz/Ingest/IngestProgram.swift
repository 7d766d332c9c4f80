import Dispatch
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseSettings
import PulseStore
import PulseStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// One run of the stateful fuzz target: the fuzzer's bytes read as a program of three agents, each with runs
/// (streams) and interfaces whose counters only grow, making batches from their history and sending them through
/// their connections' state machines, in order or late or again, with timestamps anywhere from 1970 to 2⁶² and
/// counts up to the top of a 64-bit counter, and the daemon committing what the connections hand over into a real
/// SQLite store in a temporary directory.
///
/// After the program: nothing trapped; each connection holds no more references than interfaces described; and
/// each interface's buckets at every level plus its unplaced counts equal what its stored samples counted (its
/// counters only grow, so every step counts `after − before` and the steps add up to the last stored sample's
/// counters minus the first's).
struct IngestProgram {
    static let agents = ["fuzz-a", "fuzz-b", "fuzz-c"]
    static let names: [InterfaceName] = [
        "eth0", "a<b&c", InterfaceName(bytes: [0x6E, 0xFF, 0xFE]), "bond0", "x/y", InterfaceName(bytes: [0x65, 0x1B]),
    ]

    struct Agent {
        var machine: ConnectionStateMachine?
        /// Per stream: its next sequence number.
        var sequences: [UInt64] = [1, 1, 1]
        var nextOrder: UInt64 = 1
        var counters = [[UInt64]](repeating: [UInt64](repeating: 0, count: Counter.count), count: 6)
        /// Batches made, by (stream, sequence), to send any number of times in any order.
        var made: [(stream: UInt64, batch: WireBatch, describe: Describe)] = []
    }

    var bytes: [UInt8]
    var index = 0
    var agents = Self.agents.map { _ in Agent() }
    var now: Int64 = 1_790_812_800_000  // 2026-10-01T00:00:00Z
    var pending: [IngestBatch] = []
    /// Per interface (agent, name): the smallest and largest counters of a batch the store took, lane by lane.
    var stored: [String: (first: [UInt64], last: [UInt64])] = [:]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Reading the program

    var isAtEnd: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func word() -> UInt64 { (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) } }

    /// A time chosen from the ones that matter: near now, a little or weeks late, 1970, the latest the protocol takes,
    /// just past it, 2⁶², years ahead, or any.
    mutating func time() -> Int64 {
        switch byte() % 9 {
        case 0: now - Int64(byte()) * 1_000
        case 1: now - Int64(byte()) * 86_400_000
        case 2: Int64(byte()) * 1_000
        case 3: BatchRules.latestTimestamp - Int64(byte())
        case 4: BatchRules.latestTimestamp + 1
        case 5: (1 << 62) - 1 - Int64(byte())
        case 6: now + 3 * 365 * 86_400_000
        case 7: Int64(bitPattern: word() >> 2)
        default: now + Int64(byte()) * 60_000
        }
    }

    // MARK: Running it

    /// Runs the program against a fresh store in a temporary directory; traps (a failed invariant) if it breaks.
    mutating func run() throws {
        let directory = Self.temporaryDirectory()
        defer { Self.removeDirectory(directory) }
        let store = try SQLiteStore(path: directory + "/netpulse.db", settings: StoreSettings(synchronous: .normal))
        var steps = 0
        while !isAtEnd && steps < 400 {
            steps += 1
            let agentIndex = Int(byte()) % agents.count
            switch byte() % 8 {
            case 0: connect(agentIndex)
            case 1: describe(agentIndex)
            case 2: make(agentIndex)
            case 3, 4: send(agentIndex)
            case 5: labels(agentIndex)
            case 6: try commit(store)
            default: garbage(agentIndex)
            }
            checkConnections()
        }
        try commit(store)
        try checkTotals(store)
        if getenv("NETPULSE_FUZZ_VERBOSE") != nil {
            let totals = try Self.blocking { try await store.totals() }
            print(
                "\(steps) op(s): \(totals.batches) batch(es) stored, \(stored.count) interface(s), \(totals.unplacedSteps) unplaced step(s)"
            )
        }
    }

    mutating func connect(_ agent: Int) {
        var machine = ConnectionStateMachine(
            daemonName: "fuzz", agentLimits: AgentLimits(interfaces: 5, streams: 2))
        _ = machine.tlsEstablished(certificateName: Self.agents[agent])
        let capabilities: Capabilities = byte() % 2 == 0 ? .all : [.pace, .linkState, .reject]
        let hostname = byte() % 5 == 0 ? "host\u{0}\(agent)" : "host-\(agent)"
        agents[agent].machine = machine
        deliver(
            agent,
            .hello(
                Hello(agentID: Self.agents[agent], hostname: hostname, agentVersion: "fuzz", capabilities: capabilities)
            ))
    }

    func descriptors(_ agent: Int) -> [InterfaceDescriptor] {
        Self.names.enumerated().map { position, name in
            InterfaceDescriptor(
                id: UInt32(position + 1), name: name,
                epoch: CounterEpoch(bootID: BootID(high: UInt64(agent) + 1, low: 7), ifindex: 2, width: .bits64))
        }
    }

    mutating func describe(_ agent: Int) {
        let stream = UInt64(byte() % 3) + 1
        let chosen = descriptors(agent).filter { _ in byte() % 3 != 0 }
        deliver(agent, .describe(Describe(stream: stream, interfaces: chosen)))
    }

    /// Makes the agent's next batch (history, not yet sent): counters only grow, orders only increase.
    mutating func make(_ agent: Int) {
        let stream = UInt64(byte() % 3) + 1
        let ticks = Int(byte() % 6) + 1
        var first = time()
        if first < 0 { first = 0 }
        let step = Int64([1_000, 1, 86_400_000, 3_600_000][Int(byte() % 4)])
        let timestamps = (0..<ticks).map { Saturating.sum(first, Int64($0) * step) }
        var sections = [BatchSection]()
        for (position, _) in Self.names.enumerated() where byte() % 2 == 0 {
            var values = [UInt64]()
            for _ in 0..<ticks {
                for lane in 0..<Counter.count {
                    let increment: UInt64 =
                        switch byte() % 5 {
                        case 0: 0
                        case 1: UInt64(byte())
                        case 2: UInt64(byte()) << 20
                        case 3: UInt64(byte()) << 40
                        default: UInt64(byte()) << 54
                        }
                    // Counters stay below 2⁶³ in all, so every step's count is exact (no clamp).
                    let current = agents[agent].counters[position][lane]
                    agents[agent].counters[position][lane] = min(current &+ increment, current | (1 << 62))
                    values.append(agents[agent].counters[position][lane])
                }
            }
            sections.append(BatchSection(descriptorID: UInt32(position + 1), ticks: Array(0..<ticks), values: values))
        }
        guard !sections.isEmpty else { return }
        let sequence = agents[agent].sequences[Int(stream) - 1]
        agents[agent].sequences[Int(stream) - 1] += 1
        let order = agents[agent].nextOrder
        agents[agent].nextOrder += UInt64(byte()) + 1
        let batch = WireBatch(
            stream: stream, sequence: sequence, order: order, droppedBefore: byte() == 255 ? .max : 0,
            interval: UInt64(step), heartbeat: byte() % 2 == 0 ? 0 : 60_000, timestamps: timestamps,
            sections: sections)
        let describe = Describe(
            stream: stream, interfaces: descriptors(agent).filter { d in sections.contains { $0.descriptorID == d.id } }
        )
        agents[agent].made.append((stream, batch, describe))
    }

    /// Sends one batch of the agent's history (the oldest, or any: late, out of order, again), described first
    /// unless the program says otherwise.
    mutating func send(_ agent: Int) {
        let made = agents[agent].made
        guard !made.isEmpty else { return }
        let chosen = made[Int(byte()) % made.count]
        if byte() % 4 != 0 { deliver(agent, .describe(chosen.describe)) }
        deliver(agent, .batch(chosen.batch))
    }

    mutating func labels(_ agent: Int) {
        let pairs: [(key: String, value: String)] = [
            ("site", "fra\(byte() % 4)"), ("team", byte() % 3 == 0 ? "x\nteam=ops" : "ops"),
        ]
        deliver(agent, .labels(Labels(Array(pairs.prefix(Int(byte() % 3))))))
    }

    mutating func garbage(_ agent: Int) {
        let count = Int(byte() % 24) + 1
        var frame = [UInt8]()
        for _ in 0..<count { frame.append(byte()) }
        handle(agent, agents[agent].machine?.frameReceived(frame))
    }

    mutating func deliver(_ agent: Int, _ message: WireMessage) {
        handle(agent, agents[agent].machine?.frameReceived(Self.body(message)))
    }

    mutating func handle(_ agent: Int, _ action: ConnectionStateMachine.Action?) {
        guard let action else { return }
        switch action {
        case .ingest(let identity, let batch, let descriptors):
            pending.append(IngestBatch(agent: identity, batch: batch, descriptors: descriptors))
        case .fail, .close:
            agents[agent].machine = nil
        default:
            break
        }
    }

    /// Commits what the connections handed over, as the ingest service does: all at once, or one by one when the
    /// store refuses one; then the clock moves on (or back).
    mutating func commit(_ store: SQLiteStore) throws {
        let batches = pending
        pending.removeAll()
        for index in agents.indices {
            for _ in batches where agents[index].machine != nil { agents[index].machine?.batchCompleted() }
        }
        guard !batches.isEmpty else { return }
        let receivedAt = now
        let outcomes: [IngestOutcome?]
        if let all = try? Self.blocking({ try await store.ingest(batches, receivedAt: receivedAt) }) {
            outcomes = all
        } else {
            outcomes = batches.map { batch in
                (try? Self.blocking({ try await store.ingest([batch], receivedAt: receivedAt) }))?.first
            }
        }
        for (batch, outcome) in zip(batches, outcomes) where outcome == .stored {
            for section in batch.sections {
                let key = "\(batch.agent.name)/\(section.descriptor.name)"
                let values = try SeriesChunk.decode(section.chunk).values
                let firstSample = Array(values[0..<Counter.count])
                let lastSample = Array(values[(values.count - Counter.count)...])
                let known = stored[key]
                stored[key] = (
                    zip(known?.first ?? firstSample, firstSample).map { min($0, $1) },
                    zip(known?.last ?? lastSample, lastSample).map { max($0, $1) }
                )
            }
        }
        switch byte() % 4 {
        case 0: now += 1_000
        case 1: now += 3_600_000
        case 2: now += 20 * 86_400_000
        default: now -= 3_600_000
        }
    }

    /// What a connection keeps is bounded by what was described on it.
    func checkConnections() {
        for agent in agents {
            guard let machine = agent.machine else { continue }
            precondition(
                machine.keptReferences <= machine.keptDescriptors,
                "references beyond the descriptors: \(machine.keptReferences) > \(machine.keptDescriptors), \(machine.capabilities)"
            )
            precondition(machine.keptDescriptors <= 3 * Self.names.count, "descriptors beyond what was described")
        }
    }

    /// Every level's buckets plus the unplaced counts equal what the stored samples counted.
    func checkTotals(_ store: SQLiteStore) throws {
        let series = try Self.blocking { try await store.series() }.filter { $0.kind == .interface }
        let ids = series.map(\.id)
        let unplaced = try Self.blocking { try await store.unplaced(series: ids, from: .min, to: .max) }
        for level in RollupLevel.standard {
            let sums = try Self.blocking { try await store.sums(level: level, series: ids, from: .min, to: .max) }
            for record in series {
                guard let agent = record.agent, let interface = record.interface,
                    let ends = stored["\(agent)/\(interface)"]
                else { continue }
                for (lane, counter) in TrafficCounter.allCases.enumerated() {
                    let source = counter.source.rawValue
                    let counted = Int64(ends.last[source] - ends.first[source])
                    let placed = sums[record.id]?.traffic[lane] ?? 0
                    let apart = unplaced[record.id]?.traffic[lane] ?? 0
                    precondition(
                        placed &+ apart == counted,
                        "\(agent)/\(interface) \(counter.name) at \(level): \(placed) in buckets + \(apart) unplaced, counted \(counted)"
                    )
                }
            }
        }
    }

    // MARK: Plumbing

    static func body(_ message: WireMessage) -> [UInt8] { Array(WireCodec.encode(message).dropFirst(4)) }

    /// Runs async store calls from the fuzzer's thread (never one of the concurrency pool's).
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Box<T>()
        Task {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            semaphore.signal()
        }
        semaphore.wait()
        return try box.result!.get()
    }

    final class Box<T>: @unchecked Sendable {
        var result: Result<T, any Error>?
    }

    static func temporaryDirectory() -> String {
        var template = Array("/tmp/netpulse-fuzz-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func removeDirectory(_ path: String) {
        for name in (try? FileIO.listDirectory(path)) ?? [] { unlink("\(path)/\(name)") }
        rmdir(path)
    }
}
