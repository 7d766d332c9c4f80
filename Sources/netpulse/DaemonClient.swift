import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PulseCore
import PulseFormats
import PulseQuery

/// `netpulse --daemon URL …`: a read asked of a daemon's HTTP API instead of the store, printed as the daemon sends
/// it. The daemon runs the same code on the same parameters (``Read``), so the bytes are those of the same command
/// on its host.
///
/// URLs: `unix:/run/netpulsed/http.sock` (the socket; who may connect is its group), `https://HOST:PORT` (TLS,
/// verified against `ca.pem`), or `http://127.0.0.1:PORT` (loopback without TLS). Over TCP the client presents an
/// operator's certificate and key when it finds them, and sends basic auth when it has a user; where it looks is
/// ``Credentials``.
struct DaemonClient {
    let url: String

    /// Where the operator's files are looked for, first found wins (`docs/api.md`, "The CLI against a daemon"):
    /// `NETPULSE_CA`, `NETPULSE_CERT` and `NETPULSE_KEY`, else `ca.pem`, `operator.pem` and `operator-key.pem` in
    /// `$XDG_CONFIG_HOME/netpulse` (`~/.config/netpulse`); basic auth from `NETPULSE_USER` with the password in the
    /// file `NETPULSE_PASSWORD_FILE`, else `credentials` there (one line, `USER:PASSWORD`, readable by its owner only).
    struct Credentials {
        var ca: String?
        var certificate: String?
        var key: String?
        var user: (name: String, password: String)?

        static func find() throws -> Credentials {
            let environment = ProcessInfo.processInfo.environment
            let home = environment["HOME"] ?? "/root"
            let directory = (environment["XDG_CONFIG_HOME"] ?? "\(home)/.config") + "/netpulse"
            func file(_ variable: String, _ name: String) -> String? {
                if let path = environment[variable], !path.isEmpty { return path }
                let path = "\(directory)/\(name)"
                return FileIO.exists(path) ? path : nil
            }
            var found = Credentials(
                ca: file("NETPULSE_CA", "ca.pem"), certificate: file("NETPULSE_CERT", "operator.pem"),
                key: file("NETPULSE_KEY", "operator-key.pem"))
            if let name = environment["NETPULSE_USER"], !name.isEmpty {
                guard let path = environment["NETPULSE_PASSWORD_FILE"] else {
                    throw QueryError(
                        "NETPULSE_USER is set without NETPULSE_PASSWORD_FILE (a file holding the password)")
                }
                found.user = (name, try FileIO.readString(path).trimmingWhitespace())
            } else if let path = file("NETPULSE_CREDENTIALS", "credentials") {
                let line = try FileIO.readString(path).trimmingWhitespace()
                guard let colon = line.firstIndex(of: ":") else {
                    throw QueryError("\(path): write one line, USER:PASSWORD")
                }
                found.user = (String(line[..<colon]), String(line[line.index(after: colon)...]))
            }
            return found
        }
    }

    /// Asks the daemon for `read` with `parameters` and writes the body to standard output as it arrives; an error
    /// the daemon answers with is thrown as its one line.
    func run(_ read: Read, _ parameters: ReadParameters) async throws {
        try await exchange(.GET, "/api/v1/\(read.rawValue)?\(Self.query(parameters))") { body in
            // Bytes as they come: a chunk may end inside a character.
            for try await chunk in body {
                try FileHandle.standardOutput.write(contentsOf: Data(chunk.readableBytesView))
            }
        }
    }

    /// Asks the daemon for a silence (`POST /api/v1/silences`, `[http] allow_silences`): its id, and its end as the
    /// daemon writes times.
    func silence(_ request: SilenceRequest) async throws -> (id: String, until: String) {
        let fields: [String: Any] = [
            "match": request.matchers, "for": Units.formatDuration(request.length), "comment": request.comment,
            "author": request.author,
        ]
        let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        var answer: [String: Any] = [:]
        try await exchange(.POST, "/api/v1/silences", body: body, expecting: .created) { response in
            let data = Data(try await response.collect(upTo: 1 << 16).readableBytesView)
            answer = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }
        guard let id = answer["id"] as? String, let until = answer["until"] as? String else {
            throw QueryError("the daemon's answer names no silence")
        }
        return (id, until)
    }

    /// Ends a silence now (`DELETE /api/v1/silences/ID`).
    func expireSilence(_ id: String) async throws {
        try await exchange(.DELETE, "/api/v1/silences/\(PercentEncoding.encode(id))") { _ in }
    }

    /// One request: its body read by `read` when the daemon answers `expecting`, else the daemon's error thrown as
    /// its one line.
    func exchange(
        _ method: HTTPMethod, _ path: String, body: Data? = nil, expecting: HTTPResponseStatus = .ok,
        read: (HTTPClientResponse.Body) async throws -> Void
    ) async throws {
        // Over the socket, who may connect is the file's business: no credentials are looked for.
        let credentials = url.hasPrefix("unix:") ? Credentials() : try Credentials.find()
        let (target, tls) = try endpoint(path: path, credentials: credentials)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(300))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            var request = HTTPClientRequest(url: target)
            request.method = method
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            if let user = credentials.user {
                let token = Data("\(user.name):\(user.password)".utf8).base64EncodedString()
                request.headers.add(name: "Authorization", value: "Basic \(token)")
            }
            let response = try await client.execute(request, timeout: .seconds(300))
            guard response.status == expecting else {
                let body = try await response.body.collect(upTo: 1 << 20)
                throw QueryError(Self.errorLine(String(buffer: body), status: response.status.code))
            }
            try await read(response.body)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// The request's URL and TLS configuration.
    func endpoint(path: String, credentials: Credentials) throws -> (String, TLSConfiguration?) {
        if url.hasPrefix("unix:") {
            var socket = String(url.dropFirst("unix:".count))
            while socket.hasPrefix("//") { socket.removeFirst() }
            guard socket.hasPrefix("/"), let target = URL(httpURLWithSocketPath: socket, uri: path) else {
                throw QueryError(
                    "--daemon \(url): use unix:/PATH/TO/http.sock, https://HOST:PORT or http://127.0.0.1:PORT")
            }
            return (target.absoluteString, nil)
        }
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        if base.hasPrefix("http://") { return (base + path, nil) }
        guard base.hasPrefix("https://") else {
            throw QueryError("--daemon \(url): use unix:/PATH/TO/http.sock, https://HOST:PORT or http://127.0.0.1:PORT")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let ca = credentials.ca { tls.trustRoots = .file(ca) }
        if let certificate = credentials.certificate, let key = credentials.key {
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            } catch {
                throw QueryError("cannot read the operator's certificate \(certificate) or key \(key): \(error)")
            }
        }
        return (base + path, tls)
    }

    /// `name=value&…`, percent-encoded (RFC 3986's unreserved characters stay).
    static func query(_ parameters: ReadParameters) -> String {
        parameters.items.map { "\(PercentEncoding.encode($0.name))=\(PercentEncoding.encode($0.value))" }.joined(
            separator: "&")
    }

    /// The daemon's one-line JSON error (`{"error": "…"}`), or what it sent with its status.
    static func errorLine(_ body: String, status: UInt) -> String {
        if let data = body.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let message = object["error"] as? String
        {
            return "the daemon answered \(status): \(message)"
        }
        return "the daemon answered \(status)\(body.isEmpty ? "" : ": \(body.prefix(200))")"
    }
}
