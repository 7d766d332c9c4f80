import NIOCore
import NIOPosix
import NIOSSL
import PulseCertificates
import Synchronization

/// What a client saw after sending one byte.
enum ExchangeOutcome: Equatable, Sendable {
    case echoed([UInt8])
    case closedWithoutReply
    /// Every error the client's pipeline saw, then the one that ended the exchange.
    case failed([String])

    var isEcho: Bool {
        if case .echoed = self { return true }
        return false
    }

    var errors: [String] {
        if case .failed(let errors) = self { return errors }
        return []
    }
}

/// Connects to the server on 127.0.0.1, writes one byte and reads the reply.
///
/// With TLS 1.3 the client finishes its side of the handshake before the server has looked at the client
/// certificate, so a refusal only shows when reading: as an alert, or as the connection closing.
func exchange(
    port: Int,
    serverHostname: String?,
    trusting caFile: String,
    identity: IssuedCertificate?
) async -> ExchangeOutcome {
    // A failed handshake closes the channel, so the error the caller sees is often just "I/O on closed
    // channel"; the TLS error itself only passes through the pipeline.
    let pipelineErrors = ErrorLog()
    do {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .file(caFile)
        configuration.certificateVerification = .fullVerification
        if let identity {
            configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(identity.certificatePath).map {
                .certificate($0)
            }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: identity.keyPath, format: .pem))
        }
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: serverHostname)
                    )
                    try channel.pipeline.syncOperations.addHandler(ErrorRecorder(errors: pipelineErrors))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: [0x2A]))
            for try await reply in inbound {
                return .echoed(Array(reply.readableBytesView))
            }
            return .closedWithoutReply
        }
    } catch {
        return .failed(pipelineErrors.entries + [String(describing: error)])
    }
}

/// A TLS echo server on 127.0.0.1 that requires client certificates chained to the given CA, like the daemon.
final class EchoServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let recordedErrors: ErrorLog

    /// What went wrong on the server's connections, as text.
    var errors: [String] { recordedErrors.entries }

    private init(port: Int, channel: any Channel, errors: ErrorLog) {
        self.port = port
        self.channel = channel
        self.recordedErrors = errors
    }

    static func start(identity: IssuedCertificate, trusting caFile: String) async throws -> EchoServer {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(identity.certificatePath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: identity.keyPath, format: .pem))
        )
        configuration.certificateVerification = .noHostnameVerification
        configuration.trustRoots = .file(caFile)
        let context = try NIOSSLContext(configuration: configuration)
        let errors = ErrorLog()

        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(EchoHandler(errors: errors))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        return EchoServer(port: port, channel: channel, errors: errors)
    }

    /// Waits up to two seconds for a server-side error whose text contains `fragment`.
    func waitForError(containing fragment: String) async -> Bool {
        for _ in 0..<200 {
            if errors.contains(where: { $0.contains(fragment) }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func stop() async throws {
        try await channel.close()
    }
}

final class ErrorLog: Sendable {
    private let storage = Mutex<[String]>([])

    var entries: [String] { storage.withLock { $0 } }

    func append(_ entry: String) {
        storage.withLock { $0.append(entry) }
    }
}

/// Notes every error that passes, and passes it on.
final class ErrorRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let errors: ErrorLog

    init(errors: ErrorLog) {
        self.errors = errors
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        errors.append(String(describing: error))
        context.fireErrorCaught(error)
    }
}

/// Writes back whatever it reads; records and closes on errors (a refused handshake arrives here).
final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let errors: ErrorLog

    init(errors: ErrorLog) {
        self.errors = errors
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        errors.append(String(describing: error))
        context.close(promise: nil)
    }
}
