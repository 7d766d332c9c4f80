import Logging
import PulseCore
import PulseQuery
import PulseReports
import PulseSettings
import PulseStore
import ServiceLifecycle
import Synchronization

/// Draws the dashboards into `[dashboards] directory`: each range at its own interval, aligned to the wall clock
/// and a few seconds after each boundary so the last batches of the period are in; the fleet overview and (unless
/// `host_pages = false`) a page per host, published atomically with `latest` names, `index.html` and retention.
///
/// It reads through the store's reader connections and renders on this service's task, never on the ingest path:
/// the ingest writer and the connections' event loops do not wait for it. It gives way to ingest: before each page
/// it waits while batches wait for a commit longer than ``yieldAbove``, or journaled batches wait to be applied to
/// the store longer than ``yieldAboveApplying`` (up to ``longestYield`` in all per round, so a daemon that is always
/// behind still draws every page, late). Without the second, drawing on a busy machine took the CPU the applier
/// needed until the journal's backlog filled and acknowledgements waited for it, over a second at the tail
/// (docs/benchmarks.md, Ack latency while drawing). Its large reads wait the same way between their parts
/// (``ReadPacing``), and ingest's own threads run at a higher priority (``ThreadPriority``). While the CPUs are
/// contended it also rests after each stretch of work, so that it works at most `[dashboards] busy_share` of the
/// time (``Pacer``). Drawing at background priority (nice 10, `SCHED_IDLE`) was tried instead and did not spare
/// acknowledgements: starved, it held its read snapshots for seconds.
final class DashboardService: Service, Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let clock: WallClock
    let logger: Logger
    let metrics: DaemonMetrics?
    /// Whether drawing should wait before its next page or part: ingest is behind (``behind(committing:applying:)``)
    /// or someone waits for a live page or the API (``InteractiveReads``); the snapshot waits for the same.
    let giveWay: @Sendable () -> Bool

    init(
        store: any MetricStore, config: DaemonConfig, clock: WallClock, logger: Logger, metrics: DaemonMetrics? = nil,
        giveWay: @escaping @Sendable () -> Bool = { false }
    ) {
        self.store = store
        self.config = config
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.giveWay = giveWay
    }

    /// A batch waiting longer than this for its commit means the writer is behind: drawing waits.
    static let yieldAbove = Duration.milliseconds(50)
    /// A journaled batch waiting longer than this to be applied means the applier is behind (its commits take a
    /// fraction of a second, and it takes everything waiting into each): drawing waits.
    static let yieldAboveApplying = Duration.seconds(1)
    /// The longest a round of drawing waits, in all, for ingest to catch up.
    static let longestYield = Duration.seconds(30)

    /// Paces one round of drawing, before each page and before each part of a large read (``ReadPacing``), in two
    /// ways:
    ///
    /// - It *rests* while the CPUs are contended: after each stretch of work it sleeps so that drawing works at most
    ///   `share` of the wall time (`[dashboards] busy_share`, a twentieth by default), when tasks waited for a CPU
    ///   during at least ``contendedAbove`` of that stretch (``CPUPressure``; where the kernel does not say,
    ///   always). This is PostgreSQL's cost-based vacuum delay applied to CPU: a background job that may not take
    ///   what the foreground needs works in short stretches and sleeps between them. Stretches are short (a page,
    ///   or a part of 500 series), and each part is a read transaction of its own, so a resting drawing holds no
    ///   read snapshot of the WAL. Lowering drawing's priority instead (nice 10, `SCHED_IDLE`) starved it in the
    ///   middle of its reads and held their snapshots for seconds. On a machine with a core to spare, nothing waits
    ///   and drawing runs at full speed.
    /// - It *waits* while ingest is behind (``behind(committing:applying:)``), taking the time from what is left of
    ///   the round's budget (``longestYield``), so a daemon that is always behind still draws every page, late.
    ///
    /// At half of the maximum ingest on two cores (the simulated agents on the same cores, so the CPUs are always
    /// contended), drawing the fleet overview without rest put the median acknowledgement about 2 ms above its
    /// level without drawing; working a quarter of the time, 1 ms above; a tenth, 0.1–0.4 ms above; a twentieth,
    /// 0.1 ms above on average, within the spread of runs without drawing. The price is time: at a tenth, a round of the fleet overview's four pages took about two minutes
    /// there instead of ten seconds (docs/benchmarks.md, Ack latency while drawing).
    final class Pacer: Sendable {
        let behind: @Sendable () -> Bool
        let budget: Duration
        /// The largest share of the wall time drawing works while the CPUs are contended (1: it never rests).
        let share: Double
        /// How long tasks have waited for a CPU so far, in microseconds (nil: not known, so always contended).
        let stalled: @Sendable () -> UInt64?
        private let left: Mutex<Duration>
        /// When the current stretch of work began, and ``stalled`` then.
        private let stretch: Mutex<(began: ContinuousClock.Instant, stalled: UInt64?)>
        private let restedSoFar = Mutex(Duration.zero)

        init(
            budget: Duration = DashboardService.longestYield, share: Double = 1,
            stalled: @escaping @Sendable () -> UInt64? = { CPUPressure.stalledMicroseconds() },
            behind: @escaping @Sendable () -> Bool
        ) {
            self.behind = behind
            self.budget = budget
            self.share = min(1, max(0.01, share))
            self.stalled = stalled
            left = Mutex(budget)
            stretch = Mutex((ContinuousClock.now, share < 1 ? stalled() : nil))
        }

        /// Tasks waiting for a CPU this share of a stretch or more make the CPUs contended: drawing rests.
        static let contendedAbove = 0.1
        /// The longest rest after one stretch (a part that took seconds on a loaded machine rests this long).
        static let longestRest = Duration.seconds(5)

        /// How long this round has waited for ingest.
        var waited: Duration { budget - left.withLock { $0 } }
        /// How long this round has rested while the CPUs were contended.
        var rested: Duration { restedSoFar.withLock { $0 } }

        func yield() async throws {
            try await rest()
            let start = ContinuousClock.now
            let deadline = start + left.withLock { $0 }
            var slept = false
            defer {
                // Only a wait counts: a check that finds nothing behind costs no budget.
                if slept { left.withLock { $0 = max(.zero, $0 - (ContinuousClock.now - start)) } }
                if share < 1 { stretch.withLock { $0 = (ContinuousClock.now, stalled()) } }
            }
            while behind() && ContinuousClock.now < deadline {
                slept = true
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        /// The rest owed for the stretch of work that ends now: `(1 - share) / share` times its length when the
        /// CPUs were contended during it, else none.
        func owedRest() -> Duration {
            guard share < 1 else { return .zero }
            let (began, before) = stretch.withLock { $0 }
            let worked = ContinuousClock.now - began
            guard worked > .zero else { return .zero }
            if let before, let after = stalled(), after >= before {
                let (seconds, attoseconds) = worked.components
                let microseconds = Double(seconds) * 1e6 + Double(attoseconds) / 1e12
                guard Double(after - before) >= Self.contendedAbove * microseconds else { return .zero }
            }
            return min(worked * ((1 - share) / share), Self.longestRest)
        }

        private func rest() async throws {
            let owed = owedRest()
            guard owed > .zero else { return }
            try await Task.sleep(for: owed)
            restedSoFar.withLock { $0 += owed }
        }
    }

    /// Whether drawing should wait, given how long the oldest batch has waited for its journal (or store) commit and
    /// the oldest journaled batch to be applied.
    static func behind(committing: Duration, applying: Duration) -> Bool {
        committing > yieldAbove || applying > yieldAboveApplying
    }

    /// A pacer for one round of drawing.
    func pacer() -> Pacer {
        Pacer(share: config.dashboards.busyShare, behind: giveWay)
    }

    /// Reads one page with its large reads paced (``ReadPacing``) and draws it.
    func pacedRender(
        _ query: DashboardQuery, _ spec: DashboardSpec, range: DashboardRange, now: Int64, pacer: Pacer
    ) async throws -> RenderedDashboard {
        let data = try await ReadPacing.$current.withValue(ReadPacing { try await pacer.yield() }) {
            try await query.read(spec, range: range, now: now)
        }
        return DashboardRenderer().render(data)
    }

    /// Seconds after a range's boundary before it is drawn: batches close every 10 s and commit soon after.
    static let settle: Int64 = 15_000

    /// When `interval`'s next render is due after one as of `drawnAt` (a render is as of `settle` past a boundary).
    static func due(after drawnAt: Int64, interval: Int64) -> Int64 {
        ((drawnAt - settle) / interval + 1) * interval + settle
    }

    /// When each range is first due as the service starts, for the dashboards `stems` (nil: not known, every range
    /// at once): a range whose pages were all drawn since its last boundary (the daemon restarted) waits for its next
    /// boundary, rather than every page of every range being drawn again at once (for 625 hosts, 2,504 pages, which
    /// took minutes on a busy two-core machine); a range never drawn, with any page older than that, or drawn "later"
    /// than `now` (the clock stepped back) is due at once. A page without a link yet (a new host) is drawn with the
    /// next range that is due.
    static func firstDue(_ settings: DashboardSettings, stems: [String]?, now: Int64) -> [Int64] {
        settings.ranges.map { scheduled in
            guard let stems,
                let drawn = DashboardFiles.lastDrawn(range: scheduled.range, stems: stems, in: settings.directory),
                drawn <= now
            else { return 0 }
            return drawn == Int64.min ? 0 : due(after: drawn, interval: scheduled.interval)
        }
    }

    func run() async throws {
        let settings = config.dashboards
        if settings.busyShare < 1, CPUPressure.stalledMicroseconds() == nil {
            logger.notice(
                "the kernel reports no CPU pressure (\(CPUPressure.path) cannot be read): drawing dashboards rests after every stretch of work as if the CPUs were contended; set [dashboards] busy_share = 1 for drawing at full speed"
            )
        }
        let stems = try? await settings.dashboards(
            for: config.windowEngine(over: store).catalogue, groupBy: config.billing.groupBy
        ).map(\.fileStem)
        var due = Self.firstDue(settings, stems: stems, now: clock.now())
        var reported = Set<String>()  // each failure is logged once, not at every render
        while !Task.isShuttingDownGracefully {
            let now = clock.now()
            let ready = settings.ranges.indices.filter { due[$0] <= now }
            if !ready.isEmpty {
                do {
                    let ranges = ready.map { settings.ranges[$0].range }
                    // A drawing of many pages can take long under load: a stop cancels it rather than waiting.
                    let started = ContinuousClock.now
                    let round = try await cancelWhenGracefulShutdown { try await self.render(ranges, at: now) }
                    metrics?.renderDuration.record(ContinuousClock.now - started)
                    logger.debug(
                        "dashboards written in \(ContinuousClock.now - started) (\(round.waited) of it waiting for ingest, \(round.rested) resting while the CPUs were contended): \(round.written.joined(separator: ", "))"
                    )
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
                    due[index] = Self.due(after: now, interval: interval)
                }
            }
            let next = due.min() ?? now + 60_000
            do {
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: .milliseconds(max(next - self.clock.now(), 1)))
                }
            } catch {
                return
            }
        }
    }

    /// Draws every dashboard for `ranges` (and for any range it has no file of yet) as of `now` and publishes them;
    /// returns the files written and why any drawing failed (the others are published all the same).
    func render(_ ranges: [DashboardRange], at now: Int64) async throws -> (
        written: [String], failures: [String], waited: Duration, rested: Duration
    ) {
        let settings = config.dashboards
        let engine = try await config.windowEngine(over: store)
        let specs = settings.dashboards(for: engine.catalogue, groupBy: config.billing.groupBy)
        let query = DashboardQuery(engine: engine)
        var rendered = [RenderedDashboard]()
        var failures = [String]()
        let pacer = self.pacer()
        for spec in specs {
            for range in settings.ranges.map(\.range) {
                // A dashboard new since its range was last drawn (a host that just connected) is drawn now rather
                // than at that range's next turn, hours away for the month: the index never lacks a page.
                let latest = "\(settings.directory)/\(DashboardFiles.latest(stem: spec.fileStem, range: range))"
                guard ranges.contains(range) || !FileIO.exists(latest) else { continue }
                try Task.checkCancellation()
                try await pacer.yield()
                do {
                    rendered.append(try await pacedRender(query, spec, range: range, now: now, pacer: pacer))
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
        return (written, failures, pacer.waited, pacer.rested)
    }
}
