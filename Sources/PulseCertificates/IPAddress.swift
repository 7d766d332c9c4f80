#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address as it goes into an `iPAddress` subject alternative name: 4 or 16 network-order bytes.
struct IPAddress: Hashable, Sendable {
    /// 4 bytes for IPv4, 16 for IPv6, network byte order.
    let bytes: [UInt8]
    /// The canonical text form (`inet_ntop`), so `0:0::1` and `::1` are recognised as the same address.
    let text: String

    /// Parses dotted-quad IPv4 or RFC 4291 IPv6 text; returns `nil` for anything else (ports, prefixes, zones).
    init?(parsing string: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, string, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v4) { Array($0) }, family: AF_INET)
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, string, &v6) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) }, family: AF_INET6)
            return
        }
        return nil
    }

    /// The address of 4 or 16 network-order bytes (as a subject alternative name holds it).
    init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self.init(bytes: bytes, family: AF_INET)
        case 16: self.init(bytes: bytes, family: AF_INET6)
        default: return nil
        }
    }

    private init?(bytes: [UInt8], family: Int32) {
        // INET6_ADDRSTRLEN (46) covers both families.
        var buffer = [CChar](repeating: 0, count: 46)
        let rendered = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard rendered != nil else { return nil }
        self.bytes = bytes
        self.text = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
