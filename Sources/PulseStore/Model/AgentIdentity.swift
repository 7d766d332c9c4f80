import PulseCore

/// Who sent a batch, as established by the TLS handshake, `HELLO` and `LABELS`.
public struct AgentIdentity: Sendable, Hashable {
    /// The common name of the agent's client certificate.
    public var name: String
    public var hostname: String
    public var version: String
    /// The agent's labels after the daemon's overrides (what decides its groups).
    public var labels: Labels

    public init(name: String, hostname: String, version: String, labels: Labels = Labels([])) {
        self.name = name
        self.hostname = hostname
        self.version = version
        self.labels = labels
    }
}
