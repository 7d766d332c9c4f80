import PulseCore
import PulseSettings
import Testing

@testable import PulseDaemon

/// The proxy variables read as curl reads them (`docs/configuration.md`, "Proxies"): which variable applies to which
/// scheme, which spelling wins, what a value may say, and which hosts the no-proxy list exempts.
@Suite struct ProxyEnvironmentTests {
    func route(_ url: String, _ environment: [String: String]) throws -> ProxyRoute {
        try ProxyEnvironment(environment).route(to: #require(WebhookAddress(parsing: url)))
    }

    func server(_ host: String, _ port: Int, _ variable: String, user: String? = nil, password: String? = nil)
        -> ProxyRoute
    {
        .proxy(
            ProxyServer(
                endpoint: Endpoint(host: host, port: port), username: user, password: password, variable: variable))
    }

    @Test func eachSchemeHasItsVariableAndLowercaseWins() throws {
        let both = [
            "http_proxy": "http://lower:3128", "HTTP_PROXY": "http://upper:3128",
            "https_proxy": "http://lower-tls:3128", "HTTPS_PROXY": "http://upper-tls:3128",
        ]
        #expect(try route("http://hooks.example/x", both) == server("lower", 3128, "http_proxy"))
        #expect(try route("https://hooks.example/x", both) == server("lower-tls", 3128, "https_proxy"))
        // The uppercase spellings when they are alone; HTTP_PROXY too, which curl leaves out (it is no CGI program).
        #expect(try route("http://a/", ["HTTP_PROXY": "http://upper:3128"]) == server("upper", 3128, "HTTP_PROXY"))
        #expect(try route("https://a/", ["HTTPS_PROXY": "upper:8080"]) == server("upper", 8080, "HTTPS_PROXY"))
        // One scheme's proxy is not the other's; ALL_PROXY is not read; an empty variable is not set.
        #expect(try route("https://a/", ["HTTP_PROXY": "http://p:3128"]) == .direct)
        #expect(try route("http://a/", ["HTTPS_PROXY": "http://p:3128"]) == .direct)
        #expect(try route("http://a/", ["ALL_PROXY": "http://p:3128"]) == .direct)
        #expect(try route("http://a/", ["http_proxy": "", "HTTP_PROXY": "http://p:1"]) == server("p", 1, "HTTP_PROXY"))
        #expect(try route("http://a/", [:]) == .direct)
    }

    @Test func valuesAsCurlTakesThem() throws {
        let cases: [(String, ProxyRoute)] = [
            ("proxy.example", server("proxy.example", 1080, "http_proxy")),
            ("http://proxy.example", server("proxy.example", 1080, "http_proxy")),
            ("HTTP://proxy.example:8080/", server("proxy.example", 8080, "http_proxy")),
            ("  http://10.0.0.1:3128/ignored/path  ", server("10.0.0.1", 3128, "http_proxy")),
            ("http://[fd00::1]:3128", server("fd00::1", 3128, "http_proxy")),
            ("[fd00::1]", server("fd00::1", 1080, "http_proxy")),
            (
                "http://ops%40example:p%3As%2Fs@proxy:3128",
                server("proxy", 3128, "http_proxy", user: "ops@example", password: "p:s/s")
            ),
            ("http://ops@proxy:3128", server("proxy", 3128, "http_proxy", user: "ops")),
        ]
        for (value, expected) in cases {
            #expect(try route("http://hooks.example/", ["http_proxy": value]) == expected, "\(value)")
        }
        // The log shows where the proxy is, never its password.
        if case .proxy(let proxy) = cases[6].1 { #expect("\(proxy)" == "proxy:3128") }
    }

    @Test func proxiesItCannotUseAreErrorsThatSayWhatToGive() throws {
        let cases = [
            (
                "socks5h://127.0.0.1:1080",
                "HTTPS_PROXY is \"socks5h://127.0.0.1:1080\": netpulsed goes through HTTP proxies only; give it as http://HOST:PORT, not socks5h://"
            ),
            (
                "https://proxy:443",
                "HTTPS_PROXY is \"https://proxy:443\": netpulsed goes through HTTP proxies only; give it as http://HOST:PORT, not https://"
            ),
            ("http://proxy:http", "HTTPS_PROXY is \"http://proxy:http\": give the proxy as http://HOST:PORT"),
            ("http://", "HTTPS_PROXY is \"http://\": give the proxy as http://HOST:PORT"),
            ("http://proxy:0", "HTTPS_PROXY is \"http://proxy:0\": give the proxy as http://HOST:PORT"),
        ]
        for (value, message) in cases {
            #expect(throws: ProxyError.self, "\(value)") { try route("https://a/", ["HTTPS_PROXY": value]) }
            do {
                _ = try route("https://a/", ["HTTPS_PROXY": value])
            } catch {
                #expect("\(error)" == message)
            }
        }
        // An exempted host needs no usable proxy.
        #expect(
            try route("https://a/", ["HTTPS_PROXY": "socks5://p", "NO_PROXY": "a"])
                == .exempted(variable: "HTTPS_PROXY", noProxy: "NO_PROXY", entry: "a"))
    }

    @Test func theNoProxyListMatchesNamesByDomainAndAddressesByNetwork() {
        let cases: [(host: String, list: String, entry: String?)] = [
            ("anything.example", "*", "*"),
            ("anything.example", " * ", "*"),
            ("example.com", "example.com", "example.com"),
            ("www.example.com", "example.com", "example.com"),
            ("www.example.com", ".example.com", ".example.com"),
            ("example.com", ".example.com", ".example.com"),
            ("WWW.Example.COM.", "example.com.", "example.com."),
            ("notexample.com", "example.com", nil),
            ("example.com", "www.example.com", nil),
            ("hooks.internal", "a.example, hooks.internal b.example", "hooks.internal"),
            ("hooks.internal", ",,a.example,,,", nil),
            ("127.0.0.1", "127.0.0.1", "127.0.0.1"),
            ("127.0.0.2", "127.0.0.1", nil),
            ("127.1.2.3", "127.0.0.0/8", "127.0.0.0/8"),
            ("128.0.0.1", "127.0.0.0/8", nil),
            ("10.1.2.3", "10.1.2.0/25", "10.1.2.0/25"),
            ("10.1.2.200", "10.1.2.0/25", nil),
            ("10.1.2.3", "10.0.0.0/33", nil),
            ("fd00::17", "fd00::/8", "fd00::/8"),
            ("fe80::1", "fd00::/8", nil),
            ("::1", "[::1]", "[::1]"),
            ("::1", "127.0.0.1", nil),
            // Names never match addresses, nor addresses names: loopback is reached directly only when listed.
            ("127.0.0.1", "localhost", nil),
            ("localhost", "127.0.0.0/8", nil),
            ("localhost", "localhost", "localhost"),
        ]
        for (host, list, entry) in cases {
            #expect(ProxyEnvironment.exemption(host: host, list: list) == entry, "\(host) in \(list)")
        }
    }

    @Test func noProxyAppliesToBothSchemesAndLowercaseWins() throws {
        let environment = [
            "HTTP_PROXY": "http://p:3128", "HTTPS_PROXY": "http://p:3128", "no_proxy": "hooks.example",
            "NO_PROXY": "*",
        ]
        #expect(
            try route("http://hooks.example:8080/x", environment)
                == .exempted(variable: "HTTP_PROXY", noProxy: "no_proxy", entry: "hooks.example"))
        #expect(
            try route("https://api.hooks.example/x", environment)
                == .exempted(variable: "HTTPS_PROXY", noProxy: "no_proxy", entry: "hooks.example"))
        #expect(try route("https://other.example/x", environment) == server("p", 3128, "HTTPS_PROXY"))
        #expect(
            try route("https://[::1]:9090/api/v1/write", ["HTTPS_PROXY": "p:3128", "NO_PROXY": "::1"])
                == .exempted(variable: "HTTPS_PROXY", noProxy: "NO_PROXY", entry: "::1"))
    }
}
