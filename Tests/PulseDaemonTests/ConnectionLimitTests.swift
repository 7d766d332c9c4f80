import NIOCore
import NIOEmbedded
import Testing

@testable import PulseDaemon

/// One agent's connections are bounded (`[limits] connections_per_agent`): past the limit its oldest are handed
/// back to be closed, the newest stays, and other agents are untouched.
@Suite struct ConnectionLimitTests {
    @Test func anAgentOverItsConnectionLimitLosesItsOldestConnections() {
        let registry = ConnectionRegistry()
        let limits = ConnectionRegistry.Limits(
            connections: 100, handshakes: 100, handshakesPerAddress: 100, handshakesPerNetwork: 100)
        let channels = (0..<6).map { _ in EmbeddedChannel() }
        for channel in channels {
            #expect(
                registry.admit(channel, source: ConnectionSource(address: "a", network: "n"), limits: limits) == nil)
        }
        var closed = [ObjectIdentifier]()
        for channel in channels.prefix(5) {
            closed += registry.add(channel, agent: "web-01", limit: 3).map { ObjectIdentifier($0) }
        }
        #expect(closed == channels.prefix(2).map { ObjectIdentifier($0) })
        // Another agent has its own count.
        #expect(registry.add(channels[5], agent: "db-01", limit: 3).isEmpty)
        // Once the older ones have gone, the agent is at its limit, not over it.
        registry.release(channels[0])
        registry.release(channels[1])
        #expect(registry.agentCount == 4)
    }
}
