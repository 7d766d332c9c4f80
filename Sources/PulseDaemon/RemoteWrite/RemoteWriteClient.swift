import CSnappy
import PulseCore
import SwiftProtobuf

/// One series of a remote-write request: its labels (`__name__` among them) and its samples, oldest first.
public struct RemoteSeries: Sendable, Hashable {
    public var labels: [String: String]
    public var samples: [(timestamp: Int64, value: Double)]

    public init(labels: [String: String], samples: [(timestamp: Int64, value: Double)]) {
        self.labels = labels
        self.samples = samples
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.labels == rhs.labels && lhs.samples.elementsEqual(rhs.samples) { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(labels)
        for sample in samples {
            hasher.combine(sample.timestamp)
            hasher.combine(sample.value)
        }
    }
}

/// What a receiver made of a request (the remote-write 1.0 specification's rules for senders).
public enum RemoteWriteOutcome: Sendable, Equatable {
    /// 2xx: stored.
    case accepted
    /// 5xx, 429, or no answer: the same request may succeed later and is sent again, after a backoff.
    case retry(String)
    /// Any other 4xx: the receiver will never take it (a sample older than its series' newest, a malformed
    /// request); any other status, a redirect among them (never followed). Sending it again cannot help; the sender
    /// counts and reports what it held.
    case refused(status: Int, reason: String)
}

/// Sends requests of Prometheus' remote-write 1.0 protocol: a protobuf `WriteRequest`, compressed with snappy's
/// block format, POSTed with the headers the specification requires.
public struct RemoteWriteClient: Sendable {
    public let target: WebhookTarget

    /// - Throws: ``WebhookError`` when `url` is not an http:// or https:// URL, or the CA file cannot be read.
    public init(url: String, caFile: String? = nil, bearerTokenFile: String? = nil, timeout: Int64 = 30_000) throws {
        target = try WebhookTarget(url: url, caFile: caFile, bearerTokenFile: bearerTokenFile, timeout: timeout)
    }

    /// The request's body: the `WriteRequest` encoded, then compressed.
    public static func body(_ series: [RemoteSeries]) throws -> [UInt8] {
        var request = Prometheus_WriteRequest()
        request.timeseries = series.map { series in
            var encoded = Prometheus_TimeSeries()
            // Labels sorted by name, as receivers require.
            encoded.labels = series.labels.sorted { $0.key < $1.key }.map { name, value in
                var label = Prometheus_Label()
                label.name = name
                label.value = value
                return label
            }
            encoded.samples = series.samples.map { timestamp, value in
                var sample = Prometheus_Sample()
                sample.timestamp = timestamp
                sample.value = value
                return sample
            }
            return encoded
        }
        let encoded: [UInt8] = try request.serializedBytes()
        return Snappy.compress(encoded)
    }

    /// Sends one request over `http` and says what the receiver made of it. Never throws: a failure to connect or a
    /// timeout is a reason to retry.
    public func send(_ series: [RemoteSeries], through http: WebhookClient) async -> RemoteWriteOutcome {
        let body: [UInt8]
        do {
            body = try Self.body(series)
        } catch {
            return .refused(status: 0, reason: "cannot encode the request: \(error)")
        }
        do {
            let response = try await http.post(
                body, to: target, contentType: "application/x-protobuf",
                headers: [("Content-Encoding", "snappy"), ("X-Prometheus-Remote-Write-Version", "0.1.0")])
            let said = response.redirect(setting: "[remote_write] url") ?? response.body.trimmingWhitespace()
            let reason = "\(response.status) \(said)"
            switch response.status {
            case 200..<300: return .accepted
            case 429, 500..<600: return .retry(reason)
            default: return .refused(status: response.status, reason: reason)
            }
        } catch {
            return .retry("\(error)")
        }
    }
}

/// Snappy's block format (not its framing format, which remote write does not use), by Debian's libsnappy.
enum Snappy {
    static func compress(_ input: [UInt8]) -> [UInt8] {
        var length = snappy_max_compressed_length(input.count)
        var output = [UInt8](repeating: 0, count: length)
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                source.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(source.count, 1)) { from in
                    target.baseAddress!.withMemoryRebound(to: CChar.self, capacity: target.count) { to in
                        snappy_compress(from, source.count, to, &length)
                    }
                }
            }
        }
        precondition(status == SNAPPY_OK, "snappy_compress cannot fail with a buffer of the maximum length")
        output.removeSubrange(length...)
        return output
    }

    /// Nil when `input` is not a snappy block.
    static func uncompress(_ input: [UInt8]) -> [UInt8]? {
        var length = 0
        let known = input.withUnsafeBufferPointer { source in
            source.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: source.count) {
                    snappy_uncompressed_length($0, source.count, &length)
                }
            }
        }
        guard known == SNAPPY_OK else { return nil }
        var output = [UInt8](repeating: 0, count: length)
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                source.baseAddress!.withMemoryRebound(to: CChar.self, capacity: source.count) { from in
                    target.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(target.count, 1)) { to in
                        snappy_uncompress(from, source.count, to, &length)
                    }
                }
            }
        }
        return status == SNAPPY_OK ? Array(output.prefix(length)) : nil
    }
}
