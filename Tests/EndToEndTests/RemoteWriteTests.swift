import Foundation
import PulseAnalytics
import PulseCore
import PulseStore
import Testing

extension EndToEnd {
    /// `[remote_write]`: the daemon forwards each interface's reset-corrected counters to a real Prometheus, and
    /// to a receiver of the test's own (Tests/Tools/remote_write_receiver.py, which decodes the wire format by
    /// itself) that answers with errors first.
    @Suite(.serialized) struct RemoteWriteTests {
        static let receiverScript = Build.root + "/Tests/Tools/remote_write_receiver.py"
        /// 10-second buckets, so a test sees several forwarded in seconds.
        static let levels = "[rollups]\nlevels = [\"10s\", \"1m\", \"5m\", \"1h\", \"1d\"]\n"

        static func remoteWrite(_ url: String) -> String {
            "[remote_write]\nurl = \"\(url)\"\ninterval = \"1s\"\ndelay = \"2s\"\nbackfill = \"1m\"\n"
        }

        /// Known traffic over a veth pair, the pair deleted and made again, more traffic: then Prometheus holds, for
        /// the interface, a receive counter equal to what the kernel counted in both lives of the interface (each
        /// from the counter the agent first sampled), and it never went down.
        @Test(
            .enabled(if: isRoot, "needs root to create network namespaces"),
            .enabled(if: SelfMonitoringTests.available, "run scripts/test.sh: it unpacks Debian's Prometheus"),
            .timeLimit(.minutes(3)))
        func prometheusHoldsTheKernelsCounters() throws {
            let network = try TestNetwork()
            let fleet = try Fleet(netns: network.host)
            let prometheus = try Prometheus(receiving: true, in: fleet.directory, netns: network.host)
            defer { prometheus.stop() }
            try fleet.editDaemonConfig {
                $0 + "\n" + Self.levels + Self.remoteWrite("http://127.0.0.1:\(prometheus.port)/api/v1/write")
                    + "\n[labels]\nfrom_agents = [\"site\"]\n"
            }
            try fleet.startDaemon()
            let config = try fleet.writeAgentConfig(
                "agent-1", interval: "100ms", batch: "500ms", include: #"["npv0"]"#,
                extra: "[labels]\nsite = \"lab-1\"\n")
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            try eventually("first samples stored", timeout: 20) { try !fleet.samples("agent-1", "npv0").isEmpty }
            try network.sendTraffic(bytes: 4 << 20)

            // The interface is deleted and made again (counters from zero), then more traffic: the forwarded
            // counter carries on from where it was.
            let first = try #require(try fleet.samples("agent-1", "npv0").first)
            var beforeRecreate: UInt64 = 0
            try eventually("the first interface's last counters stored", timeout: 20) {
                beforeRecreate = try network.kernelCounters()["npv0"]![Counter.rxBytes.rawValue]
                return try fleet.samples("agent-1", "npv0").last?.counters[.rxBytes] == beforeRecreate
            }
            try network.recreateVeth()
            var second: RawSample?
            try eventually("the new interface sampled", timeout: 20) {
                second = try fleet.samples("agent-1", "npv0").first { $0.epoch != first.epoch }
                return second != nil
            }
            try network.sendTraffic(bytes: 4 << 20)
            let counted = beforeRecreate - first.counters[.rxBytes]
            let query = #"netpulse_interface_receive_bytes_total{agent="agent-1",interface="npv0",site="lab-1"}"#
            var expected: UInt64 = 0
            try eventually("Prometheus holds the kernel's counters", timeout: 60, interval: 0.5) {
                let now = try network.kernelCounters()["npv0"]![Counter.rxBytes.rawValue]
                expected = counted + now - second!.counters[.rxBytes]
                return try prometheus.value(query) == Double(expected)
            }
            #expect(expected >= 8 << 20)
            // The rate series went along, and the counter never went down (no resets in Prometheus' eyes).
            #expect(try prometheus.value("max_over_time(netpulse_interface_receive_bits_per_second[5m])") > 0)
            #expect(try prometheus.value("resets(\(query)[5m])") == 0)
            #expect(agent.stop() == 0)
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
        }

        /// A receiver that answers 500 twice: the same request goes again until it is taken, and every bucket's
        /// sample arrives; the last counter equals what the store counted.
        @Test(.timeLimit(.minutes(2)))
        func errorsAreRetriedAndNothingIsLost() throws {
            let (fleet, receiver, agent) = try Self.forwardingLoopback(statuses: [500, 500])
            try eventually("requests after the errors", timeout: 60, interval: 0.5) {
                try receiver.requests().filter { $0.status == 200 }.count >= 4
            }
            #expect(agent.stop() == 0)
            let stoppedAt = WallClock.system.now()
            // Once the agent's last batches are in, the last sample sent equals the store's count of lo's bytes.
            let store = try fleet.store()
            let series = try #require(
                try blocking { try await store.series() }.first { $0.interface == InterfaceName("lo") })
            func counter() throws -> [Receiver.Sample] {
                try receiver.requests().filter { $0.status == 200 }.flatMap(\.series).filter {
                    $0.labels["__name__"] == "netpulse_interface_receive_bytes_total" && $0.labels["interface"] == "lo"
                }.flatMap(\.samples)
            }
            var counted: Int64 = 0
            try eventually("the last sample holds every byte stored", timeout: 30, interval: 0.5) {
                let buckets = try blocking {
                    try await store.buckets(level: RollupLevel(width: 10_000), series: [series.id], from: 0, to: .max)
                }
                counted = buckets[series.id, default: []].reduce(Int64(0)) { $0 + $1.values.traffic[.rxBytes] }
                return try counter().last?.value == Double(counted)
            }
            #expect(counted > 0)
            let requests = try receiver.requests()
            #expect(requests.allSatisfy { $0.error == nil }, "\(requests.compactMap(\.error))")
            #expect(requests.allSatisfy { $0.encoding == "snappy" && $0.version == "0.1.0" })
            #expect(requests.allSatisfy { $0.contentType == "application/x-protobuf" })
            #expect(requests.prefix(3).map(\.status) == [500, 500, 200])
            // The refused request went again, unchanged.
            #expect(requests[0].series == requests[1].series && requests[1].series == requests[2].series)
            // Every 10-second bucket while the agent ran, once, in order; the counter never went down.
            let samples = try counter()
            let times = samples.map(\.timestamp)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
            let running = times.filter { $0 <= stoppedAt - 10_000 }
            #expect(running.count >= 3)
            #expect(zip(running, running.dropFirst()).allSatisfy { $1 - $0 == 10_000 }, "\(running)")
            #expect(zip(samples, samples.dropFirst()).allSatisfy { $1.value >= $0.value })
            #expect(fleet.daemon!.stop() == 0, "netpulsed:\n\(fleet.daemon!.output)")
        }

        /// A receiver that answers 400 (it will never take those samples): the request is not sent again, the
        /// daemon says so, and the next passes go on.
        @Test(.timeLimit(.minutes(2)))
        func aRefusedRequestIsNotRetried() throws {
            let (fleet, receiver, agent) = try Self.forwardingLoopback(statuses: [400])
            try eventually("requests after the refusal", timeout: 60, interval: 0.5) {
                try receiver.requests().filter { $0.status == 200 }.count >= 2
            }
            let requests = try receiver.requests()
            #expect(requests[0].status == 400)
            let refused = Set(requests[0].series.flatMap { $0.samples.map(\.timestamp) })
            let later = Set(requests.dropFirst().flatMap(\.series).flatMap { $0.samples.map(\.timestamp) })
            #expect(refused.isDisjoint(with: later), "refused samples were sent again")
            #expect(fleet.daemon!.output.contains("refused"), "\(fleet.daemon!.output)")
            #expect(agent.stop() == 0)
            #expect(fleet.daemon!.stop() == 0)
        }

        /// A daemon forwarding to a receiver answering `statuses` first, and an agent sampling lo into it.
        static func forwardingLoopback(statuses: [Int]) throws -> (Fleet, Receiver, Daemonized) {
            let fleet = try Fleet()
            let receiver = try Receiver(directory: fleet.directory, statuses: statuses)
            try fleet.editDaemonConfig { $0 + "\n" + Self.levels + Self.remoteWrite(receiver.url) }
            try fleet.startDaemon()
            let config = try fleet.writeAgentConfig("agent-1", interval: "100ms", batch: "500ms", include: #"["lo"]"#)
            let agent = try fleet.startAgent("agent-1", config: config)
            try eventually("agent connected") { agent.output.contains("connected to netpulsed") }
            return (fleet, receiver, agent)
        }

        /// Tests/Tools/remote_write_receiver.py on 127.0.0.1, answering with `statuses` first, then 200.
        final class Receiver {
            let process: Daemonized
            let log: String
            let url: String

            struct Request {
                var status: Int
                var encoding: String?
                var contentType: String?
                var version: String?
                var error: String?
                var series: [Series]
            }

            struct Series: Equatable {
                var labels: [String: String]
                var samples: [Sample]
            }

            struct Sample: Equatable {
                var timestamp: Int64
                var value: Double
            }

            init(directory: String, statuses: [Int]) throws {
                log = directory + "/remote-write.jsonl"
                let portFile = directory + "/remote-write.port"
                process = try Daemonized(
                    [
                        "/usr/bin/python3", RemoteWriteTests.receiverScript, "--port-file", portFile, "--log", log,
                        "--statuses", statuses.map(String.init).joined(separator: ","),
                    ], log: directory + "/remote-write.out")
                try eventually("the receiver listens") { FileManager.default.fileExists(atPath: portFile) }
                url = "http://127.0.0.1:\(try String(contentsOfFile: portFile, encoding: .utf8))/api/v1/write"
            }

            /// Every request received so far, in order.
            func requests() throws -> [Request] {
                guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
                return try text.split(separator: "\n").map { line in
                    let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                    let series = (entry["series"] as? [[String: Any]] ?? []).map { item in
                        Series(
                            labels: item["labels"] as? [String: String] ?? [:],
                            samples: (item["samples"] as? [[Any]] ?? []).map { pair in
                                Sample(
                                    timestamp: (pair[0] as! NSNumber).int64Value,
                                    value: (pair[1] as! NSNumber).doubleValue)
                            })
                    }
                    return Request(
                        status: entry["status"] as! Int, encoding: entry["content_encoding"] as? String,
                        contentType: entry["content_type"] as? String, version: entry["version"] as? String,
                        error: entry["error"] as? String, series: series)
                }
            }

            deinit { process.killHard() }
        }
    }
}
