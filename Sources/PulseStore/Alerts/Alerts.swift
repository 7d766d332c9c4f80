import PulseAnalytics

/// One evaluation's changes, written in one transaction.
public struct AlertUpdate: Sendable {
    /// Instances to insert or replace.
    public var instances: [AlertInstance]
    /// Instances that are inactive again (rule, fingerprint).
    public var removed: [AlertKey]
    public var events: [AlertEvent]

    public init(instances: [AlertInstance] = [], removed: [AlertKey] = [], events: [AlertEvent] = []) {
        self.instances = instances
        self.removed = removed
        self.events = events
    }

    public var isEmpty: Bool { instances.isEmpty && removed.isEmpty && events.isEmpty }
}

public struct AlertKey: Sendable, Hashable {
    public var rule: String
    public var fingerprint: String

    public init(rule: String, fingerprint: String) {
        self.rule = rule
        self.fingerprint = fingerprint
    }
}

/// What the notifier last told a receiver about one group of alerts (Alertmanager's aggregation group), so that
/// a restart neither repeats a notification nor forgets to send a resolution.
public struct NotificationGroup: Sendable, Hashable {
    public var receiver: String
    public var key: String
    public var labels: [String: String]
    /// When the group's first alert arrived (its first notification waits `group_wait` from here).
    public var createdAt: Int64
    /// When a notification was last queued for it (nil: none yet).
    public var notifiedAt: Int64?
    /// The fingerprints it was last told were firing.
    public var notifiedFiring: Set<String>

    public init(
        receiver: String, key: String, labels: [String: String], createdAt: Int64, notifiedAt: Int64?,
        notifiedFiring: Set<String>
    ) {
        self.receiver = receiver
        self.key = key
        self.labels = labels
        self.createdAt = createdAt
        self.notifiedAt = notifiedAt
        self.notifiedFiring = notifiedFiring
    }
}

/// A notification waiting to be delivered (the outbox survives restarts).
public struct PendingNotification: Sendable, Hashable {
    /// Assigned by the store (0 before).
    public var id: Int64
    public var receiver: String
    public var groupKey: String
    public var createdAt: Int64
    public var body: [UInt8]
    public var attempts: Int
    public var nextAttempt: Int64
    public var lastError: String?

    public init(
        id: Int64 = 0, receiver: String, groupKey: String, createdAt: Int64, body: [UInt8], attempts: Int = 0,
        nextAttempt: Int64, lastError: String? = nil
    ) {
        self.id = id
        self.receiver = receiver
        self.groupKey = groupKey
        self.createdAt = createdAt
        self.body = body
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.lastError = lastError
    }
}

/// The alerts part of the storage protocol (``MetricStore`` includes it): states, history, silences and the
/// notification outbox. Each method is one transaction.
public protocol AlertStore: Sendable {
    /// Every pending or firing instance.
    func alertInstances() async throws -> [AlertInstance]
    /// Writes one evaluation; returns the events with their ids.
    @discardableResult func saveAlerts(_ update: AlertUpdate) async throws -> [AlertEvent]
    /// Events at or after `since`, newest first, at most `limit`.
    func alertEvents(since: Int64, limit: Int) async throws -> [AlertEvent]
    /// Every event in `[from, to)`, oldest first (a report's period).
    func alertEvents(from: Int64, to: Int64) async throws -> [AlertEvent]
    /// Deletes events before `before`; returns how many.
    func pruneAlertEvents(before: Int64) async throws -> Int

    func silences() async throws -> [Silence]
    func saveSilence(_ silence: Silence) async throws
    /// Ends a silence at `at`; false when there is none with that id.
    func expireSilence(id: String, at: Int64) async throws -> Bool
    /// Deletes the silences that ended before `before` (alert history past `[alerts] history`); returns how many.
    func pruneSilences(endedBefore before: Int64) async throws -> Int

    func notificationGroups() async throws -> [NotificationGroup]
    /// Queues a notification and records what its group was told, in one transaction; a nil notification only
    /// updates the group, and `delete` drops groups that are done.
    func queueNotification(
        _ notification: PendingNotification?, group: NotificationGroup?, delete: [NotificationGroup]
    ) async throws
    /// A receiver's queued notifications, oldest first (they are delivered in order).
    func queuedNotifications(receiver: String, limit: Int) async throws -> [PendingNotification]
    /// All queued notifications (for status and the CLI).
    func queuedNotificationCount() async throws -> Int
    /// Delivered or given up: removes it.
    func finishNotification(id: Int64) async throws
    /// Failed for now: records the attempt and when to try again.
    func retryNotification(id: Int64, attempts: Int, nextAttempt: Int64, error: String) async throws
}
