import Foundation
import Hummingbird
import NIOCore
import NIOSSL
import PulseCertificates

/// Who may read over TCP: a client certificate of the operator role (`netpulse ca issue --operator NAME`), which
/// TLS has already chained to the fleet CA, or HTTP basic auth against `[http] users_file`. An agent's certificate
/// is refused (403): an agent's key, on every host of the fleet, must not read the fleet's data. Anything else gets
/// a 401 asking for basic auth.
struct HTTPAuthentication: RouterMiddleware {
    let users: BasicAuthUsers?
    /// Whether the listener is TLS (a peer certificate may then be there).
    let certificates: Bool

    func handle(
        _ request: Request, context: HTTPContext, next: (Request, HTTPContext) async throws -> Response
    ) async throws -> Response {
        if certificates, let peer = try? await context.channel.nioSSL_peerCertificate().get() {
            guard let der = try? peer.toDERBytes(), CertificateRole(derEncoded: der) == .operator else {
                return APIError(
                    .forbidden,
                    "this client certificate is not an operator's: issue one with `netpulse ca issue --operator NAME`"
                ).response
            }
            return try await next(request, context)
        }
        if let users, let (user, password) = Self.basicCredentials(request.headers[.authorization]) {
            if users.check(user: user, password: password) { return try await next(request, context) }
        }
        var refusal = APIError(
            .unauthorized,
            users == nil
                ? "present an operator's client certificate (netpulse ca issue --operator NAME)"
                : "log in with a user of [http] users_file, or present an operator's client certificate")
        if users != nil { refusal.headers[.wwwAuthenticate] = "Basic realm=\"netpulse\", charset=\"UTF-8\"" }
        return refusal.response
    }

    /// The user and password of an `Authorization: Basic …` header (RFC 7617).
    static func basicCredentials(_ header: String?) -> (String, String)? {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "basic " else { return nil }
        guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
