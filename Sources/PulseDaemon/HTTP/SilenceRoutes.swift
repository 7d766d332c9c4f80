import Foundation
import Hummingbird
import Logging
import NIOCore
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore

/// Silences over HTTP, the only requests that change the store, and only when `[http] allow_silences` is set
/// (`docs/api.md`, "Silences"):
///
/// - `POST /api/v1/silences` with a JSON object whose fields are `netpulse alerts silence`'s options (`match`, an
///   object of label names and globs; `for`; `comment`; `author`): 201 with the silence's id and end;
/// - `DELETE /api/v1/silences/ID`: ends it now (200), or 404 when there is no such silence.
///
/// Over TCP the silence's author is who the request authenticated as (an operator's certificate, a basic-auth user),
/// whatever the body says: a listing then shows who really silenced what. On the Unix socket, whose users the file's
/// group decides, it is the body's `author`. Every silence made or ended is logged with its author.
struct SilenceRoutes: Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let clock: WallClock
    let logger: Logger

    /// The largest body taken: a silence's fields are bounded far below it (``SilenceRequest``).
    static let largestBody = 64 * 1_024

    func add(to api: RouterGroup<HTTPContext>) {
        api.post("silences") { request, context in try await create(request, context) }
        api.delete("silences/:id") { request, context in
            // The path's segment as sent: percent-encoded.
            let raw = try context.parameters.require("id")
            return try await expire(raw.removingPercentEncoding ?? raw, request, context)
        }
    }

    func refuseUnlessAllowed() throws {
        guard config.http.allowSilences else {
            throw APIError(
                .forbidden,
                "this daemon takes no silences over HTTP: set [http] allow_silences = true, or run netpulse alerts silence on its host"
            )
        }
    }

    /// The most silences in force at once that clients may make over HTTP: each round of notifications reads them
    /// all, so one with the right to silence must not be able to add them without end.
    static let mostInForce = 1_000

    /// A silence only as JSON: a page on another site can post a form or plain text with the browser's
    /// credentials, but not JSON without a preflight this server never grants.
    func refuseUnlessJSON(_ request: Request) throws {
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard type?.lowercased() == "application/json" else {
            throw APIError(.unsupportedMediaType, "send the silence as Content-Type: application/json")
        }
    }

    /// Nothing a browser marks as coming from another site's page (`Sec-Fetch-Site`, or an `Origin` other than the
    /// daemon's own), whether a silence is made or `ended`.
    func refuseFromAnotherSite(_ request: Request, _ doing: String) throws {
        if let site = request.headers[HTTPFields.Element.Name("Sec-Fetch-Site")!], site != "same-origin", site != "none"
        {
            throw APIError(
                .forbidden, "a silence cannot be \(doing) from another site's page (Sec-Fetch-Site: \(site))")
        }
        if let origin = request.headers[.origin], let host = request.head.authority,
            origin != "https://\(host)", origin != "http://\(host)"
        {
            throw APIError(.forbidden, "a silence cannot be \(doing) from another site's page (Origin: \(origin))")
        }
    }

    /// A JSON answer, never cached.
    static func answer(_ status: HTTPResponse.Status, _ fields: [(String, String)]) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: JSONText.object(fields) + "\n")))
    }

    func create(_ request: Request, _ context: HTTPContext) async throws -> Response {
        try refuseUnlessAllowed()
        try refuseUnlessJSON(request)
        try refuseFromAnotherSite(request, "made")
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: Self.largestBody)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "the body is larger than \(Self.largestBody) bytes")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else {
            throw APIError(.badRequest, #"send a JSON object: {"match": {"alertname": "UplinkBusy"}, "for": "2h"}"#)
        }
        let known: Set<String> = ["match", "for", "comment", "author"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError(
                .badRequest, "unknown field '\(unknown)'; a silence takes \(known.sorted().joined(separator: ", "))",
                parameter: unknown)
        }
        func text(_ name: String, default fallback: String? = nil) throws -> String {
            switch object[name] {
            case let value as String: return value
            case nil:
                guard let fallback else { throw APIError(.badRequest, "\(name) is missing", parameter: name) }
                return fallback
            default: throw APIError(.badRequest, "\(name) must be a string", parameter: name)
            }
        }
        guard let match = object["match"] as? [String: Any], let matchers = match as? [String: String] else {
            throw APIError(
                .badRequest, #"match must be an object of label names and globs: {"host": "web-*"}"#,
                parameter: "match")
        }
        let now = clock.now()
        let inForce = try await store.silences().count { $0.endsAt > now }
        guard inForce < Self.mostInForce else {
            throw APIError(
                .conflict,
                "\(inForce) silences are in force, the most that can be made over HTTP; end some (DELETE /api/v1/silences/ID) first"
            )
        }
        let author: String
        if let identity = context.identity {
            author = identity
        } else {
            author = try text("author", default: "unix socket")
        }
        let silence = try SilenceRequest(
            matchers: matchers, for: try text("for"), comment: try text("comment", default: ""), author: author
        ).silence(id: UUID().uuidString.lowercased(), now: now)
        try await store.saveSilence(silence)
        logger.notice(
            "silence \(silence.id) made over HTTP by \(author) until \(RFC3339.text(silence.endsAt)): \(silence.matchers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))"
        )
        return Self.answer(
            .created,
            [
                ("id", JSONText.string(silence.id)), ("endsAt", JSONText.string(RFC3339.text(silence.endsAt))),
                ("until", JSONText.string(config.calendar.localText(silence.endsAt))),
                ("createdBy", JSONText.string(silence.createdBy)),
            ])
    }

    func expire(_ id: String, _ request: Request, _ context: HTTPContext) async throws -> Response {
        try refuseUnlessAllowed()
        try refuseFromAnotherSite(request, "ended")
        guard id.utf8.count <= 128, try await store.expireSilence(id: id, at: clock.now()) else {
            throw APIError(.notFound, "no silence \(id.prefix(128)); /api/v1/alerts lists them")
        }
        logger.notice("silence \(id) ended over HTTP by \(context.identity ?? "a user of the unix socket")")
        return Self.answer(.ok, [("id", JSONText.string(id)), ("ended", "true")])
    }
}
