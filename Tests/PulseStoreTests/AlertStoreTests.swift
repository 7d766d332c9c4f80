import Foundation
import PulseAnalytics
import PulseCore
import TestSupport
import Testing

@testable import PulseStore
@testable import PulseStorePostgres
@testable import PulseStoreSQLite

/// The alerts part of the storage protocol on a real SQLite file: instances, history, silences, and who may
/// write them.
@Suite struct AlertStoreTests {
    func instance(_ rule: String, _ fingerprint: String, status: AlertStatus, since: Int64) -> AlertInstance {
        AlertInstance(
            rule: rule, fingerprint: fingerprint, series: 1,
            labels: ["alertname": rule, "host": "a<b&c", "note": "say \"hi\"\nbye"], annotations: ["summary": "x"],
            phase: AlertPhase(status: status, activeSince: since, firedAt: status == .firing ? since : nil),
            value: 1e9, evaluatedAt: since, ruleDigest: "d1")
    }

    func event(_ rule: String, _ status: AlertStatus, at: Int64) -> AlertEvent {
        AlertEvent(
            rule: rule, fingerprint: "f-\(rule)", series: 1, status: status, at: at, value: 2e9,
            labels: ["alertname": rule], annotations: [:], startsAt: at, endsAt: status == .resolved ? at : nil,
            chart: "/var/lib/netpulsed/alerts/\(rule).svg")
    }

    @Test func instancesAndHistoryRoundTripAndPrune() async throws {
        try await roundTripAndPrune(try SQLiteStore(path: temporaryDirectory() + "/netpulse.db"))
    }

    /// The same in the PostgreSQL store, with silences and the notification queue.
    @Test func thePostgreSQLStoreKeepsAlertsTheSame() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let store = try await PostgresStore(
            location: PostgresLocation(url: server.createDatabase("alerts")),
            idleTransactionTimeout: PostgresServer.idleTransactionLimit)
        defer { store.shutdown() }
        try await store.holdLease(holder: "test", ttl: 3_600_000)  // alerts are the leader's to write
        try await roundTripAndPrune(store)
        let silence = Silence(
            id: "s-1", matchers: ["host": "web-*", "alertname": "Busy"], startsAt: 1_000, endsAt: 61_000,
            createdBy: "ops", comment: "maintenance \"window\"")
        try await store.saveSilence(silence)
        #expect(try await store.silences() == [silence])
        #expect(try await store.expireSilence(id: "s-1", at: 30_000))
        #expect(!(try await store.expireSilence(id: "nope", at: 30_000)))
        #expect(try await store.silences().first?.endsAt == 30_000)

        let group = NotificationGroup(
            receiver: "ops", key: "{}:{alertname=\"Busy\"}", labels: ["alertname": "Busy"], createdAt: 5,
            notifiedAt: 7, notifiedFiring: ["f1", "f2"])
        let body: [UInt8] = Array("{\"alerts\":[]}".utf8) + [0, 255]
        try await store.queueNotification(
            PendingNotification(
                id: 0, receiver: "ops", groupKey: group.key, createdAt: 6, body: body, attempts: 0, nextAttempt: 6,
                lastError: nil), group: group, delete: [])
        #expect(try await store.notificationGroups() == [group])
        let queued = try await store.queuedNotifications(receiver: "ops", limit: 10)
        #expect(queued.count == 1 && queued[0].body == body && queued[0].lastError == nil)
        #expect(try await store.queuedNotificationCount() == 1)
        try await store.retryNotification(id: queued[0].id, attempts: 1, nextAttempt: 60, error: "HTTP 500")
        let retried = try await store.queuedNotifications(receiver: "ops", limit: 10)
        #expect(
            retried.first?.attempts == 1 && retried.first?.nextAttempt == 60 && retried.first?.lastError == "HTTP 500")
        try await store.finishNotification(id: queued[0].id)
        try await store.queueNotification(nil, group: nil, delete: [group])
        #expect(try await store.queuedNotificationCount() == 0)
        #expect(try await store.notificationGroups().isEmpty)
    }

    func roundTripAndPrune(_ store: any MetricStore) async throws {
        let busy = instance("Busy", "f1", status: .firing, since: 1_000)
        let stored = try await store.saveAlerts(
            AlertUpdate(
                instances: [busy, instance("Slow", "f2", status: .pending, since: 2_000)],
                events: [event("Busy", .firing, at: 1_000), event("Slow", .pending, at: 2_000)]))
        #expect(stored.map(\.id).allSatisfy { $0 > 0 } && Set(stored.map(\.id)).count == 2)
        let instances = try await store.alertInstances().sorted { $0.rule < $1.rule }
        #expect(instances == [busy, instance("Slow", "f2", status: .pending, since: 2_000)])

        // One evaluation that ends an instance and starts it again (a changed rule): removals first, so it stays.
        var again = busy
        again.ruleDigest = "d2"
        try await store.saveAlerts(
            AlertUpdate(instances: [again], removed: [AlertKey(rule: "Busy", fingerprint: "f1")]))
        #expect(try await store.alertInstances().first { $0.rule == "Busy" }?.ruleDigest == "d2")
        try await store.saveAlerts(AlertUpdate(removed: [AlertKey(rule: "Slow", fingerprint: "f2")]))
        #expect(try await store.alertInstances().map(\.rule) == ["Busy"])

        try await store.saveAlerts(
            AlertUpdate(events: [event("Busy", .resolved, at: 5_000), event("Late", .firing, at: 9_000)]))
        // A period's events, oldest first, its end excluded; the newest first with a limit for listings.
        #expect(try await store.alertEvents(from: 1_000, to: 9_000).map(\.at) == [1_000, 2_000, 5_000])
        #expect(try await store.alertEvents(since: 0, limit: 2).map(\.at) == [9_000, 5_000])
        #expect(try await store.alertEvents(from: 0, to: 10_000).first?.chart == "/var/lib/netpulsed/alerts/Busy.svg")
        // History retention.
        #expect(try await store.pruneAlertEvents(before: 5_000) == 2)
        #expect(try await store.alertEvents(from: 0, to: 10_000).map(\.at) == [5_000, 9_000])
        // Silences that ended before the history's start go with it; one in force, or ended since, stays.
        for (id, end) in [("ended", Int64(4_000)), ("ends-later", 9_000)] {
            try await store.saveSilence(
                Silence(id: id, matchers: ["host": "a"], startsAt: 1_000, endsAt: end, createdBy: "ops", comment: ""))
        }
        #expect(try await store.pruneSilences(endedBefore: 5_000) == 1)
        #expect(try await store.silences().map(\.id) == ["ends-later"])
        #expect(try await store.pruneSilences(endedBefore: 10_000) == 1)
        #expect(try await store.silences().isEmpty)
    }

    /// `netpulse alerts silence` opens the daemon's store as an editor: it writes silences into a store that
    /// exists, and never creates one.
    @Test func silencesAreWrittenByAnEditorThatNeverCreatesAStore() async throws {
        let path = temporaryDirectory() + "/netpulse.db"
        #expect(throws: StoreError.self) { try SQLiteStore(path: path, access: .editor) }
        #expect(!FileManager.default.fileExists(atPath: path))
        let daemon = try SQLiteStore(path: path)
        let editor = try SQLiteStore(path: path, access: .editor)
        let silence = Silence(
            id: "s-1", matchers: ["host": "web-*", "alertname": "Busy"], startsAt: 1_000, endsAt: 61_000,
            createdBy: "ops", comment: "maintenance \"window\"")
        try await editor.saveSilence(silence)
        #expect(try await daemon.silences() == [silence])
        #expect(try await editor.expireSilence(id: "s-1", at: 30_000))
        #expect(!(try await editor.expireSilence(id: "nope", at: 30_000)))
        let expired = try #require(try await daemon.silences().first)
        #expect(expired.endsAt == 30_000 && !expired.isActive(at: 30_000) && expired.isActive(at: 29_999))
    }
}
