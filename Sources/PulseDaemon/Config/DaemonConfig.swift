import PulseCore

/// Everything `netpulsed` can be configured with; `config/daemon.toml` documents each setting.
public struct DaemonConfig: Sendable, Hashable {
    /// Announced to agents in `WELCOME` and used in logs.
    public var name: String
    public var stateDirectory: String

    public var listen: Endpoint
    public var maximumConnections: Int
    /// Milliseconds a new connection has to complete TLS and `HELLO`.
    public var handshakeTimeout: Int64
    /// Milliseconds without any frame after which a connection is closed (agents send keepalives every 20 s).
    public var idleTimeout: Int64
    public var tls: TLSFiles

    /// The SQLite database file.
    public var storePath: String
    /// `full` fsyncs every commit (acknowledged means on disk, even across power loss); `normal` survives process
    /// crashes but may lose the last commits on power loss.
    public var synchronous: Synchronous
    /// Raw chunks older than this are deleted (milliseconds).
    public var rawRetention: Int64
    /// Longest a batch waits for its group commit (milliseconds).
    public var commitDelay: Int64
    /// Pending batches above which agents are asked to slow down.
    public var paceThreshold: Int

    public enum Synchronous: String, Sendable, Hashable {
        case full = "FULL"
        case normal = "NORMAL"
    }

    /// A default config rooted at `stateDirectory` (for tests and tools).
    public init(stateDirectory: String, listen: Endpoint, tls: TLSFiles) {
        name = "netpulsed"
        self.stateDirectory = stateDirectory
        self.listen = listen
        maximumConnections = 10_000
        handshakeTimeout = 10_000
        idleTimeout = 120_000
        self.tls = tls
        storePath = "\(stateDirectory)/netpulse.db"
        synchronous = .full
        rawRetention = 7 * 86_400_000
        commitDelay = 0
        paceThreshold = 4_096
    }

    /// Loads and validates a config file.
    ///
    /// - Throws: ``ConfigError`` naming the file, the line, the key and the problem.
    public static func load(path: String) throws(ConfigError) -> DaemonConfig {
        try parse(ConfigDocument(contentsOf: path))
    }

    public static func parse(_ document: ConfigDocument) throws(ConfigError) -> DaemonConfig {
        var reader = ConfigReader(document)
        let stateDirectory = try reader.string("daemon", "state_directory", default: "/var/lib/netpulsed")
        let listenText = try reader.string("listen", "address", default: "0.0.0.0:7420")
        guard let listen = Endpoint(parsing: listenText) else {
            throw reader.invalid("listen", "address", "\"\(listenText)\" is not host:port (for IPv6: [::]:7420)")
        }
        var config = DaemonConfig(
            stateDirectory: stateDirectory, listen: listen,
            tls: TLSFiles(
                ca: try reader.string("tls", "ca", default: "/etc/netpulse/ca.pem"),
                certificate: try reader.string("tls", "certificate", default: "/etc/netpulse/netpulsed.pem"),
                key: try reader.string("tls", "key", default: "/etc/netpulse/netpulsed-key.pem")))
        config.name = try reader.string("daemon", "name", default: "netpulsed")
        config.maximumConnections = Int(
            try reader.integer("listen", "max_connections", default: 10_000, range: 1...1_000_000))
        config.handshakeTimeout = try reader.duration(
            "listen", "handshake_timeout", default: 10_000, range: 100...600_000)
        config.idleTimeout = try reader.duration("listen", "idle_timeout", default: 120_000, range: 1_000...86_400_000)
        let path = try reader.string("store", "path", default: "netpulse.db")
        config.storePath = path.hasPrefix("/") ? path : "\(stateDirectory)/\(path)"
        let synchronous = try reader.string("store", "synchronous", default: "full")
        guard let mode = Synchronous(rawValue: synchronous.uppercased()) else {
            throw reader.invalid("store", "synchronous", "is \"\(synchronous)\"; use \"full\" or \"normal\"")
        }
        config.synchronous = mode
        config.rawRetention = try reader.duration(
            "store", "raw_retention", default: 7 * 86_400_000, range: 3_600_000...(3_650 * 86_400_000))
        config.commitDelay = try reader.duration("store", "commit_delay", default: 0, range: 0...1_000)
        config.paceThreshold = Int(
            try reader.integer("ingest", "pace_threshold", default: 4_096, range: 16...1_000_000))
        try reader.rejectUnknown()
        return config
    }
}
