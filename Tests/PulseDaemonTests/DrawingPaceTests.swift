import PulseCore
import PulseStore
import Synchronization
import Testing

@testable import PulseDaemon

/// Drawing gives way to ingest (``DashboardService/Pacer``): it waits while a batch waits for its journal commit or
/// a journaled batch waits to be applied, within a budget per round.
@Suite struct DrawingPaceTests {
    @Test func drawingWaitsWhileIngestIsBehindAndOnlyForItsBudget() async throws {
        let checks = Atomic<Int>(0)
        // A budget no sleep of 20 ms can use up, even while the whole suite keeps the machine busy.
        let pacer = DashboardService.Pacer(budget: .seconds(600)) { checks.add(1, ordering: .relaxed).newValue <= 3 }
        try await pacer.yield()
        #expect(checks.load(ordering: .relaxed) == 4, "behind at three checks, then caught up")
        #expect(pacer.waited >= .milliseconds(60))

        // Always behind: a round waits its budget in all, then draws the rest of its pages without waiting.
        let stuck = DashboardService.Pacer(budget: .milliseconds(200)) { true }
        try await stuck.yield()
        #expect(stuck.waited >= .milliseconds(200))
        try await stuck.yield()
        try await stuck.yield()
        #expect(stuck.waited == .milliseconds(200))
    }

    /// While tasks wait for a CPU, drawing rests nine times as long as it just worked (a share of a tenth); when
    /// nothing waits, or nothing says (no pressure file), as described in `docs/dashboards.md`.
    @Test func drawingRestsWhileTheCPUsAreContended() async throws {
        // Microseconds tasks have waited for a CPU: the test says how much each stretch of work was contended.
        let stalled = Atomic<UInt64>(0)
        let pacer = DashboardService.Pacer(
            budget: .seconds(600), share: 0.1,
            stalled: {
                stalled.load(ordering: .relaxed)
            }
        ) { false }
        try await Task.sleep(for: .milliseconds(50))
        stalled.add(1_000_000_000_000, ordering: .relaxed)  // waiting all along, however long the stretch took
        var began = ContinuousClock.now
        try await pacer.yield()
        #expect(ContinuousClock.now - began >= .milliseconds(450), "nine times the 50 ms worked")
        #expect(pacer.rested >= .milliseconds(450))
        #expect(pacer.waited < .milliseconds(50), "ingest was never behind")

        // The next stretch, with nothing waiting for a CPU: no rest.
        let restedBefore = pacer.rested
        try await Task.sleep(for: .milliseconds(50))
        try await pacer.yield()
        #expect(pacer.rested == restedBefore)

        // A long stretch rests at most ``longestRest``.
        let sparing = DashboardService.Pacer(share: 0.01, stalled: { nil }) { false }
        try await Task.sleep(for: .milliseconds(60))
        #expect(sparing.owedRest() == DashboardService.Pacer.longestRest, "99 × 60 ms, capped")

        // Without pressure figures the CPUs count as contended; with a share of 1 drawing never rests.
        let unknown = DashboardService.Pacer(budget: .seconds(600), share: 0.5, stalled: { nil }) { false }
        try await Task.sleep(for: .milliseconds(40))
        began = ContinuousClock.now
        try await unknown.yield()
        #expect(ContinuousClock.now - began >= .milliseconds(40) && unknown.rested >= .milliseconds(40))
        let never = DashboardService.Pacer(budget: .seconds(600), share: 1, stalled: { nil }) { false }
        try await Task.sleep(for: .milliseconds(40))
        #expect(never.owedRest() == .zero)
        try await never.yield()
        #expect(never.rested == .zero)
    }

    @Test func behindMeansACommitOrAnApplyWaitingTooLong() {
        #expect(!DashboardService.behind(committing: .milliseconds(10), applying: .milliseconds(600)))
        #expect(DashboardService.behind(committing: .milliseconds(60), applying: .zero))
        #expect(DashboardService.behind(committing: .zero, applying: .milliseconds(1_500)))
    }

    /// The applier's backlog tells how long its oldest batch has waited since it was journaled.
    @Test func theApplyBacklogsAgeIsItsOldestBatchSinceJournaled() async throws {
        let backlog = ApplyBacklog(clock: .system)
        #expect(backlog.age == .zero)
        let now = WallClock.system.now()
        var old = IngestServiceTests().batch(agent: "a", order: 1)
        old.receivedAt = now - 2_000
        var new = IngestServiceTests().batch(agent: "b", order: 1)
        new.receivedAt = now
        backlog.push([(id: 1, batch: old), (id: 2, batch: new)])
        #expect(backlog.age >= .milliseconds(2_000))
        let taken = await backlog.take(limit: 1)
        #expect(taken?.map(\.id) == [1])
        #expect(backlog.age < .milliseconds(1_000))
    }
}
