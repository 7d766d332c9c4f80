import NIOCore
import NIOPosix
import NIOSSL
import PulseCore

/// A TLS client that sends whatever bytes a test wants, to see how the real daemon reacts to hostile peers.
enum RawClient {
    struct Outcome {
        /// Everything the daemon sent before closing (or before the timeout).
        var received: [UInt8]
        /// Whether the daemon closed the connection (or the TLS session failed) within the timeout.
        var closed: Bool
        /// Why the connection ended, if it failed rather than closed cleanly.
        var failure: String?

        /// The frames in `received`.
        var messages: [WireMessage] {
            ((try? WireCodec.frames(in: received)) ?? []).compactMap { try? WireCodec.decode($0) }
        }
    }

    static func exchange(
        port: Int, ca: String, certificate: String?, key: String?, send chunks: [[UInt8]],
        timeout: Duration = .seconds(5)
    ) async throws -> Outcome {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .file(ca)
        configuration.certificateVerification = .fullVerification
        if let certificate, let key {
            configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
        }
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    NIOSSLClientHandler(context: context, serverHostname: "netpulsed"))
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        var outcome = Outcome(received: [], closed: false, failure: nil)
        let timedOut = AtomicFlag()
        do {
            try await channel.executeThenClose { inbound, outbound in
                for chunk in chunks { try await outbound.write(ByteBuffer(bytes: chunk)) }
                let raw = channel.channel
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask {
                        try await Task.sleep(for: timeout)
                        timedOut.set()
                        raw.close(promise: nil)
                    }
                    defer { tasks.cancelAll() }
                    for try await buffer in inbound { outcome.received += Array(buffer.readableBytesView) }
                    outcome.closed = !timedOut.isSet
                }
            }
        } catch {
            outcome.closed = !timedOut.isSet
            outcome.failure = "\(error)"
        }
        return outcome
    }
}
