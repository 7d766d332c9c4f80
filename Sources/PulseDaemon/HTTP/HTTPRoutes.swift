import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PulseCore
import PulseFormats
import PulseQuery
import PulseSettings
import PulseStore

/// A request's context: the connection it came on, for the peer's certificate, and who the request was
/// authenticated as.
struct HTTPContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// Over TCP, the operator (`operator NAME`, from the certificate) or basic-auth user the request came from; nil
    /// on the Unix socket.
    var identity: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// What every listener serves (`docs/api.md`):
///
/// - `GET /api/v1/{rates,traffic,top,bill,export}`: the reads `netpulse` makes, with its option names as query
///   parameters and the same bytes in each format (`format=json`, the default here, `csv` or `table`); an export
///   streams. A bad request gets a 400 with one line of JSON naming the parameter.
/// - `GET /api/v1/openapi.json`: the OpenAPI description of the above, made from the same reads.
/// - `GET /metrics`: the daemon's own metrics in Prometheus' text format.
/// - `GET /`, `/dashboards/…`, `/assets/…`: the live dashboards (``LiveRoutes``).
///
/// Nothing here writes to the store, except silences when `[http] allow_silences` says so (``SilenceRoutes``).
struct HTTPRoutes: Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let clock: WallClock
    let metrics: DaemonMetrics
    let sources: DaemonMetrics.Sources
    /// Tells the live pages' event streams about stored buckets.
    let announcer: BucketAnnouncer
    /// The catalogue the daemon's readers share, read again when the store's series change.
    let catalogues: CatalogueCache
    /// The reads someone waits for, which the daemon's background readers give way to.
    let interactive: InteractiveReads
    let logger: Logger
    /// The live pages' shared reads, for every listener.
    let liveReads = LiveReads()

    func router(authentication: HTTPAuthentication?) -> Router<HTTPContext> {
        // HEAD is answered from each GET's route (`curl -I`), as a static server would.
        let router = Router(context: HTTPContext.self, options: .autoGenerateHeadEndpoints)
        if let authentication { router.add(middleware: authentication) }
        router.add(middleware: APIErrors(logger: logger))
        router.get("metrics") { _, _ in await MetricsService.exposition(metrics, sources) }
        let api = router.group("api/v1")
        let openAPI = ByteBuffer(string: OpenAPIDocument.json(version: NetpulseVersion.string))
        api.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: openAPI))
        }
        for read in Read.allCases {
            api.get(RouterPath(stringLiteral: read.rawValue)) { request, _ in
                // An export streams for as long as its client reads: background work does not wait for that.
                guard read != .export else { return try await answer(read, request) }
                return try await interactive.during { try await answer(read, request) }
            }
        }
        SilenceRoutes(store: store, config: config, clock: clock, logger: logger).add(to: api)
        LiveRoutes(routes: self, announcer: announcer, reads: liveReads).add(to: router)
        return router
    }

    /// Answers a read: its request is parsed and everything but an export's rows is read before the status is sent,
    /// so a bad request is a 4xx; an export's rows follow in chunks, slice by slice.
    func answer(_ read: Read, _ request: Request) async throws -> Response {
        let parameters = ReadParameters(
            request.uri.queryParameters.map { (String($0.key), String($0.value)) as (String, String?) })
        let now = clock.now()
        let (config, store, catalogues) = (self.config, self.store, self.catalogues)
        let prepared = try await read.prepare(
            parameters, defaultFormat: .json, settings: config.readSettings,
            engine: { try await config.readerEngine(over: store, cache: catalogues) }, now: now)
        let headers: HTTPFields = [.contentType: prepared.format.mediaType, .cacheControl: "no-store"]
        guard read == .export else {
            var buffer = ByteBuffer()
            try await prepared.write { buffer.writeString($0) }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: buffer))
        }
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                try await prepared.write { text in try await writer.write(ByteBuffer(string: text)) }
                try await writer.finish(nil)
            })
    }
}

/// One line of JSON for every error (`{"error": "...", "parameter": "..."}`): a request that cannot be answered as
/// asked is a 400 naming its parameter; anything else a 500 whose cause is logged, not shown.
struct APIErrors: RouterMiddleware {
    let logger: Logger

    func handle(
        _ request: Request, context: HTTPContext, next: (Request, HTTPContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as QueryError {
            return APIError(.badRequest, error.parameterText, parameter: error.parameter).response
        } catch let error as APIError {
            return error.response
        } catch let error as HTTPResponseError {
            throw error
        } catch {
            logger.error("http: \(request.method) \(request.uri.path) failed: \(error)")
            return APIError(.internalServerError, "the daemon could not answer: \(error)").response
        }
    }
}

/// An error the API answers with, as one line of JSON.
struct APIError: Error {
    var status: HTTPResponse.Status
    var message: String
    var parameter: String?
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, parameter: String? = nil) {
        self.status = status
        self.message = message
        self.parameter = parameter
    }

    var response: Response {
        var fields = [("error", JSONText.string(message))]
        if let parameter { fields.append(("parameter", JSONText.string(parameter))) }
        var headers = self.headers
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(
            status: status, headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: JSONText.object(fields) + "\n")))
    }
}
