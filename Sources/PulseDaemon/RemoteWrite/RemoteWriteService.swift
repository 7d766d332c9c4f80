import Logging
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore
import ServiceLifecycle

/// Forwards every interface's counters and rates to a Prometheus-compatible store (`[remote_write]`,
/// `docs/remote-write.md`), from committed data only, a pass every `interval`:
///
/// 1. raises the forward mark to the end of the buckets it is about to send, so late changes to them are
///    recorded from then on (a change committed before the read is both read and recorded, and settled as read);
/// 2. reads one snapshot: the buckets since the cursor and the late changes (``RemoteWritePass``);
/// 3. sends them in requests of `max_samples_per_request`, each series' samples in time order, retrying a
///    request with backoff on 5xx, 429 or no answer, and never retrying any other 4xx (counted and logged: the
///    receiver will not take those samples);
/// 4. saves the cursor and what each series has sent, in one transaction, only then.
///
/// A pass that is cut short (a stop, a crash) saves nothing: the next one sends the same samples again, which a
/// receiver takes as duplicates. It runs on its own task and its own HTTP client (one kept-alive connection to the
/// receiver, through the proxy the environment names, made and closed with each run): a receiver that is down holds
/// back only this service, never ingest.
public final class RemoteWriteService: Service, Sendable {
    let store: any MetricStore
    let config: DaemonConfig
    let client: RemoteWriteClient
    let metrics: DaemonMetrics?
    let clock: WallClock
    let logger: Logger

    init(
        store: any MetricStore, config: DaemonConfig, url: String, metrics: DaemonMetrics?, clock: WallClock,
        logger: Logger
    ) throws {
        self.store = store
        self.config = config
        self.clock = clock
        let settings = config.remoteWrite
        client = try RemoteWriteClient(
            url: url, caFile: settings.ca, bearerTokenFile: settings.bearerTokenFile, timeout: settings.timeout)
        // A proxy variable the client cannot use stops the start, as a CA file it cannot read does.
        _ = try ProxyEnvironment.process().route(to: client.target.address)
        self.metrics = metrics
        self.logger = logger
    }

    /// At most this much of a backlog in one pass (a daemon that was down catches up pass after pass).
    static let longestPass: Int64 = 3_600_000

    public func run() async throws {
        await WebhookClient.with(logger: logger, purpose: "remote write") {
            await self.forward(through: $0)
        }
    }

    /// Passes until the daemon stops.
    private func forward(through http: WebhookClient) async {
        let settings = config.remoteWrite
        var reported = Set<String>()
        logger.notice("remote write: forwarding to \(settings.url ?? "")")
        while !Task.isShuttingDownGracefully {
            var caughtUp = true
            do {
                caughtUp = try await cancelWhenGracefulShutdown {
                    try await self.pass(now: self.clock.now(), through: http)
                }.caughtUp
                reported.removeAll()
            } catch {
                if Task.isShuttingDownGracefully || error is CancellationError { return }
                let text = "remote write: pass failed: \(error)"
                if reported.insert(text).inserted { logger.error("\(text)") }
            }
            guard caughtUp else { continue }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(settings.interval)) }
            } catch {
                return
            }
        }
    }

    /// What one pass did.
    public struct Report: Sendable {
        /// Samples the receiver took, and refused for good.
        public var sent = 0
        public var refused = 0
        public var requests = 0
        /// Reading the snapshot and building the series; sending (encoding, compressing, posting); saving.
        public var reading: Duration = .zero
        public var sending: Duration = .zero
        public var saving: Duration = .zero
        /// The pass reached the present (false: more backlog waits).
        public var caughtUp = true
    }

    /// One pass, its requests sent over `http`.
    func pass(now: Int64, through http: WebhookClient) async throws -> Report {
        let settings = config.remoteWrite
        var report = Report()
        let started = ContinuousClock.now
        let catalogue = try await Catalogue.load(from: store, rules: config.store.rules)
        guard let level = config.store.levels.min() else { return report }
        let cursor = try await store.withForwardSnapshot { $0.cursor }
        let present = level.bucketStart(now - settings.delay)
        let from = Self.start(cursor: cursor, present: present, backfill: settings.backfill, level: level)
        let to = min(present, from + Self.longestPass)
        if cursor > 0 { metrics?.remoteWriteForwardedUntil.store(cursor, ordering: .relaxed) }
        guard to > from else { return report }
        try await store.raiseForwardMark(to: to)
        let pass = try await store.withForwardSnapshot { snapshot in
            try await RemoteWritePass(snapshot: snapshot, catalogue: catalogue, from: from, to: to)
        }
        report.reading = ContinuousClock.now - started
        for request in pass.requests(limit: settings.maximumSamples) {
            // A stop ends the pass between requests; nothing of it is saved, and the next start sends it again.
            try Task.checkCancellation()
            let samples = request.reduce(0) { $0 + $1.samples.count }
            report.requests += 1
            switch try await deliver(request, through: http) {
            case .refused(let status, let reason):
                report.refused += samples
                metrics?.remoteWriteSamples(refused: samples)
                logger.error(
                    "remote write: the receiver refused \(samples) sample(s) for good (HTTP \(status)): \(reason); they are not sent again"
                )
            default:
                report.sent += samples
                metrics?.remoteWriteSamples(sent: samples)
            }
        }
        report.sending = ContinuousClock.now - started - report.reading
        try await store.saveForward(pass.update)
        report.saving = ContinuousClock.now - started - report.reading - report.sending
        metrics?.remoteWriteForwardedUntil.store(to, ordering: .relaxed)
        if pass.lateBytes > 0 || pass.recounted > 0 {
            logger.info(
                "remote write: \(pass.lateBytes) late byte(s) added to the next samples; \(pass.recounted) interface(s) added up again after a gap changed"
            )
        }
        logger.debug("remote write: \(report.sent) sample(s) sent, \(report.refused) refused, up to \(to)")
        report.caughtUp = to == present
        return report
    }

    /// Where a pass starts: at the cursor, or for a new receiver `backfill` before the present, and at least one
    /// bucket before it (a backfill of 0 must not mean nothing is ever sent).
    static func start(cursor: Int64, present: Int64, backfill: Int64, level: RollupLevel) -> Int64 {
        cursor > 0 ? cursor : level.bucketStart(present - max(backfill, level.width))
    }

    /// Sends one request until the receiver takes or refuses it, backing off from 1 s to 60 s between tries.
    private func deliver(_ request: [RemoteSeries], through http: WebhookClient) async throws -> RemoteWriteOutcome {
        var delay = Duration.seconds(1)
        var failing = false
        while true {
            let outcome = await client.send(request, through: http)
            guard case .retry(let reason) = outcome else {
                if failing { logger.notice("remote write: the receiver takes requests again") }
                return outcome
            }
            metrics?.remoteWriteRetries.increment()
            if !failing {
                failing = true
                logger.warning("remote write: \(reason); retrying with backoff (nothing is dropped)")
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(60))
        }
    }
}

/// One pass of remote write over `store` as of `now`, exactly as the daemon's service makes it (the store's state
/// moves on as it would): for benchmarks and tools.
public enum RemoteWriteForwarding {
    public static func once(store: any MetricStore, config: DaemonConfig, now: Int64) async throws
        -> RemoteWriteService.Report
    {
        guard let url = config.remoteWrite.url else { throw DaemonError("[remote_write] url is not set") }
        let logger = Logger(label: "netpulse.remote-write")
        let service = try RemoteWriteService(
            store: store, config: config, url: url, metrics: nil, clock: .system, logger: logger)
        return try await WebhookClient.with(
            logger: logger, purpose: "remote write"
        ) { http in
            try await service.pass(now: now, through: http)
        }
    }
}
