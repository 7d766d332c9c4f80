import Foundation
import PulseCore
import Testing

@testable import PulseDaemon

/// A notification's body is Alertmanager's webhook payload (version 4), written by the one JSON encoder: keys sorted,
/// every label and the chart's SVG read back intact.
@Suite struct AlertPayloadTests {
    @Test func theBodyIsAnAlertmanagerPayloadThatReadsBackIntact() throws {
        let chart = FileManager.default.temporaryDirectory.appendingPathComponent("hot-\(UUID()).svg").path
        defer { try? FileManager.default.removeItem(atPath: chart) }
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg"><text>a<b&amp;c "q" \ é</text></svg>"#
        try svg.write(toFile: chart, atomically: true, encoding: .utf8)
        let labels = ["alertname": "hot", "interface": "p\"q>", "note": "say \"hi\"\nbye"]
        let alerts = [
            NotifiedAlert(
                status: .firing, labels: labels, annotations: ["summary": "npv0 receives 25 Mbit/s"],
                startsAt: 1_764_000_000_000, endsAt: nil, fingerprint: "0123456789abcdef", value: 25_000_000.5,
                chartPath: chart),
            NotifiedAlert(
                status: .resolved, labels: labels.merging(["interface": "lo"]) { $1 }, annotations: [:],
                startsAt: 1_764_000_000_000, endsAt: 1_764_000_600_000, fingerprint: "fedcba9876543210", value: nil,
                chartPath: nil),
        ]
        let bytes = AlertPayload.body(
            receiver: "webhook", groupKey: AlertPayload.groupKey(["alertname": "hot"]),
            groupLabels: ["alertname": "hot"], alerts: alerts, externalURL: "https://netpulse.example/")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"alerts":[{"annotations":{"summary":"npv0 receives 25 Mbit/s"},"endsAt":"#))
        #expect(text.hasSuffix(#","truncatedAlerts":0,"version":"4"}"#))

        let payload = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(payload["status"] as? String == "firing")
        #expect(payload["receiver"] as? String == "webhook")
        #expect(payload["groupKey"] as? String == #"{}:{alertname="hot"}"#)
        #expect(payload["commonLabels"] as? [String: String] == ["alertname": "hot", "note": "say \"hi\"\nbye"])
        #expect(payload["commonAnnotations"] as? [String: String] == [:])
        let sent = try #require(payload["alerts"] as? [[String: Any]])
        #expect(sent.count == 2)
        #expect(sent[0]["labels"] as? [String: String] == labels)
        #expect(sent[0]["endsAt"] as? String == "0001-01-01T00:00:00Z")
        #expect(
            sent[0]["generatorURL"] as? String == "https://netpulse.example/alerts/"
                + (chart as NSString).lastPathComponent)
        let netpulse = try #require(sent[0]["netpulse"] as? [String: Any])
        #expect((netpulse["value"] as? NSNumber)?.doubleValue == 25_000_000.5)
        #expect(netpulse["chart"] as? String == chart)
        #expect(netpulse["chartSVG"] as? String == svg)
        #expect(sent[1]["status"] as? String == "resolved")
        #expect((sent[1]["netpulse"] as? [String: Any])?.isEmpty == true)
    }
}
