import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PulseCore
import PulseSystemd
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The whole daemon as one `Service`: store, ingest writer, listener (its own or systemd's socket), retention,
/// watchdog, status lines, and SIGHUP reloads of the certificates.
public struct DaemonService: Service {
    public let config: DaemonConfig
    let configPath: String?
    let logger: Logger
    /// Called with the bound address once the listener accepts connections (tests).
    let onListening: @Sendable (SocketAddress) -> Void

    public init(
        config: DaemonConfig, configPath: String? = nil, logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }
    ) {
        self.config = config
        self.configPath = configPath
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let tls = try TLSContextBox(config.tls)
        let store = try Store(path: config.storePath, synchronous: config.synchronous)
        let registry = ConnectionRegistry()
        let writerHeartbeat = LoopHeartbeat("ingest")
        let writer = IngestWriter(
            store: store, logger: logger, commitDelay: config.commitDelay, paceThreshold: config.paceThreshold,
            heartbeat: writerHeartbeat, onPace: { registry.broadcast($0) })
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let listener = Listener(config: config, tls: tls, writer: writer, registry: registry, logger: logger)
        // Socket activation: systemd may have opened the listening socket for us (netpulsed.socket).
        let activated = SocketActivation.takeListeningSockets().first
        let channel: any Channel
        do {
            channel = try await listener.bind(group: group, boundSocket: activated)
        } catch {
            writer.drainAndStop()
            try? await group.shutdownGracefully()
            throw DaemonError(
                "cannot listen on \(activated.map { "socket \($0) from systemd" } ?? "\(config.listen)"): \(error)")
        }
        let address = channel.localAddress.map { "\($0)" } ?? "\(config.listen)"
        logger.notice(
            "listening on \(address)\(activated != nil ? " (socket from systemd)" : "") as \(config.name); store \(store.path)"
        )
        if let local = channel.localAddress { onListening(local) }

        // Each event loop beats every few seconds; a blocked loop stops its beats.
        let loopHeartbeats = group.makeIterator().enumerated().map { index, loop in
            let heartbeat = LoopHeartbeat("event loop \(index)")
            heartbeat.beat(within: 5_000)
            loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(2)) { _ in
                heartbeat.beat(within: 2_000)
            }
            return heartbeat
        }
        let watchdog = Watchdog(loops: [writerHeartbeat] + loopHeartbeats, logger: logger)
        let status = DaemonStatus(registry: registry, writer: writer, store: store)
        SystemdNotifier.ready(status: status.line())

        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await watchdog.run() }
                tasks.addTask { await status.report(unlessStalled: watchdog.loops) }
                tasks.addTask { await retention(store) }
                tasks.addTask {
                    for await _ in SignalEvents([SIGHUP]) { reload(tls, status: status) }
                }
                // The daemon runs until its listener closes (graceful shutdown closes it); the helpers above may
                // end early (no watchdog, not under systemd) without stopping anything else.
                try? await channel.closeFuture.get()
                tasks.cancelAll()
            }
        } onGracefulShutdown: {
            SystemdNotifier.stopping(status: "stopping: storing and acknowledging what arrived")
            channel.close(promise: nil)
        }
        // Stop accepting, finish storing (and acknowledging) what arrived, then say goodbye.
        writer.drainAndStop()
        registry.closeAll(ErrorFrame(.shuttingDown, "the daemon is stopping; reconnect later"))
        try? await Task.sleep(for: .milliseconds(100))
        try await group.shutdownGracefully()
        logger.notice("stopped")
    }

    /// Deletes raw chunks past the retention, hourly, starting a minute after start.
    private func retention(_ store: Store) async {
        var delay = Duration.seconds(60)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: delay)
            } catch {
                return
            }
            delay = .seconds(3_600)
            do {
                let deleted = try store.deleteRaw(olderThan: WallClock.milliseconds() - config.rawRetention)
                if deleted > 0 { logger.info("retention: deleted \(deleted) raw chunk(s)") }
            } catch {
                logger.error("retention failed: \(error)")
            }
        }
    }

    /// SIGHUP: re-read the config file and the certificates it names. New connections get the new certificates;
    /// established connections carry on. Other settings need a restart, which the log says.
    private func reload(_ tls: TLSContextBox, status: DaemonStatus) {
        SystemdNotifier.reloading()
        do {
            let fresh = try configPath.map { try DaemonConfig.load(path: $0) } ?? config
            try tls.reload(fresh.tls)
            var changed = fresh
            changed.tls = config.tls
            let restartNote = changed == config ? "" : "; settings other than [tls] take effect after a restart"
            logger.notice("reloaded: new connections use the certificates in \(fresh.tls.certificate)\(restartNote)")
            SystemdNotifier.ready(status: status.line())
        } catch {
            logger.error("reload failed, keeping the running configuration and certificates: \(error)")
            SystemdNotifier.ready(status: "reload failed, running the previous configuration: \(error)")
        }
    }
}

/// The daemon's `STATUS=` line: agents connected, ingest rate, store size.
final class DaemonStatus: Sendable {
    let registry: ConnectionRegistry
    let writer: IngestWriter
    let store: Store

    init(registry: ConnectionRegistry, writer: IngestWriter, store: Store) {
        self.registry = registry
        self.writer = writer
        self.store = store
    }

    func line(valuesPerSecond: Double? = nil) -> String {
        var parts = ["\(registry.agentCount) agent(s) connected"]
        if let valuesPerSecond { parts.append("\(Units.formatCount(valuesPerSecond)) values/s") }
        parts.append("store \(Units.formatBytes(Double(store.sizeOnDisk)))")
        return parts.joined(separator: "; ")
    }

    /// Updates the status line every 5 s, except while a loop is stalled (the watchdog's line stays then).
    func report(unlessStalled loops: [LoopHeartbeat]) async {
        guard SystemdNotifier.isAvailable else { return }
        var previous = writer.valuesStored.load(ordering: .relaxed)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(5))
            } catch {
                return
            }
            let stored = writer.valuesStored.load(ordering: .relaxed)
            defer { previous = stored }
            guard !loops.contains(where: { $0.isOverdue() }) else { continue }
            SystemdNotifier.status(line(valuesPerSecond: Double(stored - previous) / 5))
        }
    }
}

/// A daemon start-up failure with a message for the operator.
public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
