import NIOCore
import PulseSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a connection comes from, for the handshake limits: its address, and the network the address is counted in
/// (`[listen] network_prefix_ipv4` and `network_prefix_ipv6`: a /24 and a /64 unless configured).
///
/// One host rarely has one address only: an IPv6 host is given a whole /64 and can connect from any of its 2⁶⁴
/// addresses, and an IPv4 flood can come from a handful of neighbouring addresses. Counting by network as well as
/// by address keeps such a flood to one network's share of the handshake slots. An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.7`, how an IPv4 client shows on a socket listening on `[::]`) counts as the IPv4 address it is.
struct ConnectionSource: Hashable, Sendable {
    /// The address as text: `192.0.2.7`, `2001:db8::7`.
    var address: String
    /// The network as text: `192.0.2.0/24`, `2001:db8::/64`.
    var network: String

    /// The prefix lengths that make a network.
    typealias Prefixes = NetworkPrefixes

    /// A source for connections whose peer address is unknown (not IP): they all count as one address and network.
    static let unknown = ConnectionSource(address: "an unknown address", network: "an unknown network")

    init(address: String, network: String) {
        self.address = address
        self.network = network
    }

    /// The source of a connection from `peer` (a channel's remote address).
    init(_ peer: SocketAddress?, prefixes: Prefixes) {
        switch peer {
        case .v4(let ip):
            let bytes = withUnsafeBytes(of: ip.address.sin_addr) { Array($0) }
            self = Self(bytes: bytes, prefixes: prefixes) ?? .unknown
        case .v6(let ip):
            let bytes = withUnsafeBytes(of: ip.address.sin6_addr) { Array($0) }
            self = Self(bytes: bytes, prefixes: prefixes) ?? .unknown
        default:
            self = .unknown
        }
    }

    /// The source of an address given as its 4 (IPv4) or 16 (IPv6) bytes in network order; nil for other lengths.
    init?(bytes: [UInt8], prefixes: Prefixes) {
        var bytes = bytes
        if bytes.count == 16 && bytes[..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            bytes = Array(bytes[12...])
        }
        let (family, prefix): (Int32, Int)
        switch bytes.count {
        case 4: (family, prefix) = (AF_INET, min(max(prefixes.ipv4, 0), 32))
        case 16: (family, prefix) = (AF_INET6, min(max(prefixes.ipv6, 0), 128))
        default: return nil
        }
        guard let address = Self.text(bytes, family: family),
            let network = Self.text(Self.masked(bytes, prefix: prefix), family: family)
        else { return nil }
        self.address = address
        self.network = "\(network)/\(prefix)"
    }

    /// `bytes` with every bit after the first `prefix` cleared.
    static func masked(_ bytes: [UInt8], prefix: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(prefix - index * 8, 0), 8)
            return kept == 0 ? 0 : byte & UInt8(truncatingIfNeeded: 0xff << (8 - kept))
        }
    }

    /// The conventional text of an address (RFC 5952 for IPv6, as `inet_ntop` writes it).
    private static func text(_ bytes: [UInt8], family: Int32) -> String? {
        var text = [CChar](repeating: 0, count: 64)
        let written = bytes.withUnsafeBytes { raw in
            text.withUnsafeMutableBufferPointer { buffer in
                inet_ntop(family, raw.baseAddress, buffer.baseAddress, socklen_t(buffer.count))
            }
        }
        guard written != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
