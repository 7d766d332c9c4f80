import PulseCore

/// `[http]`: the daemon's read-only HTTP server (`docs/api.md`): the API the CLI uses with `--daemon`, the daemon's
/// own metrics, and the live dashboards; silences are its one write, and only with `allow_silences`.
///
/// It listens on a Unix socket by default, whose access is the file's (mode 0660, group `socket_group`), and on TCP
/// only when `listen` is set: there with TLS from the fleet's certificates unless `tls = false`, which is allowed on
/// loopback alone. Over TCP every request must authenticate: with an operator's client certificate
/// (`netpulse ca issue --operator NAME`) or HTTP basic auth checked against the bcrypt hashes of `users_file`.
public struct HTTPSettings: Sendable, Hashable {
    /// The Unix socket's path; nil: none.
    public var socket: String?
    /// The group the socket file is given to (its mode is 0660); nil: the daemon's own group.
    public var socketGroup: String?
    /// The TCP address; nil: none.
    public var listen: Endpoint?
    /// Whether TCP is served over TLS (`tls = false` only on loopback, with a warning at each start).
    public var tls: Bool
    /// The server's certificate and key and the CA operators' certificates chain to; by default `[tls]`'s.
    public var files: TLSFiles?
    /// `NAME:BCRYPT-HASH` lines (the format of `htpasswd -B`) for basic auth over TCP; nil: certificates only.
    public var usersFile: String?
    /// The most connections open at once; more wait in the listen backlog.
    public var maximumConnections: Int
    /// Milliseconds a connection may sit idle (or half-sent) before it is closed.
    public var idleTimeout: Int64
    /// Whether clients may make and end silences (`POST /api/v1/silences`, `DELETE /api/v1/silences/ID`): the only
    /// requests that change the store. Off by default.
    public var allowSilences: Bool

    /// Where the socket is unless `[http] socket` says otherwise (the units give the daemon `/run/netpulsed`).
    public static let defaultSocket = "/run/netpulsed/http.sock"

    /// No listener: what a config built in code (tests, tools) gets; a config file gets ``defaultSocket``.
    public init() {
        socket = nil
        socketGroup = nil
        listen = nil
        tls = true
        files = nil
        usersFile = nil
        maximumConnections = 256
        idleTimeout = 60_000
        allowSilences = false
    }

    /// What the daemon says at start when TCP is served without TLS; nil otherwise.
    public var plainTextWarning: String? {
        guard let listen, !tls else { return nil }
        return
            "[http] listen \(listen) is served without TLS (tls = false): anyone on this host can read what it serves, and basic auth passwords cross loopback in clear text"
    }

    static func parse(_ reader: inout ConfigReader, daemonTLS: TLSFiles) throws(ConfigError) -> HTTPSettings {
        let table = "http"
        var settings = HTTPSettings()
        let socket = try reader.string(table, "socket", default: Self.defaultSocket)
        settings.socket = socket.isEmpty ? nil : socket
        if let socket = settings.socket, !socket.hasPrefix("/") {
            throw reader.invalid(table, "socket", "is \"\(socket)\", not an absolute path (or \"\" for none)")
        }
        settings.socketGroup = try reader.optionalString(table, "socket_group")
        if let text = try reader.optionalString(table, "listen"), !text.isEmpty {
            guard let endpoint = Endpoint(parsing: text) else {
                throw reader.invalid(table, "listen", "\"\(text)\" is not host:port (for example \"0.0.0.0:9470\")")
            }
            settings.listen = endpoint
        }
        settings.tls = try reader.boolean(table, "tls", default: true)
        if let listen = settings.listen, !settings.tls, !listen.isLoopback {
            throw reader.invalid(
                table, "tls",
                "is false but [http] listen \(listen) is not a loopback address: serve TCP with TLS, or listen on 127.0.0.1 or [::1]"
            )
        }
        let certificate = try reader.optionalString(table, "certificate")
        let key = try reader.optionalString(table, "key")
        if (certificate == nil) != (key == nil) {
            throw reader.invalid(table, certificate == nil ? "key" : "certificate", "is set without the other")
        }
        settings.files = TLSFiles(
            ca: try reader.optionalString(table, "ca") ?? daemonTLS.ca,
            certificate: certificate ?? daemonTLS.certificate, key: key ?? daemonTLS.key)
        settings.usersFile = try reader.optionalString(table, "users_file")
        settings.maximumConnections = Int(
            try reader.integer(table, "max_connections", default: 256, range: 1...100_000))
        settings.idleTimeout = try reader.duration(table, "idle_timeout", default: 60_000, range: 1_000...3_600_000)
        settings.allowSilences = try reader.boolean(table, "allow_silences", default: false)
        if settings.listen != nil, !settings.tls, settings.usersFile == nil {
            throw reader.invalid(
                table, "tls",
                "is false and there is no [http] users_file: without TLS there are no certificates, so no one could log in; set users_file"
            )
        }
        if settings.listen == nil, settings.usersFile != nil {
            throw reader.invalid(table, "users_file", "is set without [http] listen: the Unix socket has no passwords")
        }
        return settings
    }
}
