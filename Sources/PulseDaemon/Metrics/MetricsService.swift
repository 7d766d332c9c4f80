import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PulseCore
import ServiceLifecycle

/// Serves ``DaemonMetrics`` over plain HTTP at `GET /metrics` on `[metrics] listen`, for Prometheus to scrape.
///
/// It runs on its own event loop, apart from the agents' loops, so a scrape never waits behind TLS work and a
/// stuck scraper holds nothing of ingest. There is no authentication: bind it to loopback (the documented
/// address) or to an interface only the monitoring network reaches.
final class MetricsService: Service, Sendable {
    let channel: any Channel
    let group: MultiThreadedEventLoopGroup
    let url: String
    let logger: Logger

    /// Binds the address at once, so an address in use stops the daemon's start with the reason rather than
    /// failing later beside services already running.
    init(address: Endpoint, metrics: DaemonMetrics, sources: DaemonMetrics.Sources, logger: Logger) async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline(withErrorHandling: true).flatMapThrowing {
                        // A scraper's kept-alive connection silent for a minute is closed: idle ones cannot pile up.
                        // (On the channel's event loop, where handlers that are not Sendable are added.)
                        try channel.pipeline.syncOperations.addHandlers(
                            IdleStateHandler(readTimeout: .seconds(60)),
                            MetricsHandler(metrics: metrics, sources: sources))
                    }
                }
                .childChannelOption(.maxMessagesPerRead, value: 1)
                .bind(host: address.host, port: address.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw DaemonError("cannot serve metrics on \(address) ([metrics] listen): \(error)")
        }
        url = "http://\(Endpoint(host: address.host, port: channel.localAddress?.port ?? address.port))/metrics"
        self.logger = logger
    }

    func run() async throws {
        logger.notice("metrics: serving \(url)")
        await serve(until: channel)
        try? await group.shutdownGracefully()
    }
}

/// Answers one HTTP/1.1 connection: `GET` or `HEAD /metrics` with the exposition, anything else with 404 or 405.
private final class MetricsHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: DaemonMetrics
    let sources: DaemonMetrics.Sources

    init(metrics: DaemonMetrics, sources: DaemonMetrics.Sources) {
        self.metrics = metrics
        self.sources = sources
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let keepAlive = head.isKeepAlive
        let version = head.version
        guard head.method == .GET || head.method == .HEAD else {
            respond(
                context, version, .methodNotAllowed, "only GET and HEAD\n", keepAlive, extra: [("Allow", "GET, HEAD")])
            return
        }
        guard path == "/metrics" else {
            respond(context, version, .notFound, "netpulsed serves its metrics at /metrics\n", keepAlive)
            return
        }
        let headOnly = head.method == .HEAD
        let promise = context.eventLoop.makePromise(of: [UInt8].self)
        let (metrics, sources) = (self.metrics, self.sources)
        promise.completeWithTask { await metrics.exposition(from: sources) }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        promise.futureResult.whenSuccess { body in
            self.respond(
                loopBound.value, version, .ok, body, keepAlive, omitBody: headOnly,
                contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
    }

    private func respond(
        _ context: ChannelHandlerContext, _ version: HTTPVersion, _ status: HTTPResponseStatus, _ text: String,
        _ keepAlive: Bool, extra: [(String, String)] = []
    ) {
        respond(
            context, version, status, Array(text.utf8), keepAlive, contentType: "text/plain; charset=utf-8",
            extra: extra)
    }

    private func respond(
        _ context: ChannelHandlerContext, _ version: HTTPVersion, _ status: HTTPResponseStatus, _ body: [UInt8],
        _ keepAlive: Bool, omitBody: Bool = false, contentType: String, extra: [(String, String)] = []
    ) {
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", "\(body.count)")] + extra)
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        if !omitBody {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
