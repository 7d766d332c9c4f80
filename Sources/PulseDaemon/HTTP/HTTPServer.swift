import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import PulseCertificates
import PulseCore
import PulseSettings
import PulseStore
import ServiceLifecycle
import X509

#if canImport(Glibc)
    import Glibc
#endif

/// `[http]`: the daemon's read-only HTTP server on hummingbird (`docs/api.md`), one `Application` per listener, each
/// a service of the daemon's group: the Unix socket (no authentication: the socket file's mode and group decide who
/// may connect) and TCP (TLS from the fleet's certificates unless `tls = false` on loopback; every request
/// authenticated by an operator's certificate or basic auth).
///
/// Listeners share the routes (``HTTPRoutes``) and nothing else. Connections are served on the singleton event loops
/// NIO shares with the HTTP client, never the agents' loops, so a slow reader holds nothing of ingest; requests
/// themselves run as Swift tasks and read through the store's reader connections.
enum HTTPServer {
    /// The services serving `settings`: none when neither the socket nor TCP is set. Files (the TLS certificate and
    /// key, the users file) are read now, so a bad one stops the daemon's start with its path.
    ///
    /// - Parameter revoked: the revocation list in force (``TLSContextBox``): an operator's certificate in it is
    ///   refused.
    static func services(
        _ settings: HTTPSettings, revoked: @escaping @Sendable () -> RevocationList = { RevocationList() },
        routes: HTTPRoutes, logger: Logger, onListening: @escaping @Sendable (String) -> Void
    ) throws -> [any Service] {
        var services = [any Service]()
        let http1 = HTTP1Channel.Configuration(idleTimeout: .milliseconds(settings.idleTimeout))
        if let path = settings.socket {
            if let group = settings.socketGroup, getgrnam(group) == nil {
                throw DaemonError("[http] socket_group \(group): no such group (make it with groupadd, or unset it)")
            }
            try prepareSocket(path)
            let app = Application(
                router: routes.router(authentication: nil),
                server: .http1(configuration: http1),
                configuration: ApplicationConfiguration(
                    address: .unixDomainSocket(path: path), serverName: nil,
                    availableConnectionsDelegate: .maximum(settings.maximumConnections, logger: logger)),
                onServerRunning: { _ in
                    do {
                        try shareSocket(path, group: settings.socketGroup)
                    } catch {
                        // Still 0600-ish and the daemon's own: safe, only less useful.
                        logger.error("\(error)")
                    }
                    logger.notice("http: serving the API on unix:\(path)")
                    onListening("unix:\(path)")
                },
                logger: logger)
            services.append(app)
        }
        if let listen = settings.listen {
            let users = try settings.usersFile.map(BasicAuthUsers.init(path:))
            // An operator's certificate comes from a root of the CA file itself, never from an issuing CA under it
            // (whose key the daemon's host holds to renew agents): see HTTPAuthentication.
            let roots: [Certificate]
            do {
                roots = try settings.files.map { try ClientCertificateCheck.load(ca: $0.ca, revoked: nil).roots } ?? []
            } catch {
                throw DaemonError("[http]: \(error)")
            }
            let authentication = HTTPAuthentication(
                users: users, certificates: settings.tls, roots: roots, revoked: revoked, logger: logger)
            let server: HTTPServerBuilder
            if settings.tls, let files = settings.files {
                var tls: TLSConfiguration
                do { tls = try TLSSetup.server(files) } catch {
                    throw DaemonError("[http]: \(error)")
                }
                // Browsers have no client certificate: they use basic auth. One presented must chain to the CA.
                tls.certificateVerification = .optionalVerification
                // HTTP/2 when the client offers it (ALPN), else HTTP/1.1. A browser opens at most six HTTP/1.1
                // connections to a host, and each live page holds one for its event stream: the seventh tab of
                // dashboards would wait forever. Over HTTP/2 every page and stream shares one connection.
                server = try .http2Upgrade(
                    tlsConfiguration: tls,
                    configuration: .init(
                        idleTimeout: .milliseconds(settings.idleTimeout), streamConfiguration: http1))
            } else {
                server = .http1(configuration: http1)
            }
            let scheme = settings.tls ? "https" : "http"
            let app = Application(
                router: routes.router(authentication: authentication),
                server: server,
                configuration: ApplicationConfiguration(
                    address: .hostname(listen.host, port: listen.port), serverName: nil,
                    availableConnectionsDelegate: .maximum(settings.maximumConnections, logger: logger)),
                onServerRunning: { channel in
                    let port = channel.localAddress?.port ?? listen.port
                    let url = "\(scheme)://\(Endpoint(host: listen.host, port: port))"
                    logger.notice("http: serving the API on \(url)")
                    onListening(url)
                },
                logger: logger)
            services.append(app)
        }
        return services
    }

    /// Makes way for the socket: its directory is created (0755) if missing, and a socket file left by a daemon
    /// that is gone is removed. A live one (another daemon answers on it) is an error, as is any other file there.
    static func prepareSocket(_ path: String) throws {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty { try FileIO.createDirectory(directory, mode: 0o755) }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw DaemonError("[http] socket \(path) exists and is not a socket: move it away or choose another path")
        }
        if UnixSocket.answers(path) {
            throw DaemonError(
                "[http] socket \(path) is in use (another netpulsed?): stop it, or give this daemon another [http] socket"
            )
        }
        unlink(path)
    }

    /// Gives the socket mode 0660 and, when `group` is set, that group: who may connect is who may write to it.
    static func shareSocket(_ path: String, group: String?) throws {
        if let group {
            guard let entry = getgrnam(group) else {
                throw DaemonError("[http] socket_group \(group): no such group (make it with groupadd, or unset it)")
            }
            guard chown(path, uid_t.max, entry.pointee.gr_gid) == 0 else {
                throw DaemonError(
                    "[http] socket_group \(group): cannot give \(path) to it (\(String(cString: strerror(errno)))); the daemon must be a member"
                )
            }
        }
        guard chmod(path, 0o660) == 0 else {
            throw DaemonError("[http] socket \(path): cannot set its mode (\(String(cString: strerror(errno))))")
        }
    }
}

/// Whether something accepts connections on a Unix socket.
enum UnixSocket {
    static func answers(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
