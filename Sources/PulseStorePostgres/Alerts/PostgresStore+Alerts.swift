import Foundation
import NIOCore
import PostgresNIO
import PulseAnalytics
import PulseStore

/// Alerts in PostgreSQL: the same rows as in SQLite (SQLiteStore+Alerts.swift), label maps as the same JSON text.
extension PostgresStore {
    public func alertInstances() async throws -> [AlertInstance] {
        try await read { session in
            try await session.query(
                """
                SELECT \(unescaped: AlertColumns.instance) FROM alert_instance ORDER BY rule COLLATE "C", fingerprint COLLATE "C"
                """
            ).map { row in
                let (
                    rule, fingerprint, series, labels, annotations, status, activeSince, firedAt, clearSince, value,
                    evaluatedAt, digest
                ) = try row.decode(
                    (String, String, Int64, String, String, String, Int64, Int64?, Int64?, Double?, Int64, String).self)
                return AlertInstance(
                    rule: rule, fingerprint: fingerprint, series: series, labels: LabelsJSON.labels(labels),
                    annotations: LabelsJSON.labels(annotations),
                    phase: AlertPhase(
                        status: AlertStatus(rawValue: status) ?? .pending, activeSince: activeSince, firedAt: firedAt,
                        clearSince: clearSince),
                    value: value, evaluatedAt: evaluatedAt, ruleDigest: digest)
            }
        }
    }

    @discardableResult
    public func saveAlerts(_ update: AlertUpdate) async throws -> [AlertEvent] {
        try await leaderWrite { session in
            // Removals first: a changed rule's instance is removed and may start again in the same evaluation.
            for key in update.removed {
                try await session.query(
                    "DELETE FROM alert_instance WHERE rule = \(key.rule) AND fingerprint = \(key.fingerprint)")
            }
            for instance in update.instances {
                try await session.query(
                    """
                    INSERT INTO alert_instance (\(unescaped: AlertColumns.instance))
                    VALUES (\(instance.rule), \(instance.fingerprint), \(instance.series),
                        \(LabelsJSON.text(instance.labels)), \(LabelsJSON.text(instance.annotations)),
                        \(instance.phase.status.rawValue), \(instance.phase.activeSince), \(instance.phase.firedAt),
                        \(instance.phase.clearSince), \(instance.value), \(instance.evaluatedAt), \(instance.ruleDigest))
                    ON CONFLICT (rule, fingerprint) DO UPDATE SET series_id = excluded.series_id,
                        labels = excluded.labels, annotations = excluded.annotations, status = excluded.status,
                        active_since = excluded.active_since, fired_at = excluded.fired_at,
                        clear_since = excluded.clear_since, value = excluded.value,
                        evaluated_at = excluded.evaluated_at, rule_digest = excluded.rule_digest
                    """)
            }
            var events = [AlertEvent]()
            for var event in update.events {
                event.id = try await session.query(
                    """
                    INSERT INTO alert_event (\(unescaped: AlertColumns.eventInsert))
                    VALUES (\(event.at), \(event.rule), \(event.fingerprint), \(event.series), \(event.status.rawValue),
                        \(event.value), \(LabelsJSON.text(event.labels)), \(LabelsJSON.text(event.annotations)),
                        \(event.startsAt), \(event.endsAt), \(event.chart))
                    RETURNING id
                    """
                ).single("the id of an alert event").decode(Int64.self)
                events.append(event)
            }
            return events
        }
    }

    static let eventColumns = "SELECT \(AlertColumns.event) FROM alert_event"

    static func event(_ row: PostgresRow) throws -> AlertEvent {
        let (id, rule, fingerprint, series, status, at, value, labels, annotations, startsAt, endsAt, chart) =
            try row.decode(
                (Int64, String, String, Int64, String, Int64, Double?, String, String, Int64, Int64?, String?).self)
        return AlertEvent(
            id: id, rule: rule, fingerprint: fingerprint, series: series,
            status: AlertStatus(rawValue: status) ?? .firing, at: at, value: value,
            labels: LabelsJSON.labels(labels), annotations: LabelsJSON.labels(annotations), startsAt: startsAt,
            endsAt: endsAt, chart: chart)
    }

    public func alertEvents(since: Int64, limit: Int) async throws -> [AlertEvent] {
        try await read { session in
            try await session.query(
                PostgresQuery(
                    unsafeSQL: Self.eventColumns + " WHERE at >= \(since) ORDER BY at DESC, id DESC LIMIT \(limit)")
            ).map(Self.event)
        }
    }

    public func alertEvents(from: Int64, to: Int64) async throws -> [AlertEvent] {
        try await read { session in
            try await session.query(
                PostgresQuery(unsafeSQL: Self.eventColumns + " WHERE at >= \(from) AND at < \(to) ORDER BY at, id")
            ).map(Self.event)
        }
    }

    public func pruneAlertEvents(before: Int64) async throws -> Int {
        try await leaderWrite { session in
            try await session.query("DELETE FROM alert_event WHERE at < \(before) RETURNING 1").count
        }
    }

    // MARK: Silences

    public func silences() async throws -> [Silence] {
        try await read { session in
            try await session.query(
                """
                SELECT \(unescaped: AlertColumns.silence) FROM alert_silence
                ORDER BY starts_at, id COLLATE "C"
                """
            ).map { row in
                let (id, matchers, startsAt, endsAt, createdBy, comment) = try row.decode(
                    (String, String, Int64, Int64, String, String).self)
                return Silence(
                    id: id, matchers: LabelsJSON.labels(matchers), startsAt: startsAt, endsAt: endsAt,
                    createdBy: createdBy, comment: comment)
            }
        }
    }

    public func saveSilence(_ silence: Silence) async throws {
        try await write { session in
            try await session.query(
                """
                INSERT INTO alert_silence (\(unescaped: AlertColumns.silence))
                VALUES (\(silence.id), \(LabelsJSON.text(silence.matchers)), \(silence.startsAt), \(silence.endsAt),
                    \(silence.createdBy), \(silence.comment))
                ON CONFLICT (id) DO UPDATE SET matchers = excluded.matchers, starts_at = excluded.starts_at,
                    ends_at = excluded.ends_at, created_by = excluded.created_by, comment = excluded.comment
                """)
        }
    }

    public func expireSilence(id: String, at: Int64) async throws -> Bool {
        try await write { session in
            try await !session.query(
                "UPDATE alert_silence SET ends_at = LEAST(ends_at, \(at)) WHERE id = \(id) RETURNING 1"
            ).isEmpty
        }
    }

    public func pruneSilences(endedBefore before: Int64) async throws -> Int {
        try await write { session in
            try await session.query("DELETE FROM alert_silence WHERE ends_at < \(before) RETURNING 1").count
        }
    }

    // MARK: Notifications

    public func notificationGroups() async throws -> [NotificationGroup] {
        try await read { session in
            try await session.query(
                """
                SELECT \(unescaped: AlertColumns.group) FROM notification_group
                ORDER BY receiver COLLATE "C", key COLLATE "C"
                """
            ).map { row in
                let (receiver, key, labels, createdAt, notifiedAt, firing) = try row.decode(
                    (String, String, String, Int64, Int64?, String).self)
                return NotificationGroup(
                    receiver: receiver, key: key, labels: LabelsJSON.labels(labels), createdAt: createdAt,
                    notifiedAt: notifiedAt, notifiedFiring: Set(LabelsJSON.strings(firing)))
            }
        }
    }

    public func queueNotification(
        _ notification: PendingNotification?, group: NotificationGroup?, delete: [NotificationGroup]
    ) async throws {
        try await leaderWrite { session in
            if let notification {
                try await session.query(
                    """
                    INSERT INTO notification (\(unescaped: AlertColumns.notificationInsert))
                    VALUES (\(notification.receiver), \(notification.groupKey), \(notification.createdAt),
                        \(ByteBuffer(bytes: notification.body)), \(Int64(notification.attempts)),
                        \(notification.nextAttempt), \(notification.lastError))
                    """)
            }
            if let group {
                try await session.query(
                    """
                    INSERT INTO notification_group (\(unescaped: AlertColumns.group))
                    VALUES (\(group.receiver), \(group.key), \(LabelsJSON.text(group.labels)), \(group.createdAt),
                        \(group.notifiedAt), \(LabelsJSON.text(group.notifiedFiring.sorted())))
                    ON CONFLICT (receiver, key) DO UPDATE SET labels = excluded.labels,
                        created_at = excluded.created_at, notified_at = excluded.notified_at,
                        notified_firing = excluded.notified_firing
                    """)
            }
            for group in delete {
                try await session.query(
                    "DELETE FROM notification_group WHERE receiver = \(group.receiver) AND key = \(group.key)")
            }
        }
    }

    public func queuedNotifications(receiver: String, limit: Int) async throws -> [PendingNotification] {
        try await read { session in
            try await session.query(
                """
                SELECT \(unescaped: AlertColumns.notification)
                FROM notification WHERE receiver = \(receiver) ORDER BY id LIMIT \(Int64(limit))
                """
            ).map { row in
                let (id, receiver, group, createdAt, body, attempts, nextAttempt, lastError) = try row.decode(
                    (Int64, String, String, Int64, ByteBuffer, Int64, Int64, String?).self)
                return PendingNotification(
                    id: id, receiver: receiver, groupKey: group, createdAt: createdAt,
                    body: Array(body.readableBytesView), attempts: Int(attempts), nextAttempt: nextAttempt,
                    lastError: lastError)
            }
        }
    }

    public func queuedNotificationCount() async throws -> Int {
        try await read { session in
            Int(
                try await session.query("SELECT COUNT(*) FROM notification").single("COUNT(*) of notification")
                    .decode(Int64.self))
        }
    }

    public func finishNotification(id: Int64) async throws {
        try await leaderWrite { session in try await session.query("DELETE FROM notification WHERE id = \(id)") }
    }

    public func retryNotification(id: Int64, attempts: Int, nextAttempt: Int64, error: String) async throws {
        try await leaderWrite { session in
            try await session.query(
                """
                UPDATE notification SET attempts = \(Int64(attempts)), next_attempt = \(nextAttempt),
                    last_error = \(error) WHERE id = \(id)
                """)
        }
    }
}
