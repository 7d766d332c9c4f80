import PulseAnalytics
import PulseQuery
import PulseStore
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
}
