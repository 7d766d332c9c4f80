import PulseCore

/// Where a webhook or a remote-write receiver is, `http://host:port/path` or `https://…`, as far as the settings check
/// it (a scheme, a host, a port) and the daemon picks a proxy for it (``secure``, ``host``); the daemon's HTTP client
/// reads the URL itself.
public struct WebhookAddress: Sendable, Hashable {
    public var secure: Bool
    public var host: String
    public var port: Int

    public init?(parsing text: String) {
        let secure: Bool
        let rest: Substring
        if text.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else {
            return nil
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.isEmpty, !authority.contains("@"),
            let endpoint = Endpoint(
                parsing: authority.contains("]:") || (!authority.hasPrefix("[") && authority.contains(":"))
                    ? String(authority) : "\(authority):\(secure ? 443 : 80)")
        else { return nil }
        self.secure = secure
        host = endpoint.host
        port = endpoint.port
    }

    /// `host:port` (`[v6]:port`), for messages.
    public var endpoint: Endpoint { Endpoint(host: host, port: port) }
}
