import Logging
import PulseCore
import PulseQuery
import PulseReports
import PulseStore
import ServiceLifecycle

/// Draws the dashboards into `[dashboards] directory`: each range at its own interval, aligned to the wall clock
/// and a few seconds after each boundary so the last batches of the period are in; the fleet overview and (unless
/// `host_pages = false`) a page per host, published atomically with `latest` names, `index.html` and retention.
///
/// It reads through the store's reader connections and renders on this service's task, never on the ingest path:
/// the ingest writer and the connections' event loops do not wait for it. It gives way to ingest: before each page
/// it waits while batches wait for a commit longer than ``yieldAbove`` (up to ``longestYield`` in all per round, so
/// a daemon that is always behind still draws every page, late). Drawing at background priority (nice 10) was
/// tried instead and did not spare acknowledgements in the benchmark (docs/benchmarks.md, Ack latency while
/// drawing).
final class DashboardService: Service, Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let logger: Logger
    let metrics: DaemonMetrics?
    /// How long the oldest batch waiting for a commit has waited.
    let ingestBacklog: @Sendable () -> Duration

    init(
        store: any MetricStore, config: DaemonConfig, logger: Logger, metrics: DaemonMetrics? = nil,
        ingestBacklog: @escaping @Sendable () -> Duration = { .zero }
    ) {
        self.store = store
        self.config = config
        self.logger = logger
        self.metrics = metrics
        self.ingestBacklog = ingestBacklog
    }

    /// A batch waiting longer than this for its commit means the writer is behind: drawing waits.
    static let yieldAbove = Duration.milliseconds(50)
    /// The longest a round of drawing waits, in all, for ingest to catch up.
    static let longestYield = Duration.seconds(30)

    /// Waits while ingest is behind, taking the time from the round's `budget`.
    func yieldToIngest(budget: inout Duration) async throws {
        let start = ContinuousClock.now
        defer { budget -= ContinuousClock.now - start }
        let deadline = start + budget
        while ingestBacklog() > Self.yieldAbove && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Seconds after a range's boundary before it is drawn: batches close every 10 s and commit soon after.
    static let settle: Int64 = 15_000

    func run() async throws {
        let settings = config.dashboards
        var due = [Int64](repeating: 0, count: settings.ranges.count)  // the first render is at once
        var reported = Set<String>()  // each failure is logged once, not at every render
        while !Task.isShuttingDownGracefully {
            let now = WallClock.milliseconds()
            let ready = settings.ranges.indices.filter { due[$0] <= now }
            if !ready.isEmpty {
                do {
                    let ranges = ready.map { settings.ranges[$0].range }
                    // A drawing of many pages can take long under load: a stop cancels it rather than waiting.
                    let started = ContinuousClock.now
                    let round = try await cancelWhenGracefulShutdown { try await self.render(ranges, at: now) }
                    metrics?.renderDuration.record(ContinuousClock.now - started)
                    logger.debug("dashboards written: \(round.written.joined(separator: ", "))")
                    for failure in round.failures where reported.insert(failure).inserted {
                        logger.error("dashboard not drawn: \(failure)")
                    }
                } catch {
                    if Task.isShuttingDownGracefully || error is CancellationError { return }
                    let failure = "dashboards failed: \(error)"
                    if reported.insert(failure).inserted { logger.error("\(failure)") }
                }
                for index in ready {
                    // The next boundary after the one this render belonged to (`now` is already `settle` past it).
                    let interval = settings.ranges[index].interval
                    due[index] = ((now - Self.settle) / interval + 1) * interval + Self.settle
                }
            }
            let next = due.min() ?? now + 60_000
            do {
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: .milliseconds(max(next - WallClock.milliseconds(), 1)))
                }
            } catch {
                return
            }
        }
    }

    /// Draws every dashboard for `ranges` (and for any range it has no file of yet) as of `now` and publishes them;
    /// returns the files written and why any drawing failed (the others are published all the same).
    func render(_ ranges: [DashboardRange], at now: Int64) async throws -> (written: [String], failures: [String]) {
        let settings = config.dashboards
        let engine = try await config.windowEngine(over: store)
        let specs = settings.dashboards(for: engine.catalogue, groupBy: config.billing.groupBy)
        let renderer = DashboardRenderer(engine: engine)
        var rendered = [RenderedDashboard]()
        var failures = [String]()
        var yieldBudget = Self.longestYield
        for spec in specs {
            for range in settings.ranges.map(\.range) {
                // A dashboard new since its range was last drawn (a host that just connected) is drawn now rather
                // than at that range's next turn, hours away for the month: the index never lacks a page.
                let latest = "\(settings.directory)/\(DashboardFiles.latest(stem: spec.fileStem, range: range))"
                guard ranges.contains(range) || !FileIO.exists(latest) else { continue }
                try Task.checkCancellation()
                try await yieldToIngest(budget: &yieldBudget)
                do {
                    rendered.append(try await renderer.render(spec, range: range, now: now))
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    failures.append("\(error)")
                }
            }
        }
        let publisher = DashboardPublisher(
            directory: settings.directory, retention: settings.retention,
            refreshSeconds: Int((settings.ranges.map(\.interval).min() ?? 60_000) / 1_000))
        let written = try publisher.publish(
            rendered, dashboards: specs, ranges: settings.ranges.map(\.range), now: now)
        return (written, failures)
    }
}
