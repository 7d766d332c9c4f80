import PulseCore

/// `[remote_write]`: forwarding each interface's reset-corrected counters and rates to a Prometheus-compatible
/// store over the remote-write 1.0 protocol (`docs/remote-write.md`). Off unless `url` is set.
public struct RemoteWriteSettings: Sendable, Hashable {
    /// The receiver's write endpoint (Prometheus: `http://HOST:9090/api/v1/write`); nil: off.
    public var url: String?
    public var bearerTokenFile: String?
    /// Sends the bearer token to an `http://` receiver, in clear text (refused unless set; a warning at each start).
    public var allowInsecureCredentials: Bool
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
        allowInsecureCredentials = false
        ca = nil
        timeout = 30_000
        interval = 15_000
        delay = 60_000
        backfill = 600_000
        maximumSamples = 2_000
    }

    /// What the daemon says at start when the receiver's credentials go in clear text (allowed by
    /// `allow_insecure_credentials`); nil otherwise.
    public var insecureCredentialsWarning: String? {
        guard let url, bearerTokenFile != nil else { return nil }
        return InsecureCredentials.warning(url, table: "remote_write", setting: "bearer_token_file")
    }

    static func parse(_ reader: inout ConfigReader) throws(ConfigError) -> RemoteWriteSettings {
        let table = "remote_write"
        var settings = RemoteWriteSettings()
        let receiver = try HTTPDestinationKeys.read(
            &reader, table: table, urlKey: "url", example: "(Prometheus: http://HOST:9090/api/v1/write)")
        settings.url = receiver.url
        settings.bearerTokenFile = receiver.bearerTokenFile
        settings.allowInsecureCredentials = receiver.allowInsecureCredentials
        settings.ca = receiver.ca
        settings.timeout = try reader.duration(table, "timeout", default: 30_000, range: 100...600_000)
        settings.interval = try reader.duration(table, "interval", default: 15_000, range: 100...3_600_000)
        settings.delay = try reader.duration(table, "delay", default: 60_000, range: 0...86_400_000)
        settings.backfill = try reader.duration(table, "backfill", default: 600_000, range: 0...86_400_000)
        settings.maximumSamples = Int(
            try reader.integer(table, "max_samples_per_request", default: 2_000, range: 1...1_000_000))
        return settings
    }
}

/// Credentials (a bearer token) toward a receiver reached over plain `http://`, where anyone on the path reads them:
/// a config error unless the receiver's table says `allow_insecure_credentials = true`, and then a warning at start.
enum InsecureCredentials {
    /// Throws the config error (at the line of `bearer_token_file`) when `url` is plain http and it is not allowed.
    static func check(
        _ url: String, table: String, allowed: Bool, _ reader: inout ConfigReader
    ) throws(ConfigError) {
        guard let address = WebhookAddress(parsing: url), !address.secure, !allowed else { return }
        throw reader.invalid(
            table, "bearer_token_file",
            "would be sent in clear text to \(url) (plain http://, readable by anyone on the path); use an https:// URL, or set allow_insecure_credentials = true in [\(table)] to send it anyway"
        )
    }

    /// The start-up warning for a receiver whose credentials go over plain http (nil for https).
    static func warning(_ url: String, table: String, setting: String) -> String? {
        guard let address = WebhookAddress(parsing: url), !address.secure else { return nil }
        return
            "[\(table)] sends the token of \(setting) in clear text to \(url) (allow_insecure_credentials = true): anyone on the path can read it; use https://"
    }
}

/// The keys every HTTP destination of the daemon has (`[alerts.notify]`'s webhook, `[remote_write]`'s receiver),
/// read by one rule: the URL must be http or https with a host, and a bearer token goes to a plain `http://` URL
/// only when `allow_insecure_credentials` says so.
struct HTTPDestinationKeys {
    var url: String?
    var bearerTokenFile: String?
    var allowInsecureCredentials = false
    var ca: String?

    /// Reads the URL from `urlKey`; `example` ends the message for a URL that is not one ("with a host").
    static func read(
        _ reader: inout ConfigReader, table: String, urlKey: String, example: String
    ) throws(ConfigError) -> HTTPDestinationKeys {
        var keys = HTTPDestinationKeys(url: try reader.optionalString(table, urlKey))
        if let url = keys.url, WebhookAddress(parsing: url) == nil {
            throw reader.invalid(table, urlKey, "is \"\(url)\"; give an http:// or https:// URL \(example)")
        }
        keys.bearerTokenFile = try reader.optionalString(table, "bearer_token_file")
        keys.allowInsecureCredentials = try reader.boolean(table, "allow_insecure_credentials", default: false)
        if let url = keys.url, keys.bearerTokenFile != nil {
            try InsecureCredentials.check(url, table: table, allowed: keys.allowInsecureCredentials, &reader)
        }
        keys.ca = try reader.optionalString(table, "ca")
        return keys
    }
}
