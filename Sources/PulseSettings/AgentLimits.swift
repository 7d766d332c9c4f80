/// What one agent may grow in the daemon (`[limits]`, `docs/reliability.md`): a certified agent is still untrusted,
/// so each thing it can make the daemon keep has a bound. A batch over a limit is refused by name (`REJECT`), the
/// refusal logged once a minute per agent and limit and counted in `/metrics`.
public struct AgentLimits: Sendable, Hashable {
    /// The limits, by their names in `[limits]` and in `/metrics`.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case connections = "connections_per_agent"
        case interfaces = "interfaces_per_agent"
        case streams = "streams_per_agent"
        case labelValues = "label_values_per_agent"
        case sequenceRanges = "sequence_ranges_per_stream"
    }

    /// Connections of one agent at once; a further one closes its oldest (a reconnect after a link that died
    /// silently must not wait for the idle timeout).
    public var connections: Int
    /// Distinct interface names the batches of one connection may use.
    public var interfaces: Int
    /// Distinct streams (agent runs) the batches of one connection may come from: the live one and spooled ones.
    public var streams: Int
    /// Distinct label values (`key=value`) one agent may set in the daemon's lifetime: each is a group, with a
    /// series and memberships of its own.
    public var labelValues: Int

    public init(connections: Int = 4, interfaces: Int = 4_096, streams: Int = 256, labelValues: Int = 64) {
        self.connections = connections
        self.interfaces = interfaces
        self.streams = streams
        self.labelValues = labelValues
    }
}

/// The prefix lengths that make one network for the handshake limits (`[listen] network_prefix_ipv4` and
/// `network_prefix_ipv6`).
public struct NetworkPrefixes: Hashable, Sendable {
    public var ipv4 = 24
    public var ipv6 = 64

    public init(ipv4: Int = 24, ipv6: Int = 64) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }
}
