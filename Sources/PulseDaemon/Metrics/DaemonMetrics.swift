import Foundation
import NIOSSL
@preconcurrency import Prometheus
import PulseCore
import PulseSettings
import PulseStore
import Synchronization

/// The daemon's own metrics in Prometheus' text format, served by ``MetricsService`` when `[metrics] listen` is set
/// (`docs/operations.md`, "Monitoring netpulsed"). The names follow Prometheus' conventions: a `netpulse_` prefix,
/// base units (seconds, bytes), `_total` for counters.
///
/// Durations are recorded where they happen (a commit, a drawing round, a billing pass); everything the daemon
/// already counts or can read cheaply (connections, batches stored, the queue, the store's size, alerts by state,
/// the process's memory and CPU) is read when Prometheus scrapes, so the ingest path pays for nothing but the
/// histograms it feeds.
public final class DaemonMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// From when a batch is queued for its commit to when its acknowledgement is handed to its connection.
    let ackLatency: DurationHistogram
    /// One group commit: the write transaction and its fsync.
    let commitDuration: DurationHistogram
    let commitBatches: ValueHistogram
    /// One drawing of the dashboards (every dashboard of the ranges that were due).
    let renderDuration: DurationHistogram
    let billingPassDuration: DurationHistogram
    let alertEvaluationDuration: DurationHistogram

    /// The end of the last bucket remote write has sent (0: none yet); the lag is worked out from it at each scrape,
    /// so it grows while a receiver is down.
    let remoteWriteForwardedUntil = Atomic<Int64>(0)
    private let remoteWriteLag: Gauge
    /// Requests sent again after a 5xx, a 429 or no answer.
    let remoteWriteRetries: Prometheus.Counter
    private let remoteWriteSent: Prometheus.Counter
    private let remoteWriteRefused: Prometheus.Counter

    // Read at each scrape.
    private let agentsConnected: Gauge
    private let handshakesPending: Gauge
    private let queueBatches: Gauge
    private let queueOldest: Gauge
    private let applyBacklog: Gauge
    private let paced: Gauge
    private let storeBytes: Gauge
    private let storeWriting: Gauge
    private let leading: Gauge
    private let alertsPending: Gauge
    private let alertsFiring: Gauge
    private let notificationsQueued: Gauge
    private let residentMemory: Gauge
    private let openFiles: Gauge
    private let batchesStored: MirroredCounter
    private let valuesStored: MirroredCounter
    private let duplicates: MirroredCounter
    private let rejected: MirroredCounter
    private let cpuSeconds: MirroredCounter
    /// Refusals because an agent went over one of its `[limits]`, by limit.
    private let limitRefusals: [AgentLimits.Kind: MirroredCounter]
    private let unplacedSteps: MirroredCounter
    private let setAsideAfterDeaths: MirroredCounter
    private let queueBytes: Gauge
    private let applyBacklogBytes: Gauge

    public init() {
        let latencyBuckets: [Duration] = [
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
        ]
        ackLatency = registry.makeDurationHistogram(
            descriptor: Self.named(
                "netpulse_ack_latency_seconds",
                "Time from a batch being queued for its commit to its acknowledgement (queue wait and commit)."),
            buckets: latencyBuckets)
        commitDuration = registry.makeDurationHistogram(
            descriptor: Self.named(
                "netpulse_commit_duration_seconds", "Duration of one group commit to the store, fsync included."),
            buckets: latencyBuckets)
        commitBatches = registry.makeValueHistogram(
            descriptor: Self.named("netpulse_commit_batches", "Batches in one group commit."),
            buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024, 2_048, 4_096, 8_192])
        renderDuration = Self.passDuration(
            "netpulse_render_duration_seconds", "Duration of one drawing of the dashboards that were due.", registry)
        billingPassDuration = Self.passDuration(
            "netpulse_billing_pass_duration_seconds", "Duration of one pass keeping the 95th-percentile bills current.",
            registry)
        alertEvaluationDuration = Self.passDuration(
            "netpulse_alert_evaluation_duration_seconds", "Duration of one evaluation of every alert rule.", registry)

        remoteWriteLag = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_remote_write_lag_seconds", "Time from the end of the last bucket sent by remote write to now."
            ))
        remoteWriteRetries = registry.makeCounter(
            descriptor: Self.named(
                "netpulse_remote_write_retries_total", "Remote-write requests sent again (5xx, 429 or no answer)."))
        let samples = Self.named("netpulse_remote_write_samples_total", "Remote-write samples by outcome.")
        remoteWriteSent = registry.makeCounter(descriptor: samples, labels: [("outcome", "sent")])
        remoteWriteRefused = registry.makeCounter(descriptor: samples, labels: [("outcome", "refused")])

        agentsConnected = registry.makeGauge(
            descriptor: Self.named("netpulse_agents_connected", "Agent connections past their handshake."))
        handshakesPending = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_handshakes_pending", "Connections accepted and still in their TLS handshake or HELLO."))
        queueBatches = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_ingest_queue_batches", "Batches queued or in a commit, not yet acknowledged."))
        queueOldest = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_ingest_queue_oldest_seconds", "How long the oldest queued batch has waited."))
        applyBacklog = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_ingest_apply_backlog_batches",
                "Batches acknowledged from the ingest journal and not yet applied to the store (SQLite)."))
        paced = registry.makeGauge(
            descriptor: Self.named("netpulse_agents_paced", "1 while agents are asked to slow down (PACE), else 0."))
        storeBytes = registry.makeGauge(
            descriptor: Self.named("netpulse_store_size_bytes", "Size of the store on disk."))
        storeWriting = registry.makeGauge(
            descriptor: Self.named("netpulse_store_writable", "0 while the store cannot write (a full disk), else 1."))
        leading = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_leader",
                "1 while this daemon leads (keeps bills, alerts, remote write, dashboards, snapshots, retention), else 0."
            ))
        alertsPending = registry.makeGauge(
            descriptor: Self.named("netpulse_alerts", "Alert instances by state."), labels: [("state", "pending")])
        alertsFiring = registry.makeGauge(
            descriptor: Self.named("netpulse_alerts", "Alert instances by state."), labels: [("state", "firing")])
        notificationsQueued = registry.makeGauge(
            descriptor: Self.named("netpulse_notifications_queued", "Alert notifications waiting to be delivered."))
        residentMemory = registry.makeGauge(
            descriptor: Self.named("process_resident_memory_bytes", "Resident memory size in bytes."))
        openFiles = registry.makeGauge(descriptor: Self.named("process_open_fds", "Number of open file descriptors."))
        registry.makeGauge(
            descriptor: Self.named("process_start_time_seconds", "Start time of the process since the Unix epoch.")
        )
        .set(Date().timeIntervalSince1970)
        registry.makeGauge(
            descriptor: Self.named("netpulse_build_info", "The netpulsed version, as a label; always 1."),
            labels: [("version", NetpulseVersion.string)]
        ).set(Int64(1))

        batchesStored = MirroredCounter(
            registry.makeCounter(
                descriptor: Self.named(
                    "netpulse_batches_stored_total", "Batches stored (each acknowledged after its commit).")))
        valuesStored = MirroredCounter(
            registry.makeCounter(descriptor: Self.named("netpulse_values_stored_total", "Counter values stored.")))
        duplicates = MirroredCounter(
            registry.makeCounter(
                descriptor: Self.named(
                    "netpulse_batches_duplicate_total",
                    "Batches acknowledged as already stored (resent after a lost acknowledgement).")))
        rejected = MirroredCounter(
            registry.makeCounter(
                descriptor: Self.named("netpulse_batches_rejected_total", "Batches refused for good (REJECT).")))
        cpuSeconds = MirroredCounter(
            registry.makeCounter(
                descriptor: Self.named("process_cpu_seconds_total", "User and system CPU time spent in seconds.")))
        let limits = Self.named(
            "netpulse_limit_refusals_total",
            "Batches, connections or labels refused because an agent went over a limit.")
        let registry = self.registry
        limitRefusals = Dictionary(
            uniqueKeysWithValues: AgentLimits.Kind.allCases.map { kind in
                (kind, MirroredCounter(registry.makeCounter(descriptor: limits, labels: [("limit", kind.rawValue)])))
            })
        unplacedSteps = MirroredCounter(
            registry.makeCounter(
                descriptor: Self.named(
                    "netpulse_unplaced_steps_total",
                    "Counted steps whose time could not be placed (a clock far off, data older than max_age), by the store."
                )))
        setAsideAfterDeaths = MirroredCounter(
            registry.makeCounter(
                descriptor: Self.named(
                    "netpulse_batches_set_aside_after_deaths_total",
                    "Batches set aside (or refused) because the daemon died twice while applying them.")))
        queueBytes = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_ingest_queue_bytes",
                "Memory taken by the batches waiting for a commit ([ingest] queue_bytes)."))
        applyBacklogBytes = registry.makeGauge(
            descriptor: Self.named(
                "netpulse_ingest_apply_backlog_bytes", "Memory taken by the journaled batches waiting to be applied."))
    }

    /// A metric's whole name (a `netpulse_` one, or a `process_` one as client libraries name them) and its help.
    /// A histogram of how long one of the daemon's background passes takes (drawing, billing, evaluating alerts):
    /// from 10 ms to a quarter of an hour, where ingest's latencies are milliseconds to seconds.
    private static func passDuration(
        _ name: String, _ help: String, _ registry: PrometheusCollectorRegistry
    ) -> DurationHistogram {
        registry.makeDurationHistogram(
            descriptor: named(name, help),
            buckets: [
                .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1),
                .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300), .seconds(900),
            ])
    }

    private static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// What the live parts of the daemon say, read at each scrape.
    struct Sources: Sendable {
        var registry: ConnectionRegistry
        var queue: IngestQueue
        var ingest: IngestService
        var store: any MetricStore
        var leadership: Leadership
        /// For remote write's lag behind the time.
        var clock: WallClock
        /// The daemon's own certificate files as the current config names them, by role (`daemon`, `ca`, `http`).
        var certificates: @Sendable () -> [(role: String, path: String)] = { [] }
    }

    /// The exposition: the live figures read now, then every metric in Prometheus' text format.
    func exposition(from sources: Sources) async -> [UInt8] {
        agentsConnected.set(Int64(sources.registry.agentCount))
        handshakesPending.set(Int64(sources.registry.handshakeCount))
        queueBatches.set(Int64(sources.queue.pending))
        applyBacklog.set(Int64(sources.ingest.backlog.count))
        queueOldest.set(
            Double(sources.queue.backlogAge.components.seconds) + Double(
                sources.queue.backlogAge.components.attoseconds) / 1e18)
        paced.set(Int64(sources.registry.currentPace.map { $0 == .normal ? 0 : 1 } ?? 0))
        storeBytes.set(Int64(sources.store.sizeOnDisk))
        storeWriting.set(Int64(sources.ingest.writeFailure.withLock { $0 } == nil ? 1 : 0))
        leading.set(Int64(sources.leadership.isLeader ? 1 : 0))
        batchesStored.catchUp(sources.ingest.batchesStored.load(ordering: .relaxed))
        valuesStored.catchUp(sources.ingest.valuesStored.load(ordering: .relaxed))
        duplicates.catchUp(sources.ingest.duplicates.load(ordering: .relaxed))
        rejected.catchUp(sources.registry.rejectedBatches.load(ordering: .relaxed))
        for (kind, count) in sources.registry.limitRefusals.counts { limitRefusals[kind]?.catchUp(count) }
        setAsideAfterDeaths.catchUp(sources.ingest.setAsideAfterDeaths.load(ordering: .relaxed))
        queueBytes.set(Int64(sources.queue.bytes))
        applyBacklogBytes.set(Int64(sources.ingest.backlog.bytes))
        if let totals = try? await sources.store.totals() { unplacedSteps.catchUp(totals.unplacedSteps) }
        // The store's reader connections answer these; a store that cannot answer leaves the last figures.
        if let instances = try? await sources.store.alertInstances() {
            alertsPending.set(Int64(instances.filter { $0.phase.status == .pending }.count))
            alertsFiring.set(Int64(instances.filter { $0.phase.status == .firing }.count))
        }
        if let queued = try? await sources.store.queuedNotificationCount() { notificationsQueued.set(Int64(queued)) }
        let forwarded = remoteWriteForwardedUntil.load(ordering: .relaxed)
        if forwarded > 0 { remoteWriteLag.set(Double(sources.clock.now() - forwarded) / 1_000) }
        if let process = ProcessStat() {
            residentMemory.set(process.residentBytes)
            cpuSeconds.catchUp(process.cpuSeconds)
        }
        if let files = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            openFiles.set(Int64(files.count))
        }
        var exposition = registry.emitToBuffer()
        exposition += Self.certificateExpiries(
            agents: sources.registry.certificateExpiries, own: sources.certificates())
        return exposition
    }

    /// When certificates expire, as Unix timestamps (Prometheus' convention for a point in time, as the blackbox
    /// exporter's `probe_ssl_earliest_cert_expiry`): each connected agent's, from its handshake, and the daemon's
    /// own, read from the files its config names now (a certificate replaced on disk shows before the reload that
    /// puts it to use). A rule such as `netpulse_agent_certificate_expiry_timestamp_seconds - time() < 14 * 86400`
    /// warns in time; netpulsed's own alert rule `certificate_expiry` does the same (docs/alerts.md).
    static func certificateExpiries(agents: [String: Int64], own: [(role: String, path: String)]) -> [UInt8] {
        var text = ""
        if !agents.isEmpty {
            text += "# HELP netpulse_agent_certificate_expiry_timestamp_seconds When each connected agent's client "
            text += "certificate expires, since the Unix epoch.\n"
            text += "# TYPE netpulse_agent_certificate_expiry_timestamp_seconds gauge\n"
            for (agent, notAfter) in agents.sorted(by: { $0.key < $1.key }) {
                text +=
                    "netpulse_agent_certificate_expiry_timestamp_seconds{agent=\"\(labelValue(agent))\"} \(notAfter)\n"
            }
        }
        let readable = own.compactMap { certificate -> (role: String, path: String, notAfter: Int64)? in
            guard let leaf = try? NIOSSLCertificate.fromPEMFile(certificate.path).first else { return nil }
            return (certificate.role, certificate.path, Int64(leaf.notValidAfter))
        }
        if !readable.isEmpty {
            text += "# HELP netpulse_certificate_expiry_timestamp_seconds When the daemon's own certificates expire "
            text += "(its server certificate, the fleet CA, the HTTP API's), since the Unix epoch.\n"
            text += "# TYPE netpulse_certificate_expiry_timestamp_seconds gauge\n"
            for certificate in readable {
                text += "netpulse_certificate_expiry_timestamp_seconds{certificate=\"\(certificate.role)\","
                text += "file=\"\(labelValue(certificate.path))\"} \(certificate.notAfter)\n"
            }
        }
        return Array(text.utf8)
    }

    /// A label value in Prometheus' text format: backslash, double quote and line feed escaped.
    static func labelValue(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Counts remote-write samples the receiver took, or refused for good.
    func remoteWriteSamples(sent: Int = 0, refused: Int = 0) {
        if sent > 0 { remoteWriteSent.increment(by: Int64(sent)) }
        if refused > 0 { remoteWriteRefused.increment(by: Int64(refused)) }
    }

    /// Records the outcome of one group commit: its duration, its size and each batch's latency.
    func recordCommit(_ items: [IngestQueue.Item], started: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        commitDuration.record(now - started)
        commitBatches.record(Double(items.count))
        for item in items { ackLatency.record(now - item.queuedAt) }
    }
}

/// A Prometheus counter kept equal to a count the daemon already keeps (an atomic, or the kernel's CPU time):
/// at each scrape it is raised by what the count gained since the last one.
final class MirroredCounter: Sendable {
    private let counter: Prometheus.Counter
    private let seen = Mutex<Double>(0)

    init(_ counter: Prometheus.Counter) { self.counter = counter }

    func catchUp(_ value: Int64) { catchUp(Double(value)) }

    func catchUp(_ value: Double) {
        let gained = seen.withLock { seen -> Double in
            let gained = value - seen
            if gained > 0 { seen = value }
            return gained
        }
        if gained > 0 { counter.increment(by: gained) }
    }
}
