import Logging
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore
import ServiceLifecycle

/// Keeps the bills in the store current: a ``BillKeeper`` pass at start and then at 30 s past every minute (a
/// 5-minute interval is taken in by the first pass at least a minute after it ends, 90 s after), logging bills
/// issued and adjustments recorded.
///
/// Why at 30 s past the minute, not a minute after the last pass: every bucket boundary falls on a whole minute,
/// and in the seconds after one every open live page redraws as the agents' first batches commit. A pass over
/// 10,000 interfaces takes a core for a second or more, and passes a minute apart drift (a minute plus the pass's
/// length) through the boundaries: in a 40-minute benchmark, the one boundary a pass ran across was the slowest of
/// the run for both kinds of page (commit-to-paint 159.8 ms for the fleet overview, against 48–105 ms at the other
/// boundaries; 148.5 ms for a host page).
final class BillingService: Service, Sendable {
    /// When in each minute a pass starts (ms past the minute).
    static let phase: Int64 = 30_000
    /// The least time (ms) from the end of a pass to the start of the next: a clock that stands still (a test's)
    /// or a pass that ends just before the phase does not start passes back to back.
    static let leastGap: Int64 = 20_000

    /// How long (ms) to wait, after a pass ending at `now`, for the next: until the next ``phase`` past a minute at
    /// least ``leastGap`` away.
    static func wait(after now: Int64) -> Int64 {
        RollupLevel.oneMinute.bucketEnd(covering: now + leastGap - phase) + phase - now
    }

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
                let wait = Self.wait(after: clock.now())
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(wait)) }
            } catch {
                return
            }
        }
    }
}
