import Foundation
import PulseAnalytics
import PulseCore
import PulseFormats
import PulseQuery
import Testing

/// What `netpulse alerts` prints: firing before pending, silenced alerts marked, hostile names kept as text in the
/// table (no terminal escapes) and as strings in JSON that a JSON parser reads back.
@Suite struct AlertListingTests {
    static let now: Int64 = 1_763_856_000_000

    static func listing() -> AlertListing {
        let rule = AlertRule(
            name: "busy", condition: AlertCondition(metric: .rate, comparison: .above, threshold: 1e9))
        func instance(_ host: String, _ status: AlertStatus, since: Int64) -> AlertInstance {
            AlertInstance(
                rule: "busy", fingerprint: "fp-\(host)", series: 1, labels: ["host": host, "severity": "page"],
                annotations: ["summary": "\(host) is busy"],
                phase: AlertPhase(
                    status: status, activeSince: since, firedAt: status == .firing ? since + 60_000 : nil),
                value: 2.5e9, evaluatedAt: now, ruleDigest: "d")
        }
        let hostile = "a<b&c\u{1B}[31m\"q"
        let event = AlertEvent(
            id: 7, rule: "busy", fingerprint: "fp-x", series: 1, status: .firing, at: now - 60_000, value: nil,
            labels: ["host": hostile], annotations: [:], startsAt: now - 60_000, endsAt: nil, chart: nil)
        let silence = Silence(
            id: "s1", matchers: ["host": "web-*"], startsAt: now - 1_000, endsAt: now + 3_600_000, createdBy: "ops",
            comment: "maintenance")
        return AlertListing(
            now: now, rules: ["busy": rule],
            instances: [
                instance("db-01", .pending, since: now - 600_000), instance("web-01", .firing, since: now - 60_000),
                instance(hostile, .firing, since: now - 120_000),
            ], events: [event], silences: [silence], queued: 2)
    }

    @Test func firingComesBeforePendingAndTheOldestFirst() {
        let order = Self.listing().current.map { $0.labels["host"] ?? "" }
        #expect(order.count == 3)
        #expect(order.last == "db-01")
        #expect(order.first?.hasPrefix("a<b&c") == true)
    }

    @Test func theTableKeepsHostileNamesAsTextAndMarksSilencedAlerts() {
        let table = Self.listing().table(.utc)
        #expect(!table.contains("\u{1B}"), "a terminal escape reached the table")
        let web = table.split(separator: "\n").first { $0.contains("web-01") }
        #expect(web?.hasSuffix("yes") == true, "web-01 matches the silence host=web-*: \(String(describing: web))")
        #expect(table.contains("2 notification(s) waiting for delivery"))
    }

    @Test func theJsonIsReadBackByAParserWithEveryNameIntact() throws {
        let text = Self.listing().json
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let alerts = try #require(object["alerts"] as? [[String: Any]])
        #expect(alerts.count == 3)
        let hosts = alerts.compactMap { ($0["labels"] as? [String: String])?["host"] }
        #expect(hosts.contains("a<b&c\u{1B}[31m\"q"))
        let web = try #require(alerts.first { ($0["labels"] as? [String: String])?["host"] == "web-01" })
        #expect(web["silencedBy"] as? [String] == ["s1"])
        #expect((object["events"] as? [[String: Any]])?.first?["value"] is NSNull)
        #expect(object["queuedNotifications"] as? Int == 2)
    }
}
