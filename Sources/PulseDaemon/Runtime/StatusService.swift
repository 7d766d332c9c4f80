import Logging
import PulseCore
import PulseStore
import PulseSystemd
import ServiceLifecycle

/// Pings systemd's watchdog while every loop makes progress, and keeps the `STATUS=` line current: agents
/// connected, ingest rate, store size. Ends at once outside systemd.
final class StatusService: Service, Sendable {
    let watchdog: Watchdog
    let registry: ConnectionRegistry
    let ingest: IngestService
    let store: any MetricStore

    init(
        loops: [LoopHeartbeat], registry: ConnectionRegistry, ingest: IngestService, store: any MetricStore,
        logger: Logger
    ) {
        watchdog = Watchdog(loops: loops, logger: logger)
        self.registry = registry
        self.ingest = ingest
        self.store = store
    }

    func line(valuesPerSecond: Double? = nil) -> String {
        var parts = ["\(registry.agentCount) agent(s) connected"]
        let handshakes = registry.handshakeCount
        if handshakes > 0 { parts.append("\(handshakes) handshake(s) pending") }
        if let valuesPerSecond { parts.append("\(Units.formatCount(valuesPerSecond)) values/s") }
        if let failure = ingest.writeFailure.withLock({ $0 }) { parts.append("not storing: \(failure)") }
        let behind = ingest.backlog.count
        if behind >= 1_000 { parts.append("\(behind) acknowledged batch(es) still to apply") }
        let setAside = ingest.rejectedByStore.load(ordering: .relaxed)
        if setAside > 0 { parts.append("\(setAside) acknowledged batch(es) refused by the store, set aside") }
        if let pace = registry.currentPace, pace != .normal { parts.append("agents asked to slow down") }
        let rejected = registry.rejectedBatches.load(ordering: .relaxed)
        if rejected > 0 { parts.append("\(rejected) batch(es) rejected") }
        parts.append("store \(Units.formatBytes(Double(store.sizeOnDisk)))")
        return parts.joined(separator: "; ")
    }

    func run() async throws {
        guard SystemdNotifier.isAvailable else { return }
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await self.watchdog.run() }
            // The reports go on until graceful shutdown; the watchdog ends at once when it is off, else with them.
            await report()
            tasks.cancelAll()
        }
    }

    /// Updates the status line every 5 s, except while a loop is stalled (the watchdog's line stays then).
    private func report() async {
        var previous = ingest.valuesStored.load(ordering: .relaxed)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(5)) }
            } catch {
                return
            }
            let stored = ingest.valuesStored.load(ordering: .relaxed)
            defer { previous = stored }
            guard !watchdog.loops.contains(where: { $0.isOverdue() }) else { continue }
            SystemdNotifier.status(line(valuesPerSecond: Double(stored - previous) / 5))
        }
    }
}

/// Deletes data past the retention, hourly, starting a minute after start, in small transactions.
struct RetentionService: Service, Sendable {
    let store: any MetricStore
    let policy: RetentionPolicy
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        var delay = Duration.seconds(60)
        while !Task.isShuttingDownGracefully {
            let wait = delay
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            } catch {
                return
            }
            delay = .seconds(3_600)
            do {
                let report = try await store.prune(policy, now: clock.now(), slice: 5_000)
                if report.rawChunks + report.buckets + report.settledGaps > 0 {
                    logger.info(
                        "retention: deleted \(report.rawChunks) raw chunk(s) and \(report.buckets) bucket(s); settled \(report.settledGaps) gap(s) past the late-data horizon"
                    )
                }
            } catch {
                logger.error("retention failed: \(error)")
            }
        }
    }
}
