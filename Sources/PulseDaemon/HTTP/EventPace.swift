/// How often a live page's event stream may send: a few events at once, then a steady rate (a token bucket).
///
/// Why a burst: at a bucket boundary several agents' first batches commit within milliseconds of each other. With
/// a flat spacing after every event (250 ms), the second commit's redraw waited for it: 300–390 ms from its commit
/// to the page, where the first took under 130 (docs/benchmarks.md). Why a rate: after a boundary a large fleet's
/// late batches keep coming for seconds, and each event is a read of the page and a redraw in the browser; four a
/// second is as often as anyone can read a chart, and what comes in between is merged into the next event.
struct EventPace {
    /// Events that may go one after another at once.
    static let burst = 3.0
    /// Events a second, over time.
    static let perSecond = 4.0

    private var tokens = Self.burst
    private var last: ContinuousClock.Instant?

    /// How long to wait, from `now`, before the next event may be sent (zero: at once); the event is counted as
    /// sent when that wait ends.
    mutating func delay(at now: ContinuousClock.Instant) -> Duration {
        if let last, now > last {
            tokens = min(Self.burst, tokens + Self.seconds(now - last) * Self.perSecond)
        }
        let from = max(now, last ?? now)
        guard tokens < 1 else {
            tokens -= 1
            last = from
            return from - now
        }
        // The token that fills during the wait is this event's.
        let wait = Duration.nanoseconds(Int64(((1 - tokens) / Self.perSecond * 1e9).rounded()))
        tokens = 0
        last = from + wait
        return from + wait - now
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
