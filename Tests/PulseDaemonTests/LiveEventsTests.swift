import PulseCore
import Testing

@testable import PulseDaemon

/// What a live page's event stream sends, and how often: announcements merged while a page has not taken them, and
/// the pace of its events (``BucketAnnouncer``, ``EventPace``).
@Suite struct LiveEventsTests {
    typealias Announcement = BucketAnnouncer.Announcement

    /// Announcements a stream has not taken are merged into one that loses none of them: the oldest sample and the
    /// first commit (what the page's latency counts from), the newest sample, commit and generation.
    @Test func announcementsNotYetTakenAreMergedWithoutLosingAny() {
        let announcer = BucketAnnouncer(clock: .system)
        let (_, fleet) = announcer.subscribe(agent: nil)
        let (_, web) = announcer.subscribe(agent: "web-1")
        #expect(announcer.take(fleet) == nil)

        announcer.announce(
            Announcement(earliest: 1_000, through: 9_000, committed: 10_010, generation: 7), agents: ["web-1"])
        announcer.announce(
            Announcement(earliest: 500, through: 9_500, committed: 10_025, generation: 8), agents: ["db-1"])
        var merged = Announcement(earliest: 500, through: 9_500, committed: 10_010, generation: 8)
        merged.lastCommitted = 10_025
        #expect(announcer.take(fleet) == .stored(merged))
        #expect(announcer.take(fleet) == nil, "taken once")
        // The host's stream heard only of its own agent's batch.
        #expect(
            announcer.take(web)
                == .stored(Announcement(earliest: 1_000, through: 9_000, committed: 10_010, generation: 7)))
    }

    /// A ping that falls due while an announcement waits does not replace it (an event keeps the connection alive
    /// as well); alone, it is sent.
    @Test func aPingNeverReplacesAnAnnouncement() {
        let announcer = BucketAnnouncer(clock: .system)
        let (_, id) = announcer.subscribe(agent: nil)
        let announcement = Announcement(earliest: 1, through: 2, committed: 3)
        announcer.announce(announcement, agents: ["a"])
        announcer.ping(id)
        #expect(announcer.take(id) == .stored(announcement))
        #expect(announcer.take(id) == nil)
        announcer.ping(id)
        #expect(announcer.take(id) == .ping)
    }

    /// Three events go at once (a boundary's first batches), then one every quarter of a second; a quiet second
    /// gives the burst back.
    @Test func eventsGoThreeAtOnceThenFourASecond() {
        var pace = EventPace()
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(pace.delay(at: start) == .zero) }
        #expect(pace.delay(at: start) == .milliseconds(250))
        // Sent at start + 250 ms; the next, asked for at once, waits its own quarter.
        #expect(pace.delay(at: start + .milliseconds(250)) == .milliseconds(250))
        // Asked for late: only what is left of the quarter.
        #expect(pace.delay(at: start + .milliseconds(600)) == .milliseconds(150))
        let quiet = start + .milliseconds(750) + .seconds(1)
        for _ in 0..<3 { #expect(pace.delay(at: quiet) == .zero) }
        #expect(pace.delay(at: quiet) > .zero)
    }
}
