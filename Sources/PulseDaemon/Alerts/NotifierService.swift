import Logging
import NIOCore
import NIOPosix
import PulseAnalytics
import PulseCore
import PulseQuery
import PulseSettings
import PulseStore
import ServiceLifecycle

/// Sends notifications for firing and resolved alerts the way Alertmanager does (`docs/alerts.md`): alerts are
/// grouped by `group_by` labels, a new group waits `group_wait` so that a whole site going dark is one
/// notification, a changed group is sent again at most every `group_interval`, an unchanged firing group every
/// `repeat_interval`; silenced alerts are left out.
///
/// What each group was last told, and every notification not yet delivered, are kept in the store, so a restart
/// neither repeats nor loses a notification. Each receiver delivers from its own queue in order, retrying with
/// backoff; one that is down holds up only its own queue, never ingest, evaluation or the other receiver.
///
/// Every attempt is bounded (the webhook by its timeout, the command by ``CommandReceiver/bound``), and each loop
/// beats a ``LoopHeartbeat`` for the watchdog, so a loop that stalls all the same (a store call that never returns)
/// stops the watchdog's pings instead of silencing notifications unnoticed.
final class NotifierService: Service, Sendable {
    let store: any MetricStore
    let current: CurrentConfig
    let logger: Logger
    let group: any EventLoopGroup
    let clock: WallClock
    /// The grouping loop's, then one per receiver's delivery loop.
    let heartbeats: [LoopHeartbeat]

    static let receivers = ["webhook", "command"]
    /// Milliseconds a loop's store reads and writes of one round may take, beside its sleep and its attempt: as
    /// long as the ingest loops allow one store call, twice over.
    static let storeAllowance: Int64 = 40_000

    init(
        store: any MetricStore, current: CurrentConfig, clock: WallClock, logger: Logger, group: any EventLoopGroup
    ) {
        self.store = store
        self.current = current
        self.clock = clock
        self.logger = logger
        self.group = group
        heartbeats =
            [LoopHeartbeat("alert notification grouping")]
            + Self.receivers.map { LoopHeartbeat("alert notification delivery (\($0))") }
    }

    func run() async throws {
        // One HTTP client for the run's webhook posts (its connection kept alive between them), closed when it ends.
        await WebhookClient.with(group: group, logger: logger, purpose: "alert notifications") { webhook in
            await withTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await self.dispatchLoop(heartbeat: self.heartbeats[0]) }
                for (receiver, heartbeat) in zip(Self.receivers, heartbeats.dropFirst()) {
                    tasks.addTask { await self.deliveryLoop(receiver, heartbeat: heartbeat, webhook: webhook) }
                }
                await tasks.waitForAll()
            }
        }
        // Stopped on purpose (shutdown, or the leader lease lost): not a stall.
        for heartbeat in heartbeats { heartbeat.finish() }
    }

    // MARK: Grouping

    /// Group timers are whole seconds: the groups are looked at every second.
    private func dispatchLoop(heartbeat: LoopHeartbeat) async {
        var reported = Set<String>()
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            heartbeat.beat(within: Self.storeAllowance + 1_000)
            do {
                try await dispatch(now: clock.now())
                reported.removeAll()
            } catch {
                let text = "\(error)"
                if reported.insert(text).inserted { logger.error("alert notifications not queued: \(text)") }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Queues what is due for every group of every receiver.
    func dispatch(now: Int64) async throws {
        let notify = current.value.alerts.notify
        let receivers = notify.receivers
        guard !receivers.isEmpty else { return }
        let instances = try await store.alertInstances()
        let firing = instances.filter { $0.phase.status == .firing }
        let silences = try await store.silences().filter { $0.isActive(at: now) }
        let groups = try await store.notificationGroups()
        // The latest event of each fingerprint: resolved alerts' details and every alert's chart.
        let since = min(groups.compactMap(\.notifiedAt).min() ?? now, firing.map(\.phase.activeSince).min() ?? now)
        var latest = [String: AlertEvent]()
        for event in try await store.alertEvents(since: since - 60_000, limit: 100_000)
        where latest[event.fingerprint] == nil {
            latest[event.fingerprint] = event
        }
        let allFiring = Set(firing.map(\.fingerprint))
        let audible = firing.filter { instance in !silences.contains { $0.matches(instance.labels) } }

        for receiver in receivers {
            var byKey = [String: (labels: [String: String], alerts: [AlertInstance])]()
            for instance in audible {
                var labels = [String: String]()
                for name in notify.groupBy { if let value = instance.labels[name] { labels[name] = value } }
                byKey[AlertPayload.groupKey(labels), default: (labels, [])].alerts.append(instance)
            }
            let known = Dictionary(
                groups.filter { $0.receiver == receiver }.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
            for key in Set(byKey.keys).union(known.keys).sorted() {
                let alerts = byKey[key]?.alerts.sorted { $0.fingerprint < $1.fingerprint } ?? []
                let isNew = known[key] == nil
                var group =
                    known[key]
                    ?? NotificationGroup(
                        receiver: receiver, key: key, labels: byKey[key]?.labels ?? [:], createdAt: now,
                        notifiedAt: nil, notifiedFiring: [])
                let firingNow = Set(alerts.map(\.fingerprint))
                // Alerts the receiver was told were firing that have since resolved (not merely been silenced).
                let resolved = group.notifiedFiring.subtracting(allFiring).sorted()
                let changed = firingNow != group.notifiedFiring || !resolved.isEmpty
                let due: Bool
                if let notifiedAt = group.notifiedAt {
                    due =
                        changed
                        ? now >= notifiedAt + notify.groupInterval
                        : !firingNow.isEmpty && now >= notifiedAt + notify.repeatInterval
                } else {
                    due = !firingNow.isEmpty && now >= group.createdAt + notify.groupWait
                }
                if firingNow.isEmpty && resolved.isEmpty {
                    // Nothing to say, and nothing said that still needs an ending.
                    if !isNew { try await store.queueNotification(nil, group: nil, delete: [group]) }
                    continue
                }
                guard due else {
                    // A new group's first notification waits group_wait from now, across restarts too.
                    if isNew { try await store.queueNotification(nil, group: group, delete: []) }
                    continue
                }
                var notified = alerts.map { instance in
                    NotifiedAlert(
                        status: .firing, labels: instance.labels, annotations: instance.annotations,
                        startsAt: instance.phase.firedAt ?? instance.phase.activeSince, endsAt: nil,
                        fingerprint: instance.fingerprint, value: instance.value,
                        chartPath: latest[instance.fingerprint]?.chart)
                }
                for fingerprint in resolved {
                    guard let event = latest[fingerprint], event.status == .resolved else { continue }
                    notified.append(
                        NotifiedAlert(
                            status: .resolved, labels: event.labels, annotations: event.annotations,
                            startsAt: event.startsAt, endsAt: event.endsAt ?? event.at, fingerprint: fingerprint,
                            value: event.value, chartPath: event.chart))
                }
                let body = AlertPayload.body(
                    receiver: receiver, groupKey: key, groupLabels: group.labels, alerts: notified,
                    externalURL: notify.externalURL)
                group.notifiedAt = now
                group.notifiedFiring = firingNow
                try await store.queueNotification(
                    PendingNotification(
                        receiver: receiver, groupKey: key, createdAt: now, body: body, nextAttempt: now),
                    group: firingNow.isEmpty ? nil : group, delete: firingNow.isEmpty ? [group] : [])
                logger.info(
                    "notification queued for \(receiver): \(key), \(firingNow.count) firing, \(resolved.count) resolved"
                )
            }
        }
    }

    // MARK: Delivery

    private func deliveryLoop(_ receiver: String, heartbeat: LoopHeartbeat, webhook: WebhookClient) async {
        var reported = Set<String>()
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            heartbeat.beat(within: Self.storeAllowance + attemptBound(receiver) + 1_000)
            var pause: Int64 = 1_000
            do {
                if let next = try await store.queuedNotifications(receiver: receiver, limit: 1).first {
                    let now = clock.now()
                    if next.nextAttempt > now {
                        pause = min(next.nextAttempt - now, 1_000)
                    } else {
                        try await deliver(next, now: now, webhook: webhook)
                        pause = 0
                    }
                }
                reported.removeAll()
            } catch {
                let text = "\(error)"
                if reported.insert(text).inserted { logger.error("alert notifications: \(text)") }
            }
            if pause > 0 { try? await Task.sleep(for: .milliseconds(pause)) }
        }
    }

    /// Milliseconds one delivery attempt to `receiver` can take at most.
    func attemptBound(_ receiver: String) -> Int64 {
        let notify = current.value.alerts.notify
        switch receiver {
        case "command": return CommandReceiver(arguments: notify.command, timeout: notify.timeout).bound
        // The timeout bounds the whole attempt (the proxy's tunnel, connecting, TLS, the answer): twice it is slack.
        default: return 2 * notify.timeout
        }
    }

    /// One attempt: delivered, given up, or rescheduled with backoff (1 s doubling to 5 minutes).
    func deliver(_ notification: PendingNotification, now: Int64, webhook: WebhookClient) async throws {
        let notify = current.value.alerts.notify
        let attempts = notification.attempts + 1
        do {
            switch notification.receiver {
            case "webhook":
                guard let url = notify.webhook else {
                    throw Permanent(description: "no webhook is configured any more")
                }
                // Made at each attempt, so a reload's URL, CA file and timeout apply to the next one.
                let target = try WebhookTarget(
                    url: url, caFile: notify.webhookCA, bearerTokenFile: notify.bearerTokenFile,
                    timeout: notify.timeout)
                let response = try await webhook.post(notification.body, to: target)
                switch response.status {
                case 200..<300: break
                case 408, 429, 500...:
                    throw WebhookError(description: "\(url) answered \(response.status): \(response.body.prefix(200))")
                default:
                    let said =
                        response.redirect(setting: "[alerts.notify] webhook") ?? String(response.body.prefix(200))
                    throw Permanent(description: "\(url) answered \(response.status): \(said)")
                }
            case "command":
                guard !notify.command.isEmpty else { throw Permanent(description: "no command is configured any more") }
                try await CommandReceiver(arguments: notify.command, timeout: notify.timeout).run(notification.body)
            default:
                throw Permanent(description: "unknown receiver \(notification.receiver)")
            }
            try await store.finishNotification(id: notification.id)
            logger.info(
                "notification delivered to \(notification.receiver) after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(notification.groupKey)"
            )
        } catch let error as Permanent {
            try await store.finishNotification(id: notification.id)
            logger.error("notification to \(notification.receiver) dropped, not retried: \(error.description)")
        } catch {
            if now - notification.createdAt >= notify.giveUpAfter {
                try await store.finishNotification(id: notification.id)
                logger.error(
                    "notification to \(notification.receiver) dropped after \(attempts) attempts over \(Units.formatDuration(notify.giveUpAfter)): \(error)"
                )
                return
            }
            let backoff = min(Int64(1_000) << min(Int64(notification.attempts), 9), 300_000)
            try await store.retryNotification(
                id: notification.id, attempts: attempts, nextAttempt: now + backoff, error: "\(error)")
            logger.warning(
                "notification to \(notification.receiver) failed (attempt \(attempts)), retrying in \(Units.formatDuration(backoff)): \(error)"
            )
        }
    }

    /// A failure that retrying cannot fix (a 4xx answer other than 408 and 429, a redirect).
    struct Permanent: Error, CustomStringConvertible {
        var description: String
    }
}
