import PulseCore

/// Leaves idle interfaces out of batches: an interface whose counters did not change since the last sample is
/// sent only as a heartbeat, every `heartbeat` milliseconds.
///
/// When a suppressed interface changes again, its last unchanged sample is sent too, with its own timestamp, so
/// the daemon sees exactly when the traffic started instead of spreading it over the idle period.
public struct IdleSuppressor: Sendable {
    /// Heartbeat period in milliseconds; 0 turns suppression off (every interface is sent every tick).
    public var heartbeat: Int64

    private struct Last {
        var sample: InterfaceSample
        var timestamp: Int64
        var sent: Bool
        var lastSentAt: Int64
        var linkState: LinkState?
    }
    private var last: [InterfaceName: Last] = [:]

    public init(heartbeat: Int64) {
        self.heartbeat = heartbeat
    }

    /// The samples to send for this tick, each with the timestamp it was taken at.
    public mutating func filter(_ tick: TickSample) -> [(sample: InterfaceSample, timestamp: Int64)] {
        var out = [(sample: InterfaceSample, timestamp: Int64)]()
        out.reserveCapacity(tick.interfaces.count)
        var present = Set<InterfaceName>()
        for sample in tick.interfaces {
            present.insert(sample.name)
            guard heartbeat > 0, var previous = last[sample.name], previous.sample.epoch == sample.epoch else {
                out.append((sample, tick.timestamp))
                last[sample.name] = Last(
                    sample: sample, timestamp: tick.timestamp, sent: true, lastSentAt: tick.timestamp,
                    linkState: sample.linkState)
                continue
            }
            let changed = previous.sample.counters != sample.counters
            if changed {
                if !previous.sent { out.append((previous.sample, previous.timestamp)) }
                out.append((sample, tick.timestamp))
                previous = Last(
                    sample: sample, timestamp: tick.timestamp, sent: true, lastSentAt: tick.timestamp,
                    linkState: previous.linkState)
            } else if tick.timestamp - previous.lastSentAt >= heartbeat
                || sample.linkState != nil && sample.linkState != previous.linkState
            {
                out.append((sample, tick.timestamp))
                previous = Last(
                    sample: sample, timestamp: tick.timestamp, sent: true, lastSentAt: tick.timestamp,
                    linkState: previous.linkState)
            } else {
                previous.sample = sample
                previous.timestamp = tick.timestamp
                previous.sent = false
            }
            // Link facts are read only every so often; compare with the last ones read, not the last sample's.
            if let state = sample.linkState { previous.linkState = state }
            last[sample.name] = previous
        }
        for name in last.keys where !present.contains(name) { last[name] = nil }
        return out
    }
}
