import Foundation
import PulseCore
import PulseSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An HTTP proxy named by the environment: the daemon connects to it in clear text and asks it, with `CONNECT`, for
/// a tunnel to the receiver (TLS to an https receiver then runs inside the tunnel).
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible {
    public var endpoint: Endpoint
    /// From `http://USER:PASSWORD@HOST:PORT`, percent-decoded; sent to the proxy as basic `Proxy-Authorization`.
    public var username: String?
    public var password: String?
    /// The variable that named it (`HTTPS_PROXY`, `http_proxy` …), for the log.
    public var variable: String

    /// The proxy's address, never its password.
    public var description: String { endpoint.description }
}

/// How a request reaches a receiver.
public enum ProxyRoute: Sendable, Hashable {
    /// No variable names a proxy for the receiver's scheme.
    case direct
    case proxy(ProxyServer)
    /// `variable` names a proxy, but the no-proxy list (`noProxy` names its variable) has `entry`, which matches the
    /// receiver's host.
    case exempted(variable: String, noProxy: String, entry: String)
}

/// A proxy variable that the daemon cannot use, with what to set instead.
public struct ProxyError: Error, CustomStringConvertible {
    public var description: String
}

/// The proxies that the environment names for the daemon's webhooks and remote write, read as curl reads them
/// (`docs/configuration.md`, "Proxies"):
///
/// - an `https://` receiver goes through `https_proxy`, or `HTTPS_PROXY` when that is not set; an `http://` receiver
///   through `http_proxy`, or `HTTP_PROXY` (which curl ignores, since a CGI program gets it from a request's `Proxy:`
///   header; the daemon is no CGI program). An empty variable counts as not set. `ALL_PROXY` is not read.
/// - a value is `[http://][USER:PASSWORD@]HOST[:PORT]`, port 1080 when it has none (curl's default); other schemes
///   (`https://`, `socks5://` …) are refused with a ``ProxyError``.
/// - `no_proxy`, or `NO_PROXY`, lists hosts that are reached directly, separated by commas or blanks: `*` alone is
///   every host; a name matches itself and the names under it (`example.com` and `.example.com` both match
///   `example.com` and `www.example.com`, not `notexample.com`), without regard to case or a trailing dot; an IP
///   address matches an IP host equal to it, or in it with `/BITS` (`10.0.0.0/8`, `fd00::/8`). Names never match
///   addresses and ports are not compared, as with curl; loopback is not exempted unless listed.
public struct ProxyEnvironment: Sendable, Hashable {
    /// A variable that is set, by name.
    struct Variable: Sendable, Hashable {
        var name: String
        var value: String
    }

    let http: Variable?
    let https: Variable?
    let noProxy: Variable?

    /// Reads the variables from `environment` (the process's, or a test's).
    public init(_ environment: [String: String]) {
        func first(_ names: String...) -> Variable? {
            for name in names {
                if let value = environment[name], !value.isEmpty { return Variable(name: name, value: value) }
            }
            return nil
        }
        http = first("http_proxy", "HTTP_PROXY")
        https = first("https_proxy", "HTTPS_PROXY")
        noProxy = first("no_proxy", "NO_PROXY")
    }

    /// The daemon's own environment.
    public static func process() -> ProxyEnvironment { ProxyEnvironment(ProcessInfo.processInfo.environment) }

    /// How a request to `address` goes.
    ///
    /// - Throws: ``ProxyError`` when the variable for the address's scheme is not an HTTP proxy's address.
    public func route(to address: WebhookAddress) throws(ProxyError) -> ProxyRoute {
        guard let variable = address.secure ? https : http else { return .direct }
        if let noProxy, let entry = Self.exemption(host: address.host, list: noProxy.value) {
            return .exempted(variable: variable.name, noProxy: noProxy.name, entry: entry)
        }
        return .proxy(try Self.server(variable))
    }

    /// The proxy a variable names.
    static func server(_ variable: Variable) throws(ProxyError) -> ProxyServer {
        let value = variable.value.trimmingWhitespace()
        func invalid(_ why: String) -> ProxyError {
            ProxyError(description: "\(variable.name) is \"\(value)\": \(why)")
        }
        var rest = Substring(value)
        if let separator = rest.firstRange(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            guard scheme == "http" else {
                throw invalid("netpulsed goes through HTTP proxies only; give it as http://HOST:PORT, not \(scheme)://")
            }
            rest = rest[separator.upperBound...]
        }
        // A path after the proxy's address means nothing (curl ignores it too).
        var authority = rest.prefix { $0 != "/" }
        var username: String?
        var password: String?
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            let colon = credentials.firstIndex(of: ":")
            username = percentDecoded(credentials[..<(colon ?? credentials.endIndex)])
            password = colon.map { percentDecoded(credentials[credentials.index(after: $0)...]) }
            authority = authority[authority.index(after: at)...]
        }
        let hasPort = authority.contains("]:") || (!authority.hasPrefix("[") && authority.contains(":"))
        guard !authority.isEmpty,
            let endpoint = Endpoint(parsing: hasPort ? String(authority) : "\(authority):1080"), endpoint.port > 0
        else {
            throw invalid("give the proxy as http://HOST:PORT")
        }
        return ProxyServer(endpoint: endpoint, username: username, password: password, variable: variable.name)
    }

    /// The entry of a no-proxy list that matches `host`, if any (curl's rules: see the type's documentation).
    static func exemption(host: String, list: String) -> String? {
        if list.trimmingWhitespace() == "*" { return "*" }
        let entries = list.split { $0 == "," || $0 == " " || $0 == "\t" }
        if let address = ipAddress(host) {
            return entries.first { entry in
                let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
                var network = parts[0]
                if network.hasPrefix("["), network.hasSuffix("]") { network = network.dropFirst().dropLast() }
                guard let network = ipAddress(network), network.count == address.count else { return false }
                let bits = parts.count == 2 ? Int(parts[1]) : address.count * 8
                guard let bits, (0...address.count * 8).contains(bits) else { return false }
                return sharePrefix(address, network, bits: bits)
            }.map(String.init)
        }
        let name = (host.hasSuffix(".") ? host.dropLast() : Substring(host)).lowercased()
        return entries.first { entry in
            var domain = entry.hasSuffix(".") ? entry.dropLast() : entry
            if domain.hasPrefix(".") { domain = domain.dropFirst() }
            let suffix = domain.lowercased()
            return !suffix.isEmpty && (name == suffix || name.hasSuffix("." + suffix))
        }.map(String.init)
    }

    /// The bytes of an IPv4 (4) or IPv6 (16) address, in network order; nil for anything else.
    static func ipAddress(_ text: some StringProtocol) -> [UInt8]? {
        let text = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    static func sharePrefix(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
        let whole = bits / 8
        guard a.prefix(whole) == b.prefix(whole) else { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - rest)
        return a[whole] & mask == b[whole] & mask
    }

    /// `%XX` escapes decoded (credentials in a proxy URL); text that is not valid UTF-8 afterwards is kept as it was.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes = [UInt8]()
        var utf8 = text.utf8[...]
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let high = hex(utf8[utf8.startIndex]),
                let low = hex(utf8[utf8.index(after: utf8.startIndex)])
            {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? String(text)
    }
}
