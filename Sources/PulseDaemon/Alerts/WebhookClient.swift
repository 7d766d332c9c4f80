import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PulseCore
import PulseSettings

/// The answer of a webhook.
public struct WebhookResponse: Sendable {
    public var status: Int
    /// The start of the body (at most 4 KiB), for logs.
    public var body: String
}

public struct WebhookError: Error, CustomStringConvertible {
    public var description: String
}

/// Posts one body (JSON for webhooks, a remote-write request) to an HTTP endpoint over HTTP/1.1 (TLS for https), with a deadline for the whole exchange.
///
/// A small client on SwiftNIO's HTTP codec rather than a general HTTP library: the daemon posts one body and
/// reads one status, and this keeps its dependencies to the NIO it already links.
public struct WebhookClient: Sendable {
    public let address: WebhookAddress
    public let tls: NIOSSLContext?
    public let bearerTokenFile: String?
    public let timeout: Int64

    /// - Parameter caFile: PEM certificates an https server must chain to; the system's trust store when nil.
    public init(address: WebhookAddress, caFile: String?, bearerTokenFile: String?, timeout: Int64) throws {
        self.address = address
        self.bearerTokenFile = bearerTokenFile
        self.timeout = timeout
        if address.secure {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            if let caFile {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            }
            tls = try NIOSSLContext(configuration: configuration)
        } else {
            tls = nil
        }
    }

    /// Posts `body`; `headers` are added to the request's own (Host, User-Agent, Content-Length, Connection and the
    /// bearer token).
    public func post(
        _ body: [UInt8], contentType: String = "application/json", headers extra: [(String, String)] = [],
        group: any EventLoopGroup
    ) async throws -> WebhookResponse {
        // The token is read at each post, so a rotated token applies without a reload.
        let token = try bearerTokenFile.map { path in
            do { return try FileIO.readString(path).trimmingWhitespace() } catch {
                throw WebhookError(description: "cannot read the bearer token file \(path): \(error)")
            }
        }
        let eventLoop = group.next()
        let promise = eventLoop.makePromise(of: WebhookResponse.self)
        let tls = self.tls
        let address = self.address
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.milliseconds(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        let isAddress = (try? SocketAddress(ipAddress: address.host, port: 0)) != nil
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: tls, serverHostname: isAddress ? nil : address.host))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseReader(promise: promise))
                }
            }
        let deadline = eventLoop.scheduleTask(in: .milliseconds(timeout)) {
            promise.fail(WebhookError(description: "no answer within \(Units.formatDuration(timeout))"))
        }
        defer { deadline.cancel() }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: address.host, port: address.port).get()
        } catch {
            promise.fail(error)
            throw WebhookError(description: "cannot connect to \(address.hostHeader): \(error)")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: address.hostHeader)
        headers.add(name: "User-Agent", value: "netpulsed/\(NetpulseVersion.string)")
        headers.add(name: "Content-Type", value: contentType)
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Connection", value: "close")
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: address.target, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        // A stop does not wait for the answer (or the timeout).
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(CancellationError())
        }
    }
}

/// Collects the response's status and the start of its body, and completes when it ends (or the connection does).
private final class ResponseReader: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let promise: EventLoopPromise<WebhookResponse>
    var status: Int?
    var body = [UInt8]()

    init(promise: EventLoopPromise<WebhookResponse>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(var buffer):
            if body.count < 4_096 {
                body += buffer.readBytes(length: min(buffer.readableBytes, 4_096 - body.count)) ?? []
            }
        case .end:
            promise.succeed(WebhookResponse(status: status ?? 0, body: String(decoding: body, as: UTF8.self)))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(WebhookError(description: "the connection closed before a complete answer"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}
