import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCertificates
import Synchronization
import X509

/// Who may read over TCP: a client certificate of the operator role (`netpulse ca issue --operator NAME`), which
/// TLS has already chained to the fleet CA, or HTTP basic auth against `[http] users_file`. An agent's certificate
/// is refused (403): an agent's key, on every host of the fleet, must not read the fleet's data. Anything else gets
/// a 401 asking for basic auth. An operator's certificate in the revocation list (`[tls] revoked`) is refused
/// (403) and logged: browsers present none, so the HTTP listener lets TLS chain a certificate and checks the list
/// here, per request, with the list the agents' listener uses (reloaded with it).
struct HTTPAuthentication: RouterMiddleware {
    let users: BasicAuthUsers?
    /// Whether the listener is TLS (a peer certificate may then be there).
    let certificates: Bool
    /// The roots of the CA file: an operator's certificate must be signed by one of them directly. TLS accepts a
    /// chain through an issuing CA too, but that CA's key is on the daemon's host to renew agents, and whoever got
    /// it must not be able to make themselves an operator.
    var roots: [Certificate] = []
    /// The revocation list in force.
    var revoked: @Sendable () -> RevocationList = { RevocationList() }
    var logger: Logger? = nil
    /// Where passwords are checked: off the Swift runtime's threads, a few at a time.
    let checks = PasswordChecks()

    func handle(
        _ request: Request, context: HTTPContext, next: (Request, HTTPContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        if certificates, let peer = await Self.peerCertificate(context.channel) {
            guard let der = try? peer.toDERBytes(), let certificate = try? Certificate(derEncoded: der),
                CertificateRole(of: certificate) == .operator
            else {
                return APIError(
                    .forbidden,
                    "this client certificate is not an operator's: issue one with `netpulse ca issue --operator NAME`"
                ).response
            }
            guard roots.contains(where: { $0.issued(certificate) }) else {
                logger?.warning(
                    "http: refused the operator certificate of \(CertificateRole.commonName(of: certificate) ?? "?"): not issued by a root of the CA file"
                )
                return APIError(
                    .forbidden,
                    "this operator certificate is not issued by the fleet's root CA: issue it with `netpulse ca issue --dir /etc/netpulse/ca --operator NAME`"
                ).response
            }
            if let entry = revoked().entry(for: certificate) {
                logger?.warning("http: refused the operator certificate \(entry.description): it is revoked")
                return APIError(.forbidden, "this client certificate is revoked").response
            }
            context.identity = "operator \(CertificateRole.commonName(of: certificate) ?? "?")"
            return try await next(request, context)
        }
        if let users, let (user, password) = Self.basicCredentials(request.headers[.authorization]) {
            context.identity = user
            if users.remembered(user: user, password: password) { return try await next(request, context) }
            guard let checked = try await checks.run({ users.check(user: user, password: password) }) else {
                var busy = APIError(.serviceUnavailable, "too many logins being checked at once; try again in a second")
                busy.headers[.retryAfter] = "1"
                return busy.response
            }
            if checked { return try await next(request, context) }
        }
        var refusal = APIError(
            .unauthorized,
            users == nil
                ? "present an operator's client certificate (netpulse ca issue --operator NAME)"
                : "log in with a user of [http] users_file, or present an operator's client certificate")
        if users != nil { refusal.headers[.wwwAuthenticate] = "Basic realm=\"netpulse\", charset=\"UTF-8\"" }
        return refusal.response
    }

    /// The certificate the client presented, if any. Over HTTP/1.1 the request's channel is the connection, which
    /// holds the TLS handler; over HTTP/2 it is a stream, whose parent is the connection. (An HTTP/1.1
    /// connection's parent is the listening socket, which has no TLS handler and so no certificate.)
    static func peerCertificate(_ channel: any Channel) async -> NIOSSLCertificate? {
        if let peer = try? await channel.nioSSL_peerCertificate().get() { return peer }
        return try? await channel.parent?.nioSSL_peerCertificate().get()
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

/// Runs bcrypt checks on NIO's blocking-work pool, one at a time, with a few more waiting their turn. A check costs
/// ~50 ms of CPU by design; on the Swift runtime's few threads a flood of wrong passwords would hold up the daemon's
/// other work (billing, alerts, drawing, the API itself). One at a time, a flood costs the daemon at most one core;
/// past ``waiting`` queued logins a new one is answered 503 at once. Credentials that matched before are let in
/// without a check (``BasicAuthUsers/remembered(user:password:)``), so a flood does not lock out users already in.
final class PasswordChecks: Sendable {
    /// Logins that may wait for the one being checked (a browser's first requests after a login arrive together).
    static let waiting = 16
    private let state = Mutex<(busy: Bool, queue: [CheckedContinuation<Bool, Never>])>((false, []))

    /// The check's result, or nil when too many wait already.
    func run(_ check: @escaping @Sendable () -> Bool) async throws -> Bool? {
        let admitted = await withCheckedContinuation { (turn: CheckedContinuation<Bool, Never>) in
            let now: Bool? = state.withLock { state in
                if !state.busy {
                    state.busy = true
                    return true
                }
                guard state.queue.count < Self.waiting else { return false }
                state.queue.append(turn)
                return nil
            }
            if let now { turn.resume(returning: now) }
        }
        guard admitted else { return nil }
        defer {
            // The turn passes to the next in line, or the checker is free.
            let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard !state.queue.isEmpty else {
                    state.busy = false
                    return nil
                }
                return state.queue.removeFirst()
            }
            next?.resume(returning: true)
        }
        return try await NIOThreadPool.singleton.runIfActive(check)
    }
}
