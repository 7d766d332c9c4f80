import PulseCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Everything `netpulse-agent` can be configured with; `config/agent.toml` documents each setting.
public struct AgentConfig: Sendable, Hashable {
    /// Identifies the agent to the daemon; must equal the common name of its certificate.
    public var agentID: String
    public var stateDirectory: String

    /// Sampling period in milliseconds, aligned to the wall clock.
    public var sampleInterval: Int64
    /// How often `/sys/class/net/IF/` link facts are read, in milliseconds.
    public var linkStateInterval: Int64
    public var filter: InterfaceFilter

    /// Upload budget in bytes per second (0: unlimited).
    public var uploadBudget: Int64
    /// Idle interfaces are sent only this often (ms); 0 sends every interface every tick.
    public var idleHeartbeat: Int64

    /// A batch is closed after this long (ms, ± ``batchJitter``)…
    public var batchInterval: Int64
    /// …or when it holds this many samples (interface × tick), whichever comes first. At most 16,384, which keeps
    /// a batch of real counters well inside the protocol's 1 MiB frame.
    public var batchMaximumSamples: Int
    /// Relative random spread of the batch interval, so a fleet does not flush in lockstep (0.1 = ±10%).
    public var batchJitter: Double

    public var spoolMaximumBytes: Int64

    public var endpoints: [Endpoint]
    /// The name the daemon's certificate must carry.
    public var serverName: String
    public var tls: TLSFiles
    public var connectTimeout: Int64
    public var backoffInitial: Int64
    public var backoffMaximum: Int64

    /// Labels sent to the daemon (`[labels]`), in file order; the daemon's config may override them.
    public var labels = Labels([])
    /// The share of its certificate's lifetime after which the agent asks the daemon for a new one, when the daemon
    /// renews certificates (`[daemon] renew_after`); 0: never. Two thirds by default, as cert-manager renews: a third
    /// of the lifetime (a month of a 90-day certificate) is left to reach the daemon.
    public var renewAfter = 0.67

    public var spoolDirectory: String { "\(stateDirectory)/spool" }
    /// Where ``OrderClock`` keeps its reservation.
    public var orderPath: String { "\(stateDirectory)/order" }

    /// Loads and validates a config file.
    ///
    /// - Throws: ``ConfigError`` naming the file, the line, the key and the problem.
    public static func load(path: String) throws(ConfigError) -> AgentConfig {
        try parse(ConfigDocument(contentsOf: path))
    }

    public static func parse(_ document: ConfigDocument) throws(ConfigError) -> AgentConfig {
        var reader = ConfigReader(document)
        return try parse(&reader)
    }

    /// Every setting the parser reads from `document`, by table (``ConfigReader/settingsRead``), whether or not the
    /// document is valid.
    public static func settingsRead(_ document: ConfigDocument) -> [String: Set<String>] {
        ConfigReader.settingsRead(document) { (reader: inout ConfigReader) throws(ConfigError) in try parse(&reader) }
    }

    static func parse(_ reader: inout ConfigReader) throws(ConfigError) -> AgentConfig {
        let agentID = try reader.string("agent", "id", default: Self.hostname())
        guard !agentID.isEmpty else { throw reader.invalid("agent", "id", "must not be empty") }
        var config = AgentConfig(
            agentID: agentID,
            stateDirectory: try reader.string("agent", "state_directory", default: "/var/lib/netpulse-agent"),
            sampleInterval: try reader.duration("sampling", "interval", default: 1_000, range: 100...3_600_000),
            linkStateInterval: try reader.duration(
                "sampling", "link_state_interval", default: 30_000, range: 1_000...86_400_000),
            filter: InterfaceFilter(
                include: try reader.stringArray("sampling", "include", default: ["*"], allowEmpty: false),
                exclude: try reader.stringArray("sampling", "exclude", default: ["lo"])),
            uploadBudget: try reader.byteSize("throttle", "upload_budget", default: 256 << 10, range: 0...(1 << 40)),
            idleHeartbeat: try reader.duration("throttle", "idle_heartbeat", default: 60_000, range: 0...86_400_000),
            batchInterval: try reader.duration("batch", "interval", default: 10_000, range: 100...3_600_000),
            batchMaximumSamples: Int(try reader.integer("batch", "max_samples", default: 16_384, range: 1...16_384)),
            batchJitter: try reader.number("batch", "jitter", default: 0.1, range: 0...0.5),
            spoolMaximumBytes: try reader.byteSize("spool", "max_size", default: 64 << 20, range: 4_096...(1 << 40)),
            endpoints: try reader.endpoints("daemon", "endpoints", default: [Endpoint(host: "127.0.0.1", port: 7420)]),
            serverName: try reader.string("daemon", "server_name", default: "netpulsed"),
            tls: TLSFiles(
                ca: try reader.string("daemon", "ca", default: "/etc/netpulse/ca.pem"),
                certificate: try reader.string("daemon", "certificate", default: "/etc/netpulse/agent.pem"),
                key: try reader.string("daemon", "key", default: "/etc/netpulse/agent-key.pem")),
            connectTimeout: try reader.duration("daemon", "connect_timeout", default: 5_000, range: 100...300_000),
            backoffInitial: try reader.duration("daemon", "backoff_initial", default: 500, range: 10...600_000),
            backoffMaximum: try reader.duration("daemon", "backoff_max", default: 60_000, range: 10...3_600_000))
        config.labels = try reader.labels("labels")
        config.renewAfter = try reader.number("daemon", "renew_after", default: 0.67, range: 0...0.95)
        try reader.rejectUnknown()
        if isIPAddress(config.serverName) {
            throw reader.invalid(
                "daemon", "server_name",
                "is an IP address; TLS name verification needs the DNS name in the daemon's certificate (netpulse ca issue --daemon NAME)"
            )
        }
        guard config.backoffMaximum >= config.backoffInitial else {
            throw reader.invalid("daemon", "backoff_max", "must not be smaller than backoff_initial")
        }
        return config
    }

    /// The host name, the default agent id.
    public static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Whether `text` is an IPv4 or IPv6 address literal.
func isIPAddress(_ text: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
}
