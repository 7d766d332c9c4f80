import Logging
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseReports
import PulseSettings
import PulseStore
import ServiceLifecycle

/// Evaluates the alert rules every `evaluation_interval` (`docs/alerts.md`). On every transition it writes the
/// history and a structured journal entry (`ALERT=`, `ALERT_STATUS=` …); on firing and on resolving it first writes
/// the alert chart (SVG) and the event (JSON) into `[alerts] directory`, so the stored event names files that
/// exist. States are in the store: a restart neither loses a firing alert nor fires it again.
///
/// Rules come from the config in force, so a reload (SIGHUP) applies new rules at the next evaluation, keeping
/// the state of unchanged ones. It reads through the store's readers and writes small transactions, never on the
/// ingest path.
final class AlertService: Service, Sendable {
    let store: any MetricStore
    let current: CurrentConfig
    let logger: Logger
    let metrics: DaemonMetrics?
    let clock: WallClock
    let startedAt: Int64
    /// The catalogue, read again only when the store says it changed (a new series, new link facts, relabelled
    /// agents), not 20 ms of rows every round.
    let catalogues: CatalogueCache
    /// When each connected agent's certificate expires (``ConnectionRegistry/certificateExpiries``).
    let certificateExpiries: @Sendable () -> [String: Int64]

    init(
        store: any MetricStore, current: CurrentConfig, clock: WallClock, logger: Logger, metrics: DaemonMetrics? = nil,
        catalogues: CatalogueCache = CatalogueCache(),
        certificateExpiries: @escaping @Sendable () -> [String: Int64] = { [:] }
    ) {
        self.store = store
        self.certificateExpiries = certificateExpiries
        self.catalogues = catalogues
        self.current = current
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
        startedAt = clock.now()
    }

    func run() async throws {
        var reported = Set<String>()
        var pruned: Int64 = 0
        while !Task.isShuttingDownGracefully {
            let config = current.value
            let interval = config.alerts.evaluationInterval
            let now = clock.now()
            do {
                // Without rules there is nothing to do unless instances of removed rules need resolving.
                let idle = config.alerts.rules.isEmpty ? try await store.alertInstances().isEmpty : false
                if !idle {
                    let started = ContinuousClock.now
                    try await evaluate(at: now, config: config)
                    metrics?.alertEvaluationDuration.record(ContinuousClock.now - started)
                } else {
                    try await store.keepRecentBuckets(from: nil, for: .alerts)  // no rule reads them any more
                }
                reported.removeAll()
            } catch {
                let text = "alert evaluation failed: \(error)"
                if reported.insert(text).inserted { logger.error("\(text)") }
            }
            if now - pruned >= 3_600_000 {
                pruned = now
                await prune(now: now, config: config)
            }
            let next = (clock.now() / interval + 1) * interval
            do {
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: .milliseconds(max(next - self.clock.now(), 1)))
                }
            } catch {
                return
            }
        }
    }

    /// One evaluation of every rule at `now`; returns the transitions it stored.
    @discardableResult
    func evaluate(at now: Int64, config: DaemonConfig) async throws -> [AlertEvent] {
        let settings = config.alerts
        let engine = try await config.windowEngine(over: store, cache: catalogues)
        let evaluator = AlertEvaluator(engine: engine, certificateExpiries: certificateExpiries)
        do {
            try await store.keepRecentBuckets(
                from: Self.recentFrom(settings.rules, evaluator: evaluator, now: now), for: .alerts)
        } catch {
            // Only a way to read faster: without it the round reads the rows.
            logger.warning("alert round: recent buckets not held in memory: \(error)")
        }
        var round = try await evaluator.evaluate(
            settings.rules, instances: try await store.alertInstances(), now: now,
            holdAbsent: now - startedAt < settings.startupGrace)
        guard !round.update.isEmpty else { return [] }
        // Charts and event files first: a crash before the commit repeats the transition (and rewrites them).
        for index in round.transitions.indices where round.transitions[index].event.status != .pending {
            let transition = round.transitions[index]
            do {
                round.transitions[index].event.chart = try await write(transition, evaluator: evaluator, now: now)
            } catch {
                logger.error("alert chart for \(transition.rule.name) not written: \(error)")
            }
        }
        round.update.events = round.transitions.map(\.event)
        let stored = try await store.saveAlerts(round.update)
        for (event, transition) in zip(stored, round.transitions) {
            journal(event, rule: transition.rule, engine: engine)
        }
        return stored
    }

    /// The earliest bucket the rules' windows read at `now`, for the store to hold in memory
    /// (``MetricStore/keepRecentBuckets(from:for:)``); windows longer than the store holds are read from the rows, and
    /// billing rules read bills. Nil when no rule reads buckets.
    static func recentFrom(_ rules: [AlertRule], evaluator: AlertEvaluator, now: Int64) -> Int64? {
        let level = evaluator.query.engine.finest
        let oldest = level.bucketStart(now) - Int64(RecentBucketLimit.perSeries - 1) * level.width
        return rules.filter { $0.condition.metric != .billingP95 && $0.condition.metric != .certificateExpiry }.map {
            evaluator.query.window(of: $0, at: now).from
        }
        .filter { $0 >= oldest }.min()
    }

    /// Writes the chart and the event JSON; returns the chart's path.
    private func write(_ transition: AlertTransition, evaluator: AlertEvaluator, now: Int64) async throws -> String {
        let settings = current.value.alerts
        let event = transition.event
        let engine = evaluator.query.engine
        guard let series = engine.catalogue[event.series] else {
            throw QueryError("series \(event.series) is not in the store")
        }
        let level = engine.finest
        let wide = AlertChart.span(for: transition.phase, at: now, level: level)
        let history = try await evaluator.query.history(
            transition.rule, series: series, from: wide.from, to: wide.to, now: now)
        let span = AlertChart.trimmed(wide, points: history.points, level: history.level)
        let svg = AlertChart.svg(
            AlertChartInput(
                rule: transition.rule, event: event, phase: transition.phase, seriesName: series.name,
                level: history.level, points: history.points.filter { $0.start >= span.from }, from: span.from,
                to: span.to, calendar: engine.calendar))
        let stem = AlertFiles.stem(event)
        let chart = "\(settings.directory)/\(stem).svg"
        try FileIO.createDirectory(settings.directory, mode: FileIO.publishedDirectory)
        try FileIO.writeAtomically(chart, Array(svg.utf8))
        let condition = transition.rule.condition
        // A field a line, keys sorted.
        let json = JSONText.lines(
            [
                "rule": JSONText.string(event.rule), "status": JSONText.string(event.status.rawValue),
                "at": JSONText.string(RFC3339.text(event.at)), "value": JSONText.number(event.value),
                "valueText": JSONText.string(event.value.map(condition.metric.format) ?? "no data"),
                "condition": JSONText.string("\(condition)"), "threshold": JSONText.number(condition.threshold),
                "clear": JSONText.number(condition.clear), "labels": JSONText.object(strings: event.labels),
                "annotations": JSONText.object(strings: event.annotations),
                "fingerprint": JSONText.string(event.fingerprint),
                "startsAt": JSONText.string(RFC3339.text(event.startsAt)),
                "endsAt": event.endsAt.map { JSONText.string(RFC3339.text($0)) } ?? "null",
                "pendingSince": JSONText.string(RFC3339.text(transition.phase.activeSince)),
                "series": JSONText.string(series.name), "chart": JSONText.string(chart),
            ].sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        try FileIO.writeAtomically("\(settings.directory)/\(stem).json", Array((json + "\n").utf8))
        try AlertFiles.ledger(in: settings.directory).record(["\(stem).svg", "\(stem).json"])
        return chart
    }

    /// One journal entry per transition, with the alert's fields as journal fields.
    private func journal(_ event: AlertEvent, rule: AlertRule, engine: WindowEngine) {
        let metric = rule.condition.metric
        let name = engine.catalogue[event.series]?.name ?? "series \(event.series)"
        var metadata: Logger.Metadata = [
            "alert": "\(event.rule)", "alert_status": "\(event.status.rawValue)",
            "alert_fingerprint": "\(event.fingerprint)", "alert_severity": "\(event.labels["severity"] ?? "")",
            "alert_series": "\(name)", "alert_condition": "\(rule.condition)",
        ]
        if let value = event.value { metadata["alert_value"] = "\(metric.format(value))" }
        if let chart = event.chart { metadata["alert_chart"] = "\(chart)" }
        let text =
            "alert \(event.rule) \(event.status.rawValue) on \(name): \(event.value.map(metric.format) ?? "no data") (\(rule.condition))"
        if event.status == .pending {
            logger.info("\(text)", metadata: metadata)
        } else {
            logger.notice("\(text)", metadata: metadata)
        }
    }

    /// Alert history and its files past `[alerts] history`, and the silences that ended before it (made and ended
    /// over and over, over HTTP too, they would otherwise pile up for ever).
    private func prune(now: Int64, config: DaemonConfig) async {
        let before = now - config.alerts.history
        do {
            let events = try await store.pruneAlertEvents(before: before)
            let files = try AlertFiles.prune(in: config.alerts.directory, before: before)
            let silences = try await store.pruneSilences(endedBefore: before)
            if events + files + silences > 0 {
                logger.info("alert history pruned: \(events) events, \(files) files, \(silences) ended silences")
            }
        } catch {
            logger.error("alert history not pruned: \(error)")
        }
    }
}

/// Evaluations of a config's rules over a store, exactly as the daemon's alert service makes them (charts and event
/// files written, transitions stored, what it keeps between rounds kept): for benchmarks and tools.
public final class AlertEvaluation: Sendable {
    private let service: AlertService

    public init(store: any MetricStore, config: DaemonConfig) {
        service = AlertService(
            store: store, current: CurrentConfig(config), clock: .system, logger: Logger(label: "netpulse.alerts"))
    }

    /// One round at `now` with `config`'s rules; returns the transitions it stored.
    @discardableResult
    public func round(at now: Int64, config: DaemonConfig) async throws -> [AlertEvent] {
        try await service.evaluate(at: now, config: config)
    }
}
