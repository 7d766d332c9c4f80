import Foundation
import GRDB
import PulseAnalytics
import PulseStore

extension SQLiteStore {
    public func alertInstances() async throws -> [AlertInstance] {
        try await rows(
            """
            SELECT \(AlertColumns.instance) FROM alert_instance ORDER BY rule, fingerprint
            """
        ) { row in
            AlertInstance(
                rule: row[0], fingerprint: row[1], series: row[2], labels: LabelsJSON.labels(row[3]),
                annotations: LabelsJSON.labels(row[4]),
                phase: AlertPhase(
                    status: AlertStatus(rawValue: row[5]) ?? .pending, activeSince: row[6], firedAt: row[7],
                    clearSince: row[8]),
                value: row[9], evaluatedAt: row[10], ruleDigest: row[11])
        }
    }

    @discardableResult
    public func saveAlerts(_ update: AlertUpdate) async throws -> [AlertEvent] {
        try await pool.write { db in
            // Removals first: a changed rule's instance is removed and may start again in the same evaluation.
            for key in update.removed {
                try db.execute(
                    sql: "DELETE FROM alert_instance WHERE rule = ? AND fingerprint = ?",
                    arguments: [key.rule, key.fingerprint])
            }
            for instance in update.instances {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO alert_instance (\(AlertColumns.instance))
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        instance.rule, instance.fingerprint, instance.series, LabelsJSON.text(instance.labels),
                        LabelsJSON.text(instance.annotations), instance.phase.status.rawValue,
                        instance.phase.activeSince,
                        instance.phase.firedAt, instance.phase.clearSince, instance.value, instance.evaluatedAt,
                        instance.ruleDigest,
                    ])
            }
            var events = [AlertEvent]()
            for var event in update.events {
                try db.execute(
                    sql: """
                        INSERT INTO alert_event (\(AlertColumns.eventInsert))
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        event.at, event.rule, event.fingerprint, event.series, event.status.rawValue, event.value,
                        LabelsJSON.text(event.labels), LabelsJSON.text(event.annotations), event.startsAt, event.endsAt,
                        event.chart,
                    ])
                event.id = db.lastInsertedRowID
                events.append(event)
            }
            return events
        }
    }

    public func alertEvents(since: Int64, limit: Int) async throws -> [AlertEvent] {
        try await rows(
            """
            SELECT \(AlertColumns.event) FROM alert_event WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?
            """, [since, limit], Self.event)
    }

    public func alertEvents(from: Int64, to: Int64) async throws -> [AlertEvent] {
        try await rows(
            """
            SELECT \(AlertColumns.event) FROM alert_event WHERE at >= ? AND at < ? ORDER BY at, id
            """, [from, to], Self.event)
    }

    static func event(_ row: Row) -> AlertEvent {
        AlertEvent(
            id: row[0], rule: row[1], fingerprint: row[2], series: row[3],
            status: AlertStatus(rawValue: row[4]) ?? .firing, at: row[5], value: row[6],
            labels: LabelsJSON.labels(row[7]),
            annotations: LabelsJSON.labels(row[8]), startsAt: row[9], endsAt: row[10], chart: row[11])
    }

    public func pruneAlertEvents(before: Int64) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM alert_event WHERE at < ?", arguments: [before])
            return db.changesCount
        }
    }

    // MARK: Silences

    public func silences() async throws -> [Silence] {
        try await rows(
            """
            SELECT \(AlertColumns.silence) FROM alert_silence ORDER BY starts_at, id
            """
        ) { row in
            Silence(
                id: row[0], matchers: LabelsJSON.labels(row[1]), startsAt: row[2], endsAt: row[3],
                createdBy: row[4],
                comment: row[5])
        }
    }

    public func saveSilence(_ silence: Silence) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO alert_silence (\(AlertColumns.silence))
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    silence.id, LabelsJSON.text(silence.matchers), silence.startsAt, silence.endsAt, silence.createdBy,
                    silence.comment,
                ])
        }
    }

    public func expireSilence(id: String, at: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE alert_silence SET ends_at = MIN(ends_at, ?) WHERE id = ?", arguments: [at, id])
            return db.changesCount > 0
        }
    }

    public func pruneSilences(endedBefore before: Int64) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM alert_silence WHERE ends_at < ?", arguments: [before])
            return db.changesCount
        }
    }

    // MARK: Notifications

    public func notificationGroups() async throws -> [NotificationGroup] {
        try await rows(
            """
            SELECT \(AlertColumns.group) FROM notification_group ORDER BY receiver, key
            """
        ) { row in
            NotificationGroup(
                receiver: row[0], key: row[1], labels: LabelsJSON.labels(row[2]), createdAt: row[3],
                notifiedAt: row[4], notifiedFiring: Set(LabelsJSON.strings(row[5])))
        }
    }

    public func queueNotification(
        _ notification: PendingNotification?, group: NotificationGroup?, delete: [NotificationGroup]
    ) async throws {
        try await pool.write { db in
            if let notification {
                try db.execute(
                    sql: """
                        INSERT INTO notification (\(AlertColumns.notificationInsert))
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        notification.receiver, notification.groupKey, notification.createdAt,
                        Data(notification.body), notification.attempts, notification.nextAttempt,
                        notification.lastError,
                    ])
            }
            if let group {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO notification_group (\(AlertColumns.group))
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        group.receiver, group.key, LabelsJSON.text(group.labels), group.createdAt, group.notifiedAt,
                        LabelsJSON.text(group.notifiedFiring.sorted()),
                    ])
            }
            for group in delete {
                try db.execute(
                    sql: "DELETE FROM notification_group WHERE receiver = ? AND key = ?",
                    arguments: [group.receiver, group.key])
            }
        }
    }

    public func queuedNotifications(receiver: String, limit: Int) async throws -> [PendingNotification] {
        try await rows(
            """
            SELECT \(AlertColumns.notification) FROM notification WHERE receiver = ? ORDER BY id LIMIT ?
            """, [receiver, limit]
        ) { row in
            PendingNotification(
                id: row[0], receiver: row[1], groupKey: row[2], createdAt: row[3], body: [UInt8](row[4] as Data),
                attempts: row[5], nextAttempt: row[6], lastError: row[7])
        }
    }

    public func queuedNotificationCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notification") ?? 0 }
    }

    public func finishNotification(id: Int64) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM notification WHERE id = ?", arguments: [id]) }
    }

    public func retryNotification(id: Int64, attempts: Int, nextAttempt: Int64, error: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE notification SET attempts = ?, next_attempt = ?, last_error = ? WHERE id = ?",
                arguments: [attempts, nextAttempt, error, id])
        }
    }
}
