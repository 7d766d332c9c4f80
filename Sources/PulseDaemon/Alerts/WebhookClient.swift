import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PulseCore
import PulseSettings
import Synchronization

/// The answer of a webhook or a remote-write receiver.
public struct WebhookResponse: Sendable {
    public var status: Int
    /// The start of the body (at most 4 KiB), for logs.
    public var body: String
    /// The `Location` header, where a redirect points.
    public var location: String?

    /// What the log says of a 3xx answer, which the daemon never follows (docs/alerts.md, docs/remote-write.md): a
    /// POST would carry its body and bearer token to wherever the receiver points. Nil for any other answer.
    ///
    /// - Parameter setting: the setting that holds the URL, such as `[remote_write] url`.
    public func redirect(setting: String) -> String? {
        guard (300..<400).contains(status) else { return nil }
        guard let location else { return "a redirect without a Location, which netpulsed does not follow" }
        return "a redirect to \(location), which netpulsed does not follow: set \(setting) to the URL meant"
    }
}

public struct WebhookError: Error, CustomStringConvertible {
    public var description: String
}

/// Where the daemon posts (a webhook, a remote-write receiver): the URL, how an https server is verified, the bearer
/// token and how long one attempt may take.
public struct WebhookTarget: Sendable {
    public var url: String
    public var address: WebhookAddress
    /// For https: TLS 1.2 or later, the server verified against the CA file's certificates, or against the system's
    /// trust store when there is no CA file.
    public var tls: TLSConfiguration?
    /// Read at each post, so a rotated token applies without a reload.
    public var bearerTokenFile: String?
    /// Milliseconds one attempt may take, from connecting to the answer's last byte.
    public var timeout: Int64

    /// - Throws: ``WebhookError`` when `url` is not an http:// or https:// URL, or the CA file cannot be read.
    public init(url: String, caFile: String?, bearerTokenFile: String?, timeout: Int64) throws(WebhookError) {
        guard let address = WebhookAddress(parsing: url) else {
            throw WebhookError(description: "\"\(url)\" is not an http:// or https:// address")
        }
        self.url = url
        self.address = address
        self.bearerTokenFile = bearerTokenFile
        self.timeout = timeout
        guard address.secure else { return }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw WebhookError(description: "cannot read the CA file \(caFile): \(error)")
            }
        }
        self.tls = tls
    }
}

/// Posts bodies (webhook JSON, remote-write requests) over HTTP/1.1 with AsyncHTTPClient, one client per service: posts
/// to a receiver reuse a kept-alive connection, go through the proxy the environment names (``ProxyEnvironment``),
/// and never follow a redirect.
///
/// Made and shut down by ``with(group:logger:purpose:proxies:_:)`` around a service's run. The client is made at the
/// first post, and again when a reload moves the target to another proxy route.
public final class WebhookClient: Sendable {
    let group: any EventLoopGroup
    let proxies: ProxyEnvironment
    let logger: Logger
    /// What the posts are for, at the start of the client's log lines (`remote write`).
    let purpose: String
    private let state = Mutex(State())

    private struct State {
        var http: HTTPClient?
        /// What ``http`` was made for.
        var route: ProxyRoute?
        var connectTimeout: Int64 = 0
        var closed = false
    }

    init(group: any EventLoopGroup, logger: Logger, purpose: String, proxies: ProxyEnvironment) {
        self.group = group
        self.logger = logger
        self.purpose = purpose
        self.proxies = proxies
    }

    /// Runs `body` with a new client, and shuts the client down (closing its connections) once `body` returns or
    /// throws, so a service's connections end with its run.
    ///
    /// - Parameters:
    ///   - group: the event loops its connections run on (the process's shared ones by default).
    ///   - purpose: what the posts are for, at the start of the client's log lines (`remote write`).
    ///   - proxies: where the proxy variables are read (the process's environment by default).
    public static func with<Result, Failure: Error>(
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger, purpose: String,
        proxies: ProxyEnvironment = .process(),
        _ body: (WebhookClient) async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let client = WebhookClient(group: group, logger: logger, purpose: purpose, proxies: proxies)
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// POSTs `body` to `target` and reads the answer; `headers` are added to the request's own (Host, User-Agent,
    /// Content-Type, Content-Length and the bearer token). A task cancelled meanwhile ends the post at once.
    ///
    /// - Throws: ``WebhookError`` saying what failed: the token file, the proxy, the connection, or no answer
    ///   within the target's timeout; `CancellationError` when the task was cancelled.
    public func post(
        _ body: [UInt8], to target: WebhookTarget, contentType: String = "application/json",
        headers extra: [(String, String)] = []
    ) async throws -> WebhookResponse {
        let token = try target.bearerTokenFile.map { path in
            do { return try FileIO.readString(path).trimmingWhitespace() } catch {
                throw WebhookError(description: "cannot read the bearer token file \(path): \(error)")
            }
        }
        let (http, route) = try await client(for: target)
        var headers = HTTPHeaders()
        headers.add(name: "User-Agent", value: "netpulsed/\(NetpulseVersion.string)")
        headers.add(name: "Content-Type", value: contentType)
        for (name, value) in extra { headers.add(name: name, value: value) }
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        let request = Self.request(target, headers: headers, body: body)
        let logger = self.logger
        do {
            // AsyncHTTPClient's deadline ends with the answer's head; the race bounds the body too, so the timeout
            // bounds the whole attempt.
            return try await Self.within(target.timeout) {
                let response = try await http.execute(
                    request, deadline: .now() + .milliseconds(target.timeout), logger: logger)
                var start = [UInt8]()
                // The rest is read and dropped, so the connection can carry the next post.
                for try await chunk in response.body where start.count < 4_096 {
                    start += chunk.readableBytesView.prefix(4_096 - start.count)
                }
                return WebhookResponse(
                    status: Int(response.status.code), body: String(decoding: start, as: UTF8.self),
                    location: response.headers.first(name: "Location"))
            }
        } catch {
            throw Self.explained(error, target: target, route: route)
        }
    }

    static func request(_ target: WebhookTarget, headers: HTTPHeaders, body: [UInt8]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: target.url)
        request.method = .POST
        request.headers = headers
        request.body = .bytes(ByteBuffer(bytes: body))
        request.tlsConfiguration = target.tls
        return request
    }

    /// Closes the client's connections; a post after it fails. Waits for nothing but the closing.
    public func shutdown() async {
        let http = state.withLock { state in
            state.closed = true
            defer { state.http = nil }
            return state.http
        }
        do {
            try await http?.shutdown()
        } catch {
            logger.debug("\(purpose): closing its HTTP client: \(error)")
        }
    }

    /// The client for `target`'s proxy route, made when there is none for it yet (the one it replaces is shut down).
    private func client(for target: WebhookTarget) async throws -> (HTTPClient, ProxyRoute) {
        let route: ProxyRoute
        do {
            route = try proxies.route(to: target.address)
        } catch {
            throw WebhookError(description: error.description)
        }
        let (http, replaced, made) = try state.withLock { state throws(WebhookError) in
            guard !state.closed else { throw WebhookError(description: "\(purpose) is stopping") }
            if let http = state.http, state.route == route, state.connectTimeout == target.timeout {
                return (http, nil as HTTPClient?, false)
            }
            let http = HTTPClient(
                eventLoopGroup: group, configuration: Self.configuration(route, connectTimeout: target.timeout),
                backgroundActivityLogger: logger)
            let replaced = state.http
            (state.http, state.route, state.connectTimeout) = (http, route, target.timeout)
            return (http, replaced, true)
        }
        if let replaced { try? await replaced.shutdown() }
        if made {
            switch route {
            case .direct: break
            case .proxy(let server):
                logger.notice(
                    "\(purpose): \(target.address.endpoint) is reached through the proxy \(server) (\(server.variable))"
                )
            case .exempted(let variable, let noProxy, let entry):
                logger.notice(
                    "\(purpose): \(target.address.endpoint) is reached directly, not through \(variable): \(noProxy) lists \(entry)"
                )
            }
        }
        return (http, route)
    }

    static func configuration(_ route: ProxyRoute, connectTimeout: Int64) -> HTTPClient.Configuration {
        var proxy: HTTPClient.Configuration.Proxy?
        if case .proxy(let server) = route {
            proxy = .server(
                host: server.endpoint.host, port: server.endpoint.port,
                authorization: server.username.map { .basic(username: $0, password: server.password ?? "") })
        }
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .milliseconds(connectTimeout)), proxy: proxy)
        // HTTP/1.1, as before and as Prometheus' own remote-write sender does by default.
        configuration.httpVersion = .http1Only
        // A refused connection fails the attempt at once: the callers' backoff says when to try again.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// `operation`'s result, or ``WebhookError`` once `timeout` milliseconds have passed (`operation` is cancelled).
    static func within<Result: Sendable>(
        _ timeout: Int64, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask { try await operation() }
            tasks.addTask {
                try await Task.sleep(for: .milliseconds(timeout))
                return nil
            }
            defer { tasks.cancelAll() }
            guard let first = try await tasks.next(), let result = first else {
                throw WebhookError(description: "no answer within \(Units.formatDuration(timeout))")
            }
            return result
        }
    }

    /// A failed post in the words of the daemon's log.
    static func explained(_ error: any Error, target: WebhookTarget, route: ProxyRoute) -> any Error {
        if error is WebhookError || error is CancellationError { return error }
        let endpoint = target.address.endpoint
        let through: String
        if case .proxy(let server) = route {
            through = " through the proxy \(server) (\(server.variable))"
        } else {
            through = ""
        }
        let within = Units.formatDuration(target.timeout)
        guard let error = error as? HTTPClientError else {
            return WebhookError(description: "cannot connect to \(endpoint)\(through): \(error)")
        }
        let description: String
        switch error {
        case .deadlineExceeded, .readTimeout:
            description = "no answer within \(within)"
        case .connectTimeout:
            description = "cannot connect to \(endpoint)\(through): no connection within \(within)"
        case .remoteConnectionClosed:
            description = "the connection closed before a complete answer"
        case .proxyAuthenticationRequired:
            description =
                "cannot connect to \(endpoint)\(through): the proxy asks for credentials (407); give them as http://USER:PASSWORD@HOST:PORT"
        case .invalidProxyResponse, .httpProxyHandshakeTimeout:
            description = "cannot connect to \(endpoint)\(through): the proxy did not open a tunnel to it"
        case .cancelled:
            return CancellationError()
        default:
            description = "\(endpoint)\(through): \(error)"
        }
        return WebhookError(description: description)
    }
}
