import PulseAnalytics
import PulseCore

/// The clock check of one batch against the daemon's clock when it was received (`docs/windows.md`, "Clocks" and
/// "Time that cannot be placed"): how far its timestamps are moved back, and which of its samples' times can be
/// placed. Every value comes from an agent, so the arithmetic saturates rather than traps.
struct ClockCheck {
    /// How far the batch's last timestamp is ahead of the receive time (negative when behind).
    let ahead: Int64
    /// What every timestamp of the batch is moved by (0, or minus ``ahead``).
    let shift: Int64
    /// Whether the batch ended more than `max_skew` ahead, so it was not moved.
    let tooFarAhead: Bool
    private let earliest: Int64
    private let latest: Int64

    init(lastTimestamp: Int64, receivedAt now: Int64, settings: StoreSettings) {
        ahead = Saturating.difference(lastTimestamp, now)
        tooFarAhead = ahead > settings.maximumSkew
        shift = ahead > settings.clockTolerance && !tooFarAhead ? -ahead : 0
        earliest = Saturating.difference(now, settings.maximumAge)
        latest = Saturating.sum(now, settings.clockTolerance)
    }

    /// Whether a sample at `time` (already shifted) can be placed: no older than `max_age`, not in the future.
    func placeable(_ time: Int64) -> Bool { time >= earliest && time <= latest }
}
