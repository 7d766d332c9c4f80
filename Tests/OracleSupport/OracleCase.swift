import Foundation
import PulseAnalytics
import PulseCore
import PulseDaemon
import PulseSettings
import PulseStore
import TestSupport

/// A generated oracle case: what agents sampled and batched, the order batches reach the daemon in, and the
/// queries to answer. Written as JSON for `Tests/Oracle/oracle.py` and fed to the real store.
struct OracleCase {
    struct Section {
        var name: String
        var boot: BootID
        var ifindex: UInt32
        var width: CounterWidth
        /// (tick index in the batch, agent timestamp, eight rolled-up counters)
        var samples: [(tick: Int, time: Int64, counters: [UInt64])]
        /// (tick index, speed Mbit/s or 0, kind, relation)
        var links: [(tick: Int, speed: UInt32, kind: InterfaceKind, relation: InterfaceRelation)]
        /// When the epoch began at the earliest, as the agent's `DESCRIBE` says (`docs/protocol.md`); nil: unknown.
        var began: Int64? = nil
    }

    struct Batch {
        var agent: String
        var stream: UInt64
        var sequence: UInt64
        var order: UInt64
        var interval: Int64
        var heartbeat: Int64
        var received: Int64
        var sections: [Section]
        /// The labels the agent sent on the connection that carried the batch, when not its own (`agents`): a batch
        /// whose labels the daemon takes differently relabels the agent when it arrives.
        var labels: [(String, String)]? = nil
    }

    /// Each agent's name and the labels it sends (the daemon takes of them what its configuration allows).
    var agents: [(name: String, labels: [(String, String)])]
    /// In arrival order.
    var batches: [Batch]
    var now: Int64
    /// (from, to, resolution width)
    var windows: [(Int64, Int64, Int64)]
    /// Windows as the CLI and snapshots name them (`last-1h`, `today`, `this-month`, `billing-period` …): the oracle
    /// works out their bounds and resolution at `now` from the configuration, and so does the window engine.
    var namedWindows: [String] = []
    /// Top-N queries (`docs/windows.md`, "Top-N"): window, series kind (`interface`, `host`, `group`), ranking
    /// (`bytes`, `peak`, `p95`, `errors`) and how many.
    var top: [(from: Int64, to: Int64, kind: String, ranking: String, count: Int)] = []
    /// Times inside the billing periods to bill: each series by its own terms (`[billing]`, `[billing.NAME]`).
    var bills: [Int64]
    /// A time inside data that arrives after the period holding it closed (its bills get adjustments).
    var lateDataAt: Int64?
    /// The levels whose every bucket is compared (all are computed); nil: every level the configuration keeps.
    var bucketLevels: [Int64]?
    /// The daemon's configuration file (`docs/configuration.md`), which the store, the window engine, billing and
    /// the oracle all read: every setting the case counts with comes from it, or from its documented default.
    var config: String

    init(
        agents: [(name: String, labels: [(String, String)])], batches: [Batch], now: Int64,
        windows: [(Int64, Int64, Int64)], bills: [Int64], config: String = ""
    ) {
        self.agents = agents
        self.batches = batches
        self.now = now
        self.windows = windows
        self.bills = bills
        self.config = config
    }

    /// The daemon's configuration as netpulsed reads it.
    func daemonConfig() throws -> DaemonConfig {
        try DaemonConfig.parse(ConfigDocument(text: config, file: "case.toml"))
    }

    /// The store settings the case is counted with (no fsync per commit: durability is not what the cases test).
    func storeSettings() throws -> StoreSettings {
        var settings = try daemonConfig().store
        settings.synchronous = .normal
        return settings
    }

    /// The case as `Tests/Oracle/oracle.py` reads it; `passes` says when bills were kept and how many batches of the
    /// arrival order had arrived at each pass, so the oracle can say when and how each was issued (`docs/windows.md`,
    /// "Open and closed periods").
    func json(passes: [(now: Int64, batches: Int)] = []) -> String {
        func relation(_ value: InterfaceRelation) -> String {
            var names = [String]()
            if value.contains(.bondSlave) { names.append("\"bond_slave\"") }
            if value.contains(.bridgePort) { names.append("\"bridge_port\"") }
            return "[" + names.joined(separator: ",") + "]"
        }
        let batchesJSON = batches.map { batch in
            let sections = batch.sections.map { section in
                let samples = section.samples.map {
                    "[\($0.tick),\($0.time),[\($0.counters.map(String.init).joined(separator: ","))]]"
                }
                let links = section.links.map {
                    "[\($0.tick),\($0.speed),\"\(Self.kindNames[$0.kind]!)\",\(relation($0.relation))]"
                }
                return """
                    {"name":\(Self.string(section.name)),"boot":"\(section.boot)","ifindex":\(section.ifindex),"width":\(section.width.rawValue),\
                    \(section.began.map { "\"began\":\($0)," } ?? "")\
                    "samples":[\(samples.joined(separator: ","))],"links":[\(links.joined(separator: ","))]}
                    """
            }
            return """
                {"agent":\(Self.string(batch.agent)),"order":\(batch.order),"interval":\(batch.interval),"heartbeat":\(batch.heartbeat),\
                \(batch.labels.map { "\"labels\":{\($0.map { "\(Self.string($0.0)):\(Self.string($0.1))" }.joined(separator: ","))}," } ?? "")\
                "received":\(batch.received),"sections":[\(sections.joined(separator: ","))]}
                """
        }
        let agentsJSON = agents.map { agent in
            "{\"name\":\(Self.string(agent.name)),\"labels\":{\(agent.labels.map { "\(Self.string($0.0)):\(Self.string($0.1))" }.joined(separator: ","))}}"
        }
        let kept = passes.map { "[\($0.now),\($0.batches)]" }
        return """
            {"config":\(Self.string(config)),\
            "agents":[\(agentsJSON.joined(separator: ","))],"batches":[\(batchesJSON.joined(separator: ","))],\
            "queries":{"now":\(now),\(bucketLevels.map { "\"bucket_levels\":[\($0.map(String.init).joined(separator: ","))]," } ?? "")\
            "windows":[\(windows.map { "[\($0.0),\($0.1),\($0.2)]" }.joined(separator: ","))],\
            "named_windows":[\(namedWindows.map(Self.string).joined(separator: ","))],\
            "top":[\(top.map { "[\($0.from),\($0.to),\(Self.string($0.kind)),\(Self.string($0.ranking)),\($0.count)]" }.joined(separator: ","))],\
            "bills":[\(bills.map(String.init).joined(separator: ","))],"passes":[\(kept.joined(separator: ","))]}}
            """
    }

    /// Interface kinds as `docs/protocol.md` and `docs/configuration.md` spell them.
    static let kindNames: [InterfaceKind: String] = [
        .unknown: "unknown", .physical: "physical", .bond: "bond", .bridge: "bridge", .vlan: "vlan", .veth: "veth",
        .loopback: "loopback", .tunnel: "tunnel", .virtual: "virtual",
    ]

    /// `text` as a JSON string.
    static func string(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    /// The batches as the store receives them: each agent with the labels the daemon takes of what it sends
    /// (``DaemonConfig/effectiveLabels(agent:sent:ownLabels:)``).
    func ingestBatches() throws -> [(IngestBatch, received: Int64)] {
        let config = try daemonConfig()
        let sent = labelsByAgent
        return zip(batches, wireBatches).map { batch, made in
            let agent = AgentIdentity(
                name: made.agent, hostname: made.agent, version: "test",
                labels: config.effectiveLabels(
                    agent: made.agent, sent: batch.labels.map { Labels($0) } ?? sent[made.agent]!))
            return (IngestBatch(agent: agent, batch: made.batch, descriptors: made.descriptors), made.received)
        }
    }

    /// The labels each agent sends.
    var labelsByAgent: [String: Labels] {
        Dictionary(uniqueKeysWithValues: agents.map { ($0.name, Labels($0.labels.map { ($0.0, $0.1) })) })
    }

    /// The batches as agents send them, each with the descriptors of its sections (in section order; a section's
    /// descriptor id is its position in the batch).
    var wireBatches: [(agent: String, batch: WireBatch, descriptors: [InterfaceDescriptor], received: Int64)] {
        batches.map { batch in
            let ticks = Set(batch.sections.flatMap { $0.samples.map(\.tick) }).sorted()
            var times = [Int: Int64]()
            for section in batch.sections { for sample in section.samples { times[sample.tick] = sample.time } }
            let index = Dictionary(uniqueKeysWithValues: ticks.enumerated().map { ($1, $0) })
            var descriptors = [InterfaceDescriptor]()
            var sections = [BatchSection]()
            var links = [LinkStateRecord]()
            for (id, section) in batch.sections.enumerated() {
                descriptors.append(
                    InterfaceDescriptor(
                        id: UInt32(id), name: InterfaceName(section.name),
                        epoch: CounterEpoch(bootID: section.boot, ifindex: section.ifindex, width: section.width),
                        began: section.began))
                var values = [UInt64]()
                for sample in section.samples {
                    var counters = CounterValues()
                    for (lane, counter) in TrafficCounter.allCases.enumerated() {
                        counters[counter.source] = sample.counters[lane]
                    }
                    values += counters.values
                }
                sections.append(
                    BatchSection(
                        descriptorID: UInt32(id), ticks: section.samples.map { index[$0.tick]! }, values: values))
                for link in section.links {
                    links.append(
                        LinkStateRecord(
                            descriptorID: UInt32(id), tick: index[link.tick]!,
                            state: LinkState(
                                speedMbps: link.speed == 0 ? nil : link.speed, operState: .up, carrier: true,
                                mtu: 1_500,
                                kind: link.kind, relation: link.relation)))
                }
            }
            let wire = WireBatch(
                stream: batch.stream, sequence: batch.sequence, order: batch.order, interval: UInt64(batch.interval),
                heartbeat: UInt64(batch.heartbeat), timestamps: ticks.map { times[$0]! }, sections: sections,
                linkStates: links)
            return (batch.agent, wire, descriptors, batch.received)
        }
    }
}

/// Simulates agents sampling interfaces: traffic, wraps, resets, reboots, re-created interfaces, idle suppression,
/// outages, clocks that step, batching, and how batches travel (late, shuffled, lost).
struct CaseGenerator {
    struct Interface {
        var name: String
        var kind: InterfaceKind
        var relation: InterfaceRelation = []
        var width: CounterWidth = .bits64
        var speed: UInt32
        var ifindex: UInt32
        var counters = [UInt64](repeating: 0, count: 8)
        /// Mean bytes per second; 0 for an interface that is idle unless a burst says otherwise.
        var rate: UInt64
    }

    struct Agent {
        var name: String
        var labels: [(String, String)]
        var boot: BootID
        var interfaces: [Interface]
        var stream: UInt64
        var sequence: UInt64 = 0
        var order: UInt64 = 0
        /// Idle suppression state per interface: the last sample taken, whether it was sent, when it last was.
        var last: [String: (time: Int64, counters: [UInt64], epoch: String, sent: Bool, sentAt: Int64)] = [:]
        /// Whether the agent says when its epochs began (`epoch-start`), as a current agent does.
        var knowsStarts = true
        /// Each boot's time by the agent's clock, and each epoch's start as the agent gives it (`docs/protocol.md`).
        var bootTimes: [String: Int64] = [:]
        var began: [String: Int64] = [:]
        /// The epoch each interface was last sampled in.
        var epochOf: [String: String] = [:]
    }

    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func noise(_ mean: UInt64) -> UInt64 {
        guard mean > 0 else { return 0 }
        return mean / 2 + (random.next() as UInt64) % (mean + 1)
    }

    /// Advances an interface's counters by `seconds` of traffic at `scale` × its rate (wrapping at its width).
    mutating func advance(_ interface: inout Interface, seconds: Int64, scale: UInt64 = 1) {
        let bytes = [
            noise(interface.rate * scale) * UInt64(seconds), noise(interface.rate * scale / 3) * UInt64(seconds),
        ]
        let increments = [
            bytes[0], bytes[1], bytes[0] / 900, bytes[1] / 700, bytes[0] > 0 ? (random.next() as UInt64) % 3 : 0, 0,
            bytes[0] > 0 ? (random.next() as UInt64) % 2 : 0, 0,
        ]
        for lane in 0..<8 {
            interface.counters[lane] = interface.counters[lane] &+ increments[lane]
            if interface.width == .bits32 { interface.counters[lane] &= 0xFFFF_FFFF }
        }
    }
}
