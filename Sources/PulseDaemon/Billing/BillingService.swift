import Logging
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore
import ServiceLifecycle

/// Keeps the bills in the store current: a ``BillKeeper`` pass every minute (a 5-minute interval is taken in a
/// minute after it ends), logging bills issued and adjustments recorded.
final class BillingService: Service, Sendable {
    let keeper: BillKeeper
    let clock: WallClock
    let logger: Logger
    let metrics: DaemonMetrics?

    init(
        store: any MetricStore, config: DaemonConfig, clock: WallClock, logger: Logger, metrics: DaemonMetrics? = nil
    ) {
        keeper = BillKeeper(store: store, billing: config.billing, rules: config.store.rules)
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            do {
                // A pass over a large fleet (the first one, or after a long outage) can take minutes: a stop cancels
                // it rather than waiting. Nothing of a cancelled pass is saved (it saves once, at its end), so the
                // next start does it again.
                let (keeper, clock) = (self.keeper, self.clock)
                let started = ContinuousClock.now
                let report = try await cancelWhenGracefulShutdown {
                    try await keeper.update(now: clock.now())
                }
                metrics?.billingPassDuration.record(ContinuousClock.now - started)
                logger.debug(
                    "billing: pass done in \((ContinuousClock.now - started).milliseconds) ms: \(report.intervals) interval(s) taken in, \(report.replaced) changed interval(s) swapped in, \(report.rebuilt) bill(s) rebuilt (\(report.rebuiltUnknown) for a virtual gap, \(report.rebuiltRefused) for a swap the tracker could not tell), \(report.saved) saved"
                )
                if report.issued > 0 { logger.notice("billing: issued \(report.issued) bill(s) for closed periods") }
                if report.adjustments > 0 {
                    logger.warning(
                        "billing: late data changes \(report.adjustments) issued bill(s); recorded as adjustments (netpulse bill --period previous)"
                    )
                }
            } catch {
                if Task.isShuttingDownGracefully || error is CancellationError { return }
                logger.error("billing: cannot bring bills up to date: \(error)")
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
            } catch {
                return
            }
        }
    }
}
