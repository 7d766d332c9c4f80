import Foundation
import PulseAnalytics
import PulseQuery
import PulseStore
import StoreFixtures
import TestSupport
import Testing

@testable import PulseReports

@Suite struct AlertChartTests {
    /// A firing chart: the thresholds, both shaded spans and the marked event are in a well-formed SVG that renders,
    /// and hostile label values are escaped.
    @Test func firingChartShowsThresholdsSpansAndTheEvent() {
        let rule = AlertRule(
            name: "UplinkBusy",
            condition: AlertCondition(metric: .rateIn, comparison: .above, threshold: 8e8, clear: 6e8),
            timing: AlertTiming(pendingFor: 120_000))
        let hour: Int64 = 1_795_000_000_000 / 3_600_000 * 3_600_000
        let firedAt = hour + 50 * 60_000
        let phase = AlertPhase(status: .firing, activeSince: firedAt - 120_000, firedAt: firedAt)
        let points: [(start: Int64, value: Double?)] = (0..<60).map { minute in
            (hour + Int64(minute) * 60_000, minute == 20 ? nil : (minute >= 47 ? 9e8 : 3e8))
        }
        let event = AlertEvent(
            rule: rule.name, fingerprint: "57fc0d42e24a6ea7", series: 1, status: .firing, at: firedAt, value: 9e8,
            labels: ["alertname": "UplinkBusy", "host": "a<b&c"], annotations: ["summary": "p\"q> at 900 Mbit/s"],
            startsAt: firedAt, endsAt: nil, chart: nil)
        let svg = AlertChart.svg(
            AlertChartInput(
                rule: rule, event: event, phase: phase, seriesName: "a<b&c eth0", level: .oneMinute, points: points,
                from: hour, to: hour + 3_600_000, calendar: .utc))
        #expect(svg.contains("FIRING: UplinkBusy — a&lt;b&amp;c eth0"))
        #expect(svg.contains("Fire threshold 800 Mbit/s"))
        #expect(svg.contains("Clear threshold 600 Mbit/s"))
        #expect(svg.contains("Pending"))
        #expect(svg.contains("Firing"))
        #expect(!svg.contains("a<b&c"))
        SVGCheck.validate(svg, name: "alert-firing")
    }

    /// A series that began reporting minutes before the event is charted from shortly before its first data, not
    /// over an hour of nothing; one with data all along keeps the whole span.
    @Test func theSpanStartsShortlyBeforeTheFirstData() {
        let level = RollupLevel.oneMinute
        let span: (from: Int64, to: Int64) = (0, 3_600_000)
        let late: [(start: Int64, value: Double?)] = (0..<60).map {
            (Int64($0) * 60_000, $0 >= 55 ? 1e6 : nil)
        }
        #expect(AlertChart.trimmed(span, points: late, level: level) == (45 * 60_000, 3_600_000))
        let recent: [(start: Int64, value: Double?)] = (0..<60).map { (Int64($0) * 60_000, $0 >= 58 ? 1e6 : nil) }
        #expect(
            AlertChart.trimmed(span, points: recent, level: level) == (45 * 60_000, 3_600_000), "15 buckets at least")
        let steady: [(start: Int64, value: Double?)] = (0..<60).map { (Int64($0) * 60_000, 1e6) }
        #expect(AlertChart.trimmed(span, points: steady, level: level) == span)
        #expect(AlertChart.trimmed(span, points: [], level: level) == span)
    }

    /// Alert history's files go with it: charts and event files older than the retention are deleted, by the time
    /// in their names; newer ones and anything else in the directory stay.
    @Test func oldAlertFilesArePruned() throws {
        let directory = temporaryDirectory()
        let day: Int64 = 86_400_000
        let now = Fleet.now
        func event(_ rule: String, _ status: AlertStatus, at: Int64) -> AlertEvent {
            AlertEvent(
                rule: rule, fingerprint: "57fc0d42e24a6ea7", series: 1, status: status, at: at, value: 1,
                labels: [:], annotations: [:], startsAt: at, endsAt: nil, chart: nil)
        }
        let old = [event("UplinkBusy", .firing, at: now - 100 * day), event("a<b&c", .resolved, at: now - 91 * day)]
        let recent = [event("UplinkBusy", .resolved, at: now - 10 * day), event("a<b&c", .firing, at: now - 89 * day)]
        for event in old + recent {
            for suffix in [".svg", ".json"] {
                try "x".write(
                    toFile: "\(directory)/\(AlertFiles.stem(event))\(suffix)", atomically: true, encoding: .utf8)
            }
            // As the daemon records what it writes.
            try AlertFiles.ledger(in: directory).record([
                "\(AlertFiles.stem(event)).svg", "\(AlertFiles.stem(event)).json",
            ])
        }
        try "keep".write(toFile: "\(directory)/README.txt", atomically: true, encoding: .utf8)
        // Someone else's files of the same pattern and age, in a directory an operator may share: never deleted.
        let foreign = [
            "\(AlertFiles.stem(event("Backup", .firing, at: now - 200 * day))).json", "notes-20200101T000000Z.svg",
        ]
        for name in foreign { try "theirs".write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8) }
        #expect(try AlertFiles.prune(in: directory, before: now - 90 * day) == 4)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        let expected = Set(recent.flatMap { ["\(AlertFiles.stem($0)).svg", "\(AlertFiles.stem($0)).json"] })
        #expect(left == expected.union(["README.txt", ".netpulse-alerts.published"]).union(foreign))
        // The ledger forgot what it deleted.
        #expect(try AlertFiles.ledger(in: directory).names() == expected)
        #expect(try AlertFiles.prune(in: directory + "/missing", before: now) == 0)
    }
}
