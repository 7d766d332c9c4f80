import Testing

@testable import PulseAnalytics

@Suite struct AlertPhaseTests {
    let condition = AlertCondition(metric: .rateIn, comparison: .above, threshold: 100, clear: 60)

    /// Feeds values one evaluation apart (10 s) and returns the transitions.
    func run(_ values: [Double?], timing: AlertTiming) -> [AlertStatus?] {
        var phase: AlertPhase?
        return values.enumerated().map { index, value in
            let step = AlertPhase.advance(
                phase, value: value, condition: condition, timing: timing, now: Int64(index) * 10_000)
            phase = step.phase
            return step.transition
        }
    }

    @Test func firesAfterForAndResolvesOnlyBelowTheClearThreshold() {
        let transitions = run([50, 150, 150, 150, 80, 90, 59], timing: AlertTiming(pendingFor: 20_000))
        #expect(transitions == [nil, .pending, nil, .firing, nil, nil, .resolved])
    }

    @Test func pendingThatStopsBreachingGoesBackWithoutFiring() {
        let transitions = run([150, 150, 99, 150], timing: AlertTiming(pendingFor: 30_000))
        #expect(transitions == [.pending, nil, nil, .pending])
    }

    @Test func missingDataChangesNothing() {
        let transitions = run([150, nil, nil, 10], timing: AlertTiming())
        #expect(transitions == [.firing, nil, nil, .resolved])
    }

    @Test func keepFiringForHoldsThroughShortDips() {
        let transitions = run([150, 10, 150, 10, 10, 10], timing: AlertTiming(keepFiringFor: 20_000))
        #expect(transitions == [.firing, nil, nil, nil, nil, .resolved])
    }

    @Test func fingerprintIsAlertmanagersFNV() {
        // FNV-1a 64 of "alertname" 0xFF "Up" 0xFF, computed independently (Python, by the definition).
        #expect(AlertFingerprint.of(["alertname": "Up"]) == "57fc0d42e24a6ea7")
    }

    @Test func ratesAreBytesOverCoveredTime() {
        var half = BucketValues()
        half.traffic = TrafficDelta()
        half.measuredMilliseconds = 30_000
        #expect(AlertMetric.rateIn.value(of: [half]) == 0)
        #expect(AlertMetric.rateIn.value(of: [BucketValues()]) == nil)
        #expect(AlertMetric.absent.value(of: [BucketValues()]) == 1)
        #expect(AlertMetric.rateIn.parseThreshold("800Mbit/s") == 8e8)
        #expect(AlertMetric.rateIn.parseThreshold("100MB/s") == 8e8)
    }
}
