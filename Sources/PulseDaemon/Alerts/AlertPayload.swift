import PulseAnalytics
import PulseCore
import PulseStore

/// One alert as a notification carries it.
struct NotifiedAlert: Sendable {
    var status: AlertStatus
    var labels: [String: String]
    var annotations: [String: String]
    var startsAt: Int64
    var endsAt: Int64?
    var fingerprint: String
    var value: Double?
    var chartPath: String?
}

/// The body of a notification: every field of Alertmanager's webhook payload (version 4), so receivers that take
/// Alertmanager's webhook work unchanged, and per alert a `netpulse` object with the value and the alert chart
/// (its path and the SVG itself).
enum AlertPayload {
    /// Alertmanager's group key: the route (`{}`, the root) and the group's labels.
    static func groupKey(_ labels: [String: String]) -> String {
        "{}:{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: ", ")
            + "}"
    }

    static func body(
        receiver: String, groupKey: String, groupLabels: [String: String], alerts: [NotifiedAlert],
        externalURL: String
    ) -> [UInt8] {
        let common = commonPairs(alerts.map(\.labels))
        let commonAnnotations = commonPairs(alerts.map(\.annotations))
        let status = alerts.contains { $0.status == .firing } ? "firing" : "resolved"
        let objects = alerts.map { alert in
            var netpulse: [String: String] = [:]
            if let value = alert.value { netpulse["value"] = JSONText.number(value) }
            if let path = alert.chartPath {
                netpulse["chart"] = JSONText.string(path)
                if let svg = try? FileIO.readString(path) { netpulse["chartSVG"] = JSONText.string(svg) }
            }
            return JSONText.object(sorting: [
                "status": JSONText.string(alert.status == .firing ? "firing" : "resolved"),
                "labels": JSONText.object(strings: alert.labels),
                "annotations": JSONText.object(strings: alert.annotations),
                "startsAt": JSONText.string(RFC3339.text(alert.startsAt)),
                // Alertmanager's zero time for an alert that has not ended.
                "endsAt": JSONText.string(alert.endsAt.map(RFC3339.text) ?? "0001-01-01T00:00:00Z"),
                "generatorURL": JSONText.string(generatorURL(alert, externalURL: externalURL)),
                "fingerprint": JSONText.string(alert.fingerprint),
                "netpulse": JSONText.object(sorting: netpulse),
            ])
        }
        let payload = JSONText.object(sorting: [
            "version": JSONText.string("4"),
            "groupKey": JSONText.string(groupKey),
            "truncatedAlerts": JSONText.number(Int64(0)),
            "status": JSONText.string(status),
            "receiver": JSONText.string(receiver),
            "groupLabels": JSONText.object(strings: groupLabels),
            "commonLabels": JSONText.object(strings: common),
            "commonAnnotations": JSONText.object(strings: commonAnnotations),
            "externalURL": JSONText.string(externalURL),
            "alerts": JSONText.array(objects),
        ])
        return Array(payload.utf8)
    }

    /// Where the alert came from: the chart under `external_url` when one is set, else the chart's file.
    static func generatorURL(_ alert: NotifiedAlert, externalURL: String) -> String {
        guard let path = alert.chartPath else { return externalURL }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if externalURL.isEmpty { return "file://" + path }
        return externalURL.hasSuffix("/") ? externalURL + "alerts/" + name : externalURL + "/alerts/" + name
    }

    /// The pairs every map has with the same value.
    static func commonPairs(_ maps: [[String: String]]) -> [String: String] {
        guard var common = maps.first else { return [:] }
        for map in maps.dropFirst() { common = common.filter { map[$0.key] == $0.value } }
        return common
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}
