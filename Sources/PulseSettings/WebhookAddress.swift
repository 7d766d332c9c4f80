import PulseCore

/// Where a webhook is: `http://host:port/path` or `https://…`.
public struct WebhookAddress: Sendable, Hashable {
    public var secure: Bool
    public var host: String
    public var port: Int
    /// The path and query, at least `/`.
    public var target: String

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
        let target = rest.dropFirst(authority.count)
        guard !authority.isEmpty, !authority.contains("@"),
            let endpoint = Endpoint(
                parsing: authority.contains("]:") || (!authority.hasPrefix("[") && authority.contains(":"))
                    ? String(authority) : "\(authority):\(secure ? 443 : 80)")
        else { return nil }
        self.secure = secure
        host = endpoint.host
        port = endpoint.port
        self.target = target.isEmpty ? "/" : (target.hasPrefix("?") ? "/" + target : String(target))
    }

    /// The `Host` header.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}
