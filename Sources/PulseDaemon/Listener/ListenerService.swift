import Logging
import NIOCore
import NIOPosix
import PulseCore
import PulseSettings
import PulseStore
import PulseSystemd
import ServiceLifecycle

/// Accepts agents on the configured address or on the socket systemd passed (socket activation), and tells
/// systemd the daemon is ready once it listens. On graceful shutdown it stops accepting, lets the ingest service
/// commit and acknowledge everything queued, then closes every connection with `shutting-down`.
public final class ListenerService: Service, Sendable {
    let config: DaemonConfig
    let queue: IngestQueue
    let registry: ConnectionRegistry
    let logger: Logger
    let tls: TLSContextBox
    let group: MultiThreadedEventLoopGroup
    let labelPolicy: @Sendable (String, Labels) -> Labels
    let labelGeneration: @Sendable () -> Int
    let onListening: @Sendable (SocketAddress) -> Void
    /// One per event loop: a blocked loop stops its beats, and the watchdog stops pinging.
    let loopHeartbeats: [LoopHeartbeat]

    init(
        config: DaemonConfig, tls: TLSContextBox, queue: IngestQueue, registry: ConnectionRegistry, logger: Logger,
        labelPolicy: @escaping @Sendable (String, Labels) -> Labels,
        labelGeneration: @escaping @Sendable () -> Int,
        onListening: @escaping @Sendable (SocketAddress) -> Void
    ) throws {
        self.config = config
        self.queue = queue
        self.registry = registry
        self.logger = logger
        self.labelPolicy = labelPolicy
        self.labelGeneration = labelGeneration
        self.onListening = onListening
        self.tls = tls
        group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        for loop in group.makeIterator() { loop.execute { ThreadPriority.raiseCurrentThread() } }
        loopHeartbeats = group.makeIterator().enumerated().map { index, loop in
            let heartbeat = LoopHeartbeat("event loop \(index)")
            heartbeat.beat(within: 5_000)
            loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(2)) { _ in
                heartbeat.beat(within: 2_000)
            }
            return heartbeat
        }
    }

    public func run() async throws {
        let listener = Listener(
            config: config, tls: tls, queue: queue, registry: registry, logger: logger, labelPolicy: labelPolicy,
            labelGeneration: labelGeneration)
        let activated = SocketActivation.takeListeningSockets().first
        let channel: any Channel
        do {
            channel = try await listener.bind(group: group, boundSocket: activated)
        } catch {
            try? await group.shutdownGracefully()
            throw DaemonError(
                "cannot listen on \(activated.map { "socket \($0) from systemd" } ?? "\(config.listen)"): \(error)")
        }
        let address = channel.localAddress.map { "\($0)" } ?? "\(config.listen)"
        logger.notice(
            "listening on \(address)\(activated != nil ? " (socket from systemd)" : "") as \(config.name); store \(config.storePath)"
        )
        if let local = channel.localAddress { onListening(local) }
        SystemdNotifier.ready(status: "listening on \(address); \(registry.agentCount) agent(s) connected")

        await serve(until: channel) {
            SystemdNotifier.stopping(status: "stopping: storing and acknowledging what arrived")
        }
        // Stop taking batches, store and acknowledge what arrived, then say goodbye.
        queue.close()
        await queue.waitUntilEmpty()
        registry.closeAll(ErrorFrame(.shuttingDown, "the daemon is stopping; reconnect later"))
        try? await Task.sleep(for: .milliseconds(100))
        for heartbeat in loopHeartbeats { heartbeat.finish() }
        // Closing a TLS connection waits up to 5 s for the agent's close_notify, and an agent that stopped answering
        // (its host gone dark, a path that froze) never sends it. Everything it sent is stored and acknowledged by
        // now, so the stop does not wait for it: exiting closes the socket.
        do {
            try await awaitAbandoning(within: Self.closeBudget) { try await self.group.shutdownGracefully() }
        } catch let error as StoppedWaiting {
            logger.warning(
                "connections still closing after \(Self.closeBudget), their agents not answering the TLS close (\(error)); stopping without them"
            )
        }
        logger.notice("stopped")
    }

    /// How long the stop waits for the event loops to close the last connections.
    static let closeBudget = Duration.milliseconds(300)
}

/// Waits while a listening `channel` is open, and closes it on graceful shutdown (after `onGracefulShutdown`) or
/// when the task is cancelled: another service failed, and the daemon would otherwise wait here for ever.
func serve(until channel: any Channel, onGracefulShutdown: @escaping @Sendable () -> Void = {}) async {
    await withGracefulShutdownHandler {
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    } onGracefulShutdown: {
        onGracefulShutdown()
        channel.close(promise: nil)
    }
}
