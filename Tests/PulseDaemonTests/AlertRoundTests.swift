import Foundation
import PulseAnalytics
import PulseCore
import PulseQuery
import Testing

@testable import PulseDaemon
@testable import PulseSettings
@testable import PulseStore
@testable import PulseStoreSQLite

/// The alert round's figures, as the daemon takes them (the catalogue kept between rounds, the window read from the
/// buckets the store holds in memory), against a reference computed from the counters as `docs/alerts.md` words it:
/// each interface's bytes over the time its data covers in the buckets the window touches, summed over a scope's
/// interfaces (loopback not counted in a host, a group or the fleet).
@Suite struct AlertRoundTests {
    let day: Int64 = 1_763_856_000_000  // 2025-11-23T00:00:00Z

    struct Interface {
        var agent: String
        var site: String
        var name: String
        var kind: InterfaceKind
        var ifindex: UInt32
        /// Bytes received in the step that ends at second `t`; sent is a third of it.
        var rate: (Int) -> UInt64

        /// The counter at second `second`.
        func rx(through second: Int) -> UInt64 { second == 0 ? 0 : (1...second).reduce(0) { $0 + rate($1) } }
    }

    let interfaces = [
        Interface(agent: "web-01", site: "ams", name: "eth0", kind: .physical, ifindex: 2) {
            1_000 + UInt64($0 % 7) * 300
        },
        Interface(agent: "web-01", site: "ams", name: "lo", kind: .loopback, ifindex: 1) { 50_000 + UInt64($0) },
        Interface(agent: "web-02", site: "ams", name: "eth0", kind: .physical, ifindex: 2) {
            20_000 + UInt64($0 % 11) * 90
        },
        Interface(agent: "db-01", site: "fra", name: "bond0", kind: .bond, ifindex: 5) { $0 < 200 ? 500 : 9_000 },
    ]

    /// Minute `minute` of `interface` as its agent sends it: 60 one-second samples of cumulative counters.
    func batch(_ interface: Interface, minute: Int) -> IngestBatch {
        let agent = AgentIdentity(
            name: interface.agent, hostname: interface.agent, version: "0.2.0",
            labels: Labels([(key: "site", value: interface.site)]))
        let seconds = (0..<60).map { minute * 60 + $0 }
        let values = seconds.flatMap { second -> [UInt64] in
            var counters = CounterValues()
            counters[.rxBytes] = interface.rx(through: second)
            counters[.txBytes] = counters[.rxBytes] / 3
            counters[.rxPackets] = counters[.rxBytes] / 100
            return counters.values
        }
        let wire = WireBatch(
            stream: UInt64(interface.ifindex), sequence: UInt64(minute + 1), order: UInt64(minute + 1),
            interval: 1_000, heartbeat: 0, timestamps: seconds.map { day + Int64($0) * 1_000 },
            sections: [BatchSection(descriptorID: 1, ticks: Array(0..<60), values: values)],
            linkStates: [
                LinkStateRecord(
                    descriptorID: 1, tick: 0,
                    state: LinkState(speedMbps: 1_000, operState: .up, carrier: true, mtu: 1_500, kind: interface.kind))
            ])
        let descriptor = InterfaceDescriptor(
            id: 1, name: InterfaceName(interface.name),
            epoch: CounterEpoch(bootID: BootID(high: 1, low: 2), ifindex: interface.ifindex, width: .bits64))
        return IngestBatch(agent: agent, batch: wire, descriptors: [descriptor])
    }

    /// The reference: bytes (rx, tx) per second of coverage over the minutes the window touches at `now`, of steps
    /// that start in them (steps are one second, between consecutive samples of minutes `0..<minutes`).
    func reference(_ interface: Interface, minutes: Int, now: Int64, window: Int64) -> (rx: Double, tx: Double)? {
        let first = Int((now - window - day) / 60_000)
        let last = Int((now - day) / 60_000)
        var rx = 0.0
        var tx = 0.0
        var covered = 0.0
        for start in (first * 60)..<((last + 1) * 60) where start + 1 < minutes * 60 {
            let received = Double(interface.rx(through: start + 1) - interface.rx(through: start))
            rx += received
            tx += Double(interface.rx(through: start + 1) / 3 - interface.rx(through: start) / 3)
            covered += 1
        }
        guard covered > 0 else { return nil }
        return (rx * 8 / covered, tx * 8 / covered)
    }

    @Test func figuresOfEveryScopeAreTheReferencesRoundAfterRound() async throws {
        let directory = NSTemporaryDirectory() + "netpulse-alert-round-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Every rule breaches at once and stays pending for an hour: each round stores every figure it took.
        let text = """
            [daemon]
            state_directory = "\(directory)"
            [alerts]
            directory = "\(directory)/alerts"
            [alert.In]
            expr = "rate_in > 1bit/s"
            window = "3m"
            for = "1h"
            interfaces = ["*"]
            [alert.Host]
            expr = "rate > 1bit/s"
            window = "3m"
            for = "1h"
            scope = "host"
            [alert.Site]
            expr = "rate > 1bit/s"
            window = "3m"
            for = "1h"
            scope = "group"
            [alert.Fleet]
            expr = "rate_out > 1bit/s"
            window = "3m"
            for = "1h"
            scope = "fleet"
            """
        let config = try DaemonConfig.parse(ConfigDocument(text: text, file: "netpulsed.toml"))
        let store = try SQLiteStore(path: config.storePath, settings: config.store)
        let evaluation = AlertEvaluation(store: store, config: config)
        var sent = 0
        for (round, minutes) in [4, 7, 8].enumerated() {
            for minute in sent..<minutes {
                _ = try await store.ingest(interfaces.map { batch($0, minute: minute) }, receivedAt: day + 3_600_000)
            }
            sent = minutes
            let now = day + Int64(minutes) * 60_000 + 10_000
            try await evaluation.round(at: now, config: config)
            let from = RollupLevel.oneMinute.bucketStart(now - 180_000)
            #expect(store.recent.covers(level: .oneMinute, from: from), "round \(round): the window is held")

            let catalogue = try await Catalogue.load(from: store, rules: config.store.rules)
            var figures = [String: Double]()
            for instance in try await store.alertInstances() {
                let series = try #require(catalogue[instance.series])
                let name = [series.agent, series.interface?.description, series.group?.description]
                    .compactMap { $0 }.joined(separator: "/")
                figures["\(instance.rule) \(name)"] = instance.value
            }
            func rates(_ chosen: [Interface]) -> (rx: Double, tx: Double) {
                chosen.compactMap { reference($0, minutes: minutes, now: now, window: 180_000) }
                    .reduce((0.0, 0.0)) { ($0.0 + $1.rx, $0.1 + $1.tx) }
            }
            let counted = interfaces.filter { $0.kind != .loopback }
            var expected = [String: Double]()
            for interface in interfaces {
                expected["In \(interface.agent)/\(interface.name)"] = rates([interface]).rx
            }
            for agent in Set(interfaces.map(\.agent)) {
                let (rx, tx) = rates(counted.filter { $0.agent == agent })
                expected["Host \(agent)"] = max(rx, tx)
            }
            for site in ["ams", "fra"] {
                let (rx, tx) = rates(counted.filter { $0.site == site })
                expected["Site site=\(site)"] = max(rx, tx)
            }
            expected["Fleet "] = rates(counted).tx
            #expect(Set(figures.keys) == Set(expected.keys), "round \(round)")
            for (key, value) in expected {
                let figure = try #require(figures[key], "round \(round): \(key)")
                #expect(abs(figure - value) <= value * 1e-9, "round \(round): \(key) \(figure) against \(value)")
            }
        }
    }
    /// A dashboard page's shared sums (`WindowEngine.sharingSums`) give each panel exactly what a read of its own
    /// gives, whatever it asks in which order: overlapping sets of series, fields within the shared ones or not.
    @Test func sharedSumsAreWhatEachReadWouldGive() async throws {
        let directory = NSTemporaryDirectory() + "netpulse-sums-memo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try DaemonConfig.parse(
            ConfigDocument(text: "[daemon]\nstate_directory = \"\(directory)\"\n", file: "netpulsed.toml"))
        let store = try SQLiteStore(path: config.storePath, settings: config.store)
        for minute in 0..<8 {
            _ = try await store.ingest(interfaces.map { batch($0, minute: minute) }, receivedAt: day + 3_600_000)
        }
        let plain = try await config.windowEngine(over: store)
        let shared = plain.sharingSums()
        let all = plain.catalogue.series.map(\.id)
        let interfaces = plain.catalogue.interfaces.map(\.id)
        let requests: [([Int64], BucketFields)] = [
            (Array(interfaces.prefix(2)), [.coverage, .peaks]), (interfaces, [.bytes, .coverage]),
            (all, [.bytes]), (interfaces.reversed(), [.coverage]), (all, .all), (all, [.bytes, .coverage, .peaks]),
        ]
        for window in [Window(from: day, to: day + 480_000), Window(from: day + 120_000, to: day + 300_000)] {
            for (ids, fields) in requests {
                let now = day + 500_000
                let expected = try await plain.sums(ids, window: window, now: now, fields: fields)
                #expect(!expected.isEmpty)
                #expect(
                    try await shared.sums(ids, window: window, now: now, fields: fields) == expected,
                    "\(ids.count) series, \(fields), \(window)")
            }
        }
    }
}
