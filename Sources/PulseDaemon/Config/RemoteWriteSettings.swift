import PulseCore

/// `[remote_write]`: forwarding each interface's reset-corrected counters and rates to a Prometheus-compatible
/// store over the remote-write 1.0 protocol (`docs/remote-write.md`). Off unless `url` is set.
public struct RemoteWriteSettings: Sendable, Hashable {
    /// The receiver's write endpoint (Prometheus: `http://HOST:9090/api/v1/write`); nil: off.
    public var url: String?
    public var bearerTokenFile: String?
    /// CA certificates (PEM) to verify an https receiver with; the system's when not set.
    public var ca: String?
    /// Milliseconds one request may take.
    public var timeout: Int64
    /// Milliseconds between passes.
    public var interval: Int64
    /// Milliseconds after a bucket ends before it is sent, so that batches still on their way are in it.
    public var delay: Int64
    /// What a new receiver gets first: the buckets that ended in this many milliseconds before the first pass.
    public var backfill: Int64
    /// The most samples in one request.
    public var maximumSamples: Int

    public init() {
        url = nil
        bearerTokenFile = nil
        ca = nil
        timeout = 30_000
        interval = 15_000
        delay = 60_000
        backfill = 600_000
        maximumSamples = 2_000
    }

    static func parse(_ reader: inout ConfigReader) throws(ConfigError) -> RemoteWriteSettings {
        let table = "remote_write"
        var settings = RemoteWriteSettings()
        if let url = try reader.optionalString(table, "url") {
            guard WebhookAddress(parsing: url) != nil else {
                throw reader.invalid(
                    table, "url",
                    "is \"\(url)\"; give an http:// or https:// URL (Prometheus: http://HOST:9090/api/v1/write)")
            }
            settings.url = url
        }
        settings.bearerTokenFile = try reader.optionalString(table, "bearer_token_file")
        settings.ca = try reader.optionalString(table, "ca")
        settings.timeout = try reader.duration(table, "timeout", default: 30_000, range: 100...600_000)
        settings.interval = try reader.duration(table, "interval", default: 15_000, range: 100...3_600_000)
        settings.delay = try reader.duration(table, "delay", default: 60_000, range: 0...86_400_000)
        settings.backfill = try reader.duration(table, "backfill", default: 600_000, range: 0...86_400_000)
        settings.maximumSamples = Int(
            try reader.integer(table, "max_samples_per_request", default: 2_000, range: 1...1_000_000))
        return settings
    }
}
