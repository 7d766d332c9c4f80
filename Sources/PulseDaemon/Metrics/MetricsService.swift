import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PulseCore
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// `[metrics] listen`: the daemon's own metrics (``DaemonMetrics``) in plain HTTP at `GET /metrics`, for Prometheus
/// to scrape, and nothing else. Every `[http]` listener serves the same endpoint (``HTTPRoutes``); this one is kept
/// as an alias from before `[http]`, so configs and scrape jobs written then keep working. It is a hummingbird
/// application like `[http]`'s, with one route, on the event loops NIO shares (never the agents' loops, so a scrape
/// never waits behind TLS work and a stuck scraper holds nothing of ingest).
///
/// There is no authentication: bind it to loopback (the documented address) or to an interface only the monitoring
/// network reaches. An `[http]` listener over TLS serves the same metrics to an authenticated scraper.
final class MetricsService: Service, Sendable {
    let address: Endpoint
    let app: Application<RouterResponder<BasicRequestContext>>

    /// Checks at once that the address can be bound, so an address in use stops the daemon's start with the reason
    /// rather than failing later beside services already running.
    init(address: Endpoint, metrics: DaemonMetrics, sources: DaemonMetrics.Sources, logger: Logger) async throws {
        self.address = address
        if let reason = Self.unbindable(address) {
            throw DaemonError("cannot serve metrics on \(address) ([metrics] listen): \(reason)")
        }
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.get("metrics") { _, _ in await Self.exposition(metrics, sources) }
        // GET and HEAD (answered from GET's route) only; another path is a 404.
        for method in [HTTPRequest.Method.post, .put, .delete, .patch, .options, .trace, .connect] {
            router.on("metrics", method: method) { _, _ in
                Response(
                    status: .methodNotAllowed, headers: [.allow: "GET, HEAD", .contentType: "text/plain"],
                    body: .init(byteBuffer: ByteBuffer(string: "only GET and HEAD\n")))
            }
        }
        app = Application(
            router: router,
            // A scraper's kept-alive connection silent for a minute is closed: idle ones cannot pile up.
            server: .http1(configuration: .init(idleTimeout: .seconds(60))),
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                logger.notice("metrics: serving http://\(Endpoint(host: address.host, port: port))/metrics")
            },
            logger: logger)
    }

    func run() async throws {
        do {
            try await app.run()
        } catch {
            throw DaemonError("cannot serve metrics on \(address) ([metrics] listen): \(error)")
        }
    }

    /// The exposition as a response: the one body every `/metrics` answers with.
    static func exposition(_ metrics: DaemonMetrics, _ sources: DaemonMetrics.Sources) async -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: await metrics.exposition(from: sources))))
    }

    /// Why `address` cannot be bound now (in use, not this host's, no such name), or nil when it can: a trial
    /// bind, closed at once, as the server binds it (with SO_REUSEADDR, which still refuses a port another socket
    /// listens on).
    static func unbindable(_ address: Endpoint) -> String? {
        let socketAddress: SocketAddress
        do {
            socketAddress = try SocketAddress.makeAddressResolvingHost(address.host, port: address.port)
        } catch {
            return "\(error)"
        }
        let descriptor = socket(
            socketAddress.protocol == .inet6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = socketAddress.withSockAddr { pointer, length in bind(descriptor, pointer, socklen_t(length)) }
        return bound == 0 ? nil : String(cString: strerror(errno))
    }
}
