import Testing

@testable import PulseDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The networks connections are counted in, and the handshake slots they may hold: before, only the exact address
/// was limited, so 8 IPv4 addresses or one IPv6 /64 could fill all 1,024 slots.
@Suite struct HandshakeLimitTests {
    /// The source of `address` (IPv4 or IPv6 text, read with `inet_pton`, independently of the code under test).
    func source(_ address: String, _ prefixes: ConnectionSource.Prefixes = .init()) throws -> ConnectionSource {
        for (family, count) in [(AF_INET, 4), (AF_INET6, 16)] {
            var bytes = [UInt8](repeating: 0, count: count)
            if inet_pton(family, address, &bytes) == 1 {
                return try #require(ConnectionSource(bytes: bytes, prefixes: prefixes))
            }
        }
        throw NotAnAddress(text: address)
    }

    @Test func addressesAreCountedInTheirIPv4Slash24OrIPv6Slash64() throws {
        #expect(try source("127.0.5.40") == ConnectionSource(address: "127.0.5.40", network: "127.0.5.0/24"))
        #expect(try source("192.0.2.255") == ConnectionSource(address: "192.0.2.255", network: "192.0.2.0/24"))
        #expect(
            try source("2001:db8:1::7") == ConnectionSource(address: "2001:db8:1::7", network: "2001:db8:1::/64"))
        #expect(
            try source("2001:db8:1:0:ffff:ffff:ffff:ffff")
                == ConnectionSource(address: "2001:db8:1:0:ffff:ffff:ffff:ffff", network: "2001:db8:1::/64"))
        #expect(try source("2001:db8:1:2::1").network == "2001:db8:1:2::/64")
        #expect(try source("::1") == ConnectionSource(address: "::1", network: "::/64"))
    }

    /// An IPv4 client of a socket listening on `[::]` shows as `::ffff:a.b.c.d`: it is the IPv4 address.
    @Test func ipv4MappedAddressesCountAsIPv4() throws {
        #expect(try source("::ffff:127.0.5.40") == source("127.0.5.40"))
        #expect(try source("::ffff:10.1.2.3").network == "10.1.2.0/24")
        // Not mapped: one bit off the ::ffff:0:0/96 prefix.
        #expect(try source("::fffe:a01:203").network == "::/64")
    }

    @Test func prefixLengthsAreSettings() throws {
        let wide = ConnectionSource.Prefixes(ipv4: 20, ipv6: 48)
        #expect(try source("10.1.37.5", wide).network == "10.1.32.0/20")
        #expect(try source("2001:db8:1:2:3::1", wide).network == "2001:db8:1::/48")
        let exact = ConnectionSource.Prefixes(ipv4: 32, ipv6: 128)
        #expect(try source("10.1.37.5", exact).network == "10.1.37.5/32")
        #expect(try source("2001:db8::9", exact).network == "2001:db8::9/128")
        #expect(try source("2001:db8:abcd:ef12::1", .init(ipv4: 24, ipv6: 61)).network == "2001:db8:abcd:ef10::/61")
        #expect(ConnectionSource.masked([0xff, 0xff, 0xff, 0xff], prefix: 13) == [0xff, 0xf8, 0, 0])
    }

    @Test func aNetworkHoldsOnlyItsShareWhileOthersAreAdmitted() throws {
        let registry = ConnectionRegistry()
        let limits = ConnectionRegistry.Limits(
            connections: 100, handshakes: 20, handshakesPerAddress: 4, handshakesPerNetwork: 8)
        var held: [ObjectIdentifier: ConnectionSource] = [:]
        var connections: [Connection] = []
        var refusals: [String] = []
        // 40 addresses of one /24, one connection each.
        for host in 1...40 {
            let connection = Connection()
            connections.append(connection)
            let from = try source("127.0.5.\(host)")
            if let reason = registry.admit(connection.id, source: from, limits: limits) {
                refusals.append(reason)
            } else {
                held[connection.id] = from
            }
        }
        #expect(held.count == 8)
        #expect(Set(refusals) == ["8 handshakes pending from 127.0.5.0/24 ([listen] max_handshakes_per_network)"])
        #expect(refusals.count == 32)
        // Other networks still get in, the same network in IPv4-mapped form does not.
        let agent = Connection()
        #expect(registry.admit(agent.id, source: try source("127.0.0.1"), limits: limits) == nil)
        let mapped = Connection()
        #expect(registry.admit(mapped.id, source: try source("::ffff:127.0.5.99"), limits: limits) != nil)
        let ipv6 = Connection()
        #expect(registry.admit(ipv6.id, source: try source("2001:db8:1::1"), limits: limits) == nil)
        #expect(registry.handshakeCount == 10)

        // A slot freed in the network is taken again by another of its addresses.
        registry.release(try #require(held.keys.first))
        let next = Connection()
        #expect(registry.admit(next.id, source: try source("127.0.5.200"), limits: limits) == nil)
        #expect(registry.handshakeCount == 10)
    }

    @Test func oneIPv6Slash64IsOneNetworkHoweverManyAddressesItUses() throws {
        let registry = ConnectionRegistry()
        let limits = ConnectionRegistry.Limits(
            connections: 10_000, handshakes: 1_024, handshakesPerAddress: 128, handshakesPerNetwork: 128)
        let connections = (0..<1_024).map { _ in Connection() }
        let admitted = try connections.enumerated().filter { index, connection in
            let from = try source("2001:db8:1::\(String(index + 1, radix: 16))")
            return registry.admit(connection.id, source: from, limits: limits) == nil
        }
        #expect(admitted.count == 128)
        let elsewhere = Connection()
        #expect(registry.admit(elsewhere.id, source: try source("2001:db8:2::1"), limits: limits) == nil)
    }

    /// The tighter of the two limits names itself: one address at its own limit is refused as an address.
    @Test func theAddressLimitStillHoldsInsideANetwork() throws {
        let registry = ConnectionRegistry()
        let limits = ConnectionRegistry.Limits(
            connections: 100, handshakes: 100, handshakesPerAddress: 2, handshakesPerNetwork: 8)
        let connections = (0..<3).map { _ in Connection() }
        let reasons = try connections.map { registry.admit($0.id, source: try source("192.0.2.7"), limits: limits) }
        #expect(reasons.prefix(2).allSatisfy { $0 == nil })
        #expect(reasons.last == "2 handshakes pending from 192.0.2.7 ([listen] max_handshakes_per_address)")
    }

    @Test func theRefusalLineNamesTheNetworkAndTheSetting() {
        let registry = ConnectionRegistry()
        let reason = "8 handshakes pending from 2001:db8:1::/64 ([listen] max_handshakes_per_network)"
        #expect(
            registry.refused(because: reason)
                == "refused 1 connection(s): 1 with 8 handshakes pending from 2001:db8:1::/64 ([listen] max_handshakes_per_network)"
        )
        #expect(registry.refused(because: reason) == nil, "summed up in the next line, 10 s later")
    }

    struct NotAnAddress: Error {
        var text: String
    }

    /// Something with an identity, as each accepted channel has.
    final class Connection {
        var id: ObjectIdentifier { ObjectIdentifier(self) }
    }
}
