import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseStore
import PulseStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

public func temporaryDirectory() -> String {
    var template = Array("/tmp/netpulse-reports-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}

/// One interface an agent samples: its name and link facts, and how many bytes per second it moves at `time`.
public struct TestInterface {
    public var name: String
    public var ifindex: UInt32
    public var kind: InterfaceKind = .physical
    public var speed: UInt32? = 1_000
    /// Received bytes per second at a time (sent is half of it).
    public var rate: @Sendable (Int64) -> UInt64
    /// Receive errors and transmit drops per sample.
    public var errors: UInt64 = 0
}

/// Builds batches the way an agent does (as PulseStoreTests' `BatchMaker`): one section per interface,
/// cumulative counters, increasing sequence numbers, the link facts at the first tick.
public struct TestAgent {
    public var identity: AgentIdentity
    public var interfaces: [TestInterface]
    public var stream: UInt64
    public var boot = BootID(high: 10, low: 20)

    /// Batches of consecutive ticks `times` (each batch `perBatch` ticks), sampled every `interval` ms; counters
    /// start at `start` totals and are returned updated.
    public func batches(
        times: [Int64], interval: UInt64, perBatch: Int, firstSequence: UInt64, totals: inout [Traffic]
    ) -> [IngestBatch] {
        var result = [IngestBatch]()
        var sequence = firstSequence
        var previous = times.first.map { $0 - Int64(interval) } ?? 0
        for chunk in stride(from: 0, to: times.count, by: perBatch) {
            let ticks = Array(times[chunk..<min(chunk + perBatch, times.count)])
            var sections = [BatchSection]()
            var links = [LinkStateRecord]()
            for (index, interface) in interfaces.enumerated() {
                var values = [UInt64]()
                var last = previous
                for time in ticks {
                    let seconds = UInt64(max(0, time - last)) / 1_000
                    let rx = interface.rate(time) * seconds
                    totals[index][.rxBytes] &+= rx
                    totals[index][.txBytes] &+= rx / 2
                    totals[index][.rxPackets] &+= rx / 1_000
                    totals[index][.txPackets] &+= rx / 2_000
                    totals[index][.rxErrors] &+= interface.errors
                    totals[index][.txDropped] &+= interface.errors * 2
                    last = time
                    var counters = CounterValues()
                    counters[.rxBytes] = totals[index][.rxBytes]
                    counters[.txBytes] = totals[index][.txBytes]
                    counters[.rxPackets] = totals[index][.rxPackets]
                    counters[.txPackets] = totals[index][.txPackets]
                    counters[.rxErrors] = totals[index][.rxErrors]
                    counters[.txDropped] = totals[index][.txDropped]
                    values += counters.values
                }
                sections.append(
                    BatchSection(descriptorID: UInt32(index + 1), ticks: Array(ticks.indices), values: values))
                links.append(
                    LinkStateRecord(
                        descriptorID: UInt32(index + 1), tick: 0,
                        state: LinkState(
                            speedMbps: interface.speed, operState: .up, carrier: true, mtu: 1_500,
                            kind: interface.kind)))
            }
            previous = ticks.last ?? previous
            let wire = WireBatch(
                stream: stream, sequence: sequence, interval: interval, timestamps: ticks, sections: sections,
                linkStates: links)
            let descriptors = interfaces.enumerated().map { index, interface in
                InterfaceDescriptor(
                    id: UInt32(index + 1), name: InterfaceName(interface.name),
                    epoch: CounterEpoch(bootID: boot, ifindex: interface.ifindex, width: .bits64))
            }
            result.append(IngestBatch(agent: identity, batch: wire, descriptors: descriptors))
            sequence += 1
        }
        return result
    }
}

/// A small fleet in a real SQLite store, ingested through `ingest(_:receivedAt:)`:
///
/// - `web-01` (`site=fra1`): `eth0` (1 Gbit/s, busy in the day), `p"q>` (100 Mbit/s), `lo` (not counted);
///   ten days of data.
/// - `a<b&c` (`site=p"q>`): `eth0` (10 Gbit/s); only the last two days, so longer ranges have gaps.
/// - `db-01` (`site=fra1`): `eth0` with errors and drops; ten days.
///
/// Samples every 5 minutes, every minute for the last three hours. `now` is 2025-11-23T14:05:30Z, a Sunday.
public struct Fleet: Sendable {
    public static let now: Int64 = 1_763_856_000_000 + 14 * 3_600_000 + 5 * 60_000 + 30_000
    public static let hostile = "a<b&c"
    public static let hostileInterface = "p\"q>"

    public let path: String
    public let store: SQLiteStore
    public let engine: WindowEngine

    /// Built once per test process.
    public static let shared = Task<Fleet, any Error> { try await make() }

    public static func make() async throws -> Fleet {
        let path = temporaryDirectory() + "/netpulse.db"
        let store = try SQLiteStore(path: path)
        let diurnal: @Sendable (UInt64) -> @Sendable (Int64) -> UInt64 = { base in
            { time in
                let hour = UInt64((time / 3_600_000) % 24)
                return base * (hour >= 8 && hour < 20 ? 3 : 1) + base * hour / 24
            }
        }
        let agents: [(TestAgent, Int64)] = [
            (
                TestAgent(
                    identity: AgentIdentity(
                        name: "web-01", hostname: "web-01", version: "0.2.0",
                        labels: Labels([(key: "site", value: "fra1")])),
                    interfaces: [
                        TestInterface(name: "eth0", ifindex: 2, rate: diurnal(2_000_000)),
                        TestInterface(name: hostileInterface, ifindex: 3, speed: 100, rate: diurnal(400_000)),
                        TestInterface(name: "lo", ifindex: 1, kind: .loopback, speed: nil, rate: diurnal(50_000)),
                    ], stream: 1), 10
            ),
            (
                TestAgent(
                    identity: AgentIdentity(
                        name: hostile, hostname: "evil", version: "0.2.0",
                        labels: Labels([(key: "site", value: hostileInterface)])),
                    interfaces: [TestInterface(name: "eth0", ifindex: 2, speed: 10_000, rate: diurnal(20_000_000))],
                    stream: 2), 2
            ),
            (
                TestAgent(
                    identity: AgentIdentity(
                        name: "db-01", hostname: "db-01", version: "0.2.0",
                        labels: Labels([(key: "site", value: "fra1")])),
                    interfaces: [TestInterface(name: "eth0", ifindex: 2, rate: diurnal(800_000), errors: 3)],
                    stream: 3), 10
            ),
        ]
        let end = now / 60_000 * 60_000
        let fine = end - 3 * 3_600_000
        for (agent, days) in agents {
            let start = fine - days * 86_400_000
            var totals = [Traffic](repeating: .zero, count: agent.interfaces.count)
            let coarse = Array(stride(from: start, to: fine, by: 300_000))
            var batches = agent.batches(
                times: coarse, interval: 300_000, perBatch: 288, firstSequence: 1, totals: &totals)
            batches += agent.batches(
                times: Array(stride(from: fine, through: end, by: 60_000)), interval: 60_000, perBatch: 60,
                firstSequence: UInt64(batches.count + 1), totals: &totals)
            for batch in batches {
                let outcome = try await store.ingest([batch], receivedAt: batch.lastTimestamp + 1_000)
                guard outcome == [.stored] else { throw TestFailure("batch \(batch.sequence) was \(outcome)") }
            }
        }
        return Fleet(path: path, store: store, engine: try await engine(store))
    }

    /// A window engine over `store` as the daemon makes one (standard levels and retention, UTC, billing day 1).
    public static func engine(_ store: SQLiteStore) async throws -> WindowEngine {
        let catalogue = try await Catalogue.load(from: store, rules: ScopeRules())
        return WindowEngine(
            store: store, catalogue: catalogue,
            levels: WindowEngine.retained(try await store.levels(), .standard), calendar: .utc,
            billing: BillingPolicy())
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a Python script with arguments and returns its standard output (standard error is passed through).
public func python(_ script: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
