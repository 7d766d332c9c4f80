import Foundation
import PulseCore
import PulseDaemon
import PulseQuery
import Synchronization

/// The same fleet's samples pushed into Prometheus 2.42's remote-write receiver (Debian's package, started here on
/// loopback with its default settings), at saturation: what Prometheus takes on this machine, measured in the same
/// run as the daemons rather than quoted.
///
/// Every agent's batch becomes one remote-write request of the same samples: its 16 interfaces × 16 counters are 256
/// series (`netpulse_bench_<counter>_total{agent, interface}`), each with the batch's 10 samples, 2,560 samples in
/// all, as the ingest benchmark's 2,560 counter values. Requests are made and snappy-compressed in advance, as the
/// daemons' batches are (encoding is the sender's work). Several senders on kept-alive connections each own a share
/// of the agents and send each agent's requests in time order (Prometheus refuses a sample older than its series'
/// newest); a sample counts once Prometheus answered its request with 2xx.
enum PrometheusReceiverBench {
    struct Result {
        var samples = 0
        var seconds = 0.0
        var cpuSeconds = 0.0
        var latencies: [UInt64] = []
        var refusedRequests = 0
        var firstRefusal: String?
        var exhausted = false
        var seriesHeld = ""
    }

    static func run(prometheus binary: String, names: [String], seconds: Int, senders: Int = 8) throws -> Result {
        let directory = NSTemporaryDirectory() + "netpulse-bench-prometheus-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = try Daemon.freePort()
        let server = try RemoteWriteBench.startPrometheus(binary, directory: directory, port: port)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try blocking { try await RemoteWriteBench.waitUntilReady(port: port) }

        // More than Prometheus took here before (2.7 million samples a second), through warm-up and measurement,
        // in a span of ticks well inside the hour Prometheus' head accepts behind its newest sample.
        let warmUp = 3
        let perRequest = IngestBench.valuesPerBatch
        let batches = max(2, 5_000_000 * (seconds + warmUp) / (names.count * perRequest))
        let firstTick =
            WallClock.system.now() / 1_000 * 1_000 - Int64(batches * IngestBench.ticksPerBatch + 60) * 1_000
        print("preparing \(names.count) agents × \(batches) remote-write requests of \(perRequest) samples …")
        let requests = prepare(names: names, batches: batches, firstTick: firstTick, port: port)

        let measuring = Atomic<Bool>(false)
        let stop = Atomic<Bool>(false)
        let tally = Mutex(Result())
        let finished = DispatchSemaphore(value: 0)
        for sender in 0..<senders {
            let thread = Thread {
                defer { finished.signal() }
                do {
                    let connection = try Connection(port: port)
                    defer { connection.close() }
                    let mine = Array(stride(from: sender, to: names.count, by: senders))
                    for batch in 0..<batches {
                        for agent in mine {
                            if stop.load(ordering: .relaxed) { return }
                            let start = DispatchTime.now().uptimeNanoseconds
                            let (status, body) = try connection.exchange(requests[agent][batch])
                            let took = DispatchTime.now().uptimeNanoseconds - start
                            guard measuring.load(ordering: .relaxed) else { continue }
                            tally.withLock { result in
                                result.latencies.append(took)
                                if (200..<300).contains(status) {
                                    result.samples += perRequest
                                } else {
                                    result.refusedRequests += 1
                                    if result.firstRefusal == nil { result.firstRefusal = "\(status) \(body)" }
                                }
                            }
                        }
                    }
                    tally.withLock { $0.exhausted = true }
                } catch {
                    tally.withLock { if $0.firstRefusal == nil { $0.firstRefusal = "\(error)" } }
                }
            }
            thread.start()
        }
        Thread.sleep(forTimeInterval: Double(warmUp))
        let cpuBefore = ProcessStat(pid: server.processIdentifier)?.cpuSeconds ?? 0
        let began = DispatchTime.now().uptimeNanoseconds
        measuring.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: Double(seconds))
        measuring.store(false, ordering: .relaxed)
        let ended = DispatchTime.now().uptimeNanoseconds
        let cpuAfter = ProcessStat(pid: server.processIdentifier)?.cpuSeconds ?? 0
        stop.store(true, ordering: .relaxed)
        for _ in 0..<senders { finished.wait() }
        var result = tally.withLock { $0 }
        result.seconds = Double(ended - began) / 1e9
        result.cpuSeconds = cpuAfter - cpuBefore
        // What Prometheus holds: one receive-bytes series per interface of the fleet.
        result.seriesHeld = try blocking {
            try await RemoteWriteBench.query(port: port, "count(last_over_time(netpulse_bench_rx_bytes_total[1h]))")
        }
        return result
    }

    /// Every agent's `batches` requests, whole (HTTP head and snappy-compressed `WriteRequest`), made from the same
    /// simulated agents as the daemons' batches.
    static func prepare(names: [String], batches: Int, firstTick: Int64, port: Int) -> [[[UInt8]]] {
        let made = Mutex([[[UInt8]]](repeating: [], count: names.count))
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            var agent = BenchAgent(index: index, name: names[index])
            let requests = (0..<batches).map { number in
                let batch = agent.nextWireBatch(
                    firstTick: firstTick + Int64(number * IngestBench.ticksPerBatch) * 1_000)
                var series = [RemoteSeries]()
                for section in batch.sections {
                    for counter in Counter.allCases {
                        series.append(
                            RemoteSeries(
                                labels: [
                                    "__name__": "netpulse_bench_\(counter.name)_total", "agent": names[index],
                                    "interface": "eth\(section.descriptorID)",
                                ],
                                samples: section.ticks.enumerated().map { position, tick in
                                    (
                                        batch.timestamps[tick],
                                        Double(section.values[position * Counter.count + counter.rawValue])
                                    )
                                }))
                    }
                }
                // Encoding cannot fail for these series; were it to, Prometheus refuses the empty request, counted.
                let body = (try? RemoteWriteClient.body(series)) ?? []
                let head =
                    "POST /api/v1/write HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/x-protobuf\r\n"
                    + "Content-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n"
                    + "Content-Length: \(body.count)\r\n\r\n"
                return Array(head.utf8) + body
            }
            made.withLock { $0[index] = requests }
        }
        return made.withLock { $0 }
    }

    /// One kept-alive HTTP/1.1 connection to Prometheus on loopback, used by one thread, blocking.
    final class Connection {
        let socket: Int32
        private var buffer = [UInt8]()

        init(port: Int) throws {
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw QueryError("socket: \(String(cString: strerror(errno)))") }
            var noDelay: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                Glibc.close(socket)
                throw QueryError("cannot connect to Prometheus: \(String(cString: strerror(errno)))")
            }
        }

        func close() { Glibc.close(socket) }

        /// Sends a whole request and reads its response: the status and the body (Content-Length, or none).
        func exchange(_ request: [UInt8]) throws -> (status: Int, body: String) {
            var sent = 0
            while sent < request.count {
                let count = request.withUnsafeBytes { send(socket, $0.baseAddress! + sent, request.count - sent, 0) }
                guard count > 0 else { throw QueryError("send: \(String(cString: strerror(errno)))") }
                sent += count
            }
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            var headEnd: Int?
            while true {
                if let end = headEnd {
                    let head = String(decoding: buffer[..<end], as: UTF8.self)
                    let lines = head.split(separator: "\r\n")
                    let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
                    let length =
                        lines.dropFirst().compactMap { line -> Int? in
                            let parts = line.split(separator: ":", maxSplits: 1)
                            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                            return Int(parts[1].trimmingCharacters(in: .whitespaces))
                        }.first ?? 0
                    let total = end + separator.count + length
                    if buffer.count >= total {
                        let body = String(decoding: buffer[(end + separator.count)..<total], as: UTF8.self)
                        buffer.removeFirst(total)
                        return (status, body.trimmingCharacters(in: .whitespacesAndNewlines))
                    }
                } else if let found = Self.find(separator, in: buffer) {
                    headEnd = found
                    continue
                }
                var chunk = [UInt8](repeating: 0, count: 4_096)
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress!, 4_096, 0) }
                guard count > 0 else { throw QueryError("Prometheus closed the connection") }
                buffer += chunk[..<count]
            }
        }

        static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
            guard haystack.count >= needle.count else { return nil }
            for start in 0...(haystack.count - needle.count)
            where haystack[start..<(start + needle.count)].elementsEqual(needle) {
                return start
            }
            return nil
        }
    }
}
