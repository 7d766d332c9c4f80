import PulseCore
import Synchronization

/// The distinct label values (`key=value`) each agent has set itself, bounded by `[limits] label_values_per_agent`:
/// every new one is a group, with a series and memberships of its own, so an agent that changes a label at every
/// connection would make the store keep groups without end.
///
/// Counted from the daemon's start (what earlier runs admitted is in the store and stays): at most a limit's worth
/// of new groups per agent per daemon run.
public final class LabelValueLimit: Sendable {
    private let admitted = Mutex<[String: Set<String>]>([:])

    public init() {}

    /// The labels of `labels` `agent` may set: those it set before, and new ones while it is under `limit`. Also
    /// returns the refused ones, as `key=value`.
    public func admit(agent: String, _ labels: Labels, limit: Int) -> (labels: Labels, refused: [String]) {
        admitted.withLock { admitted in
            // Agents come and go: the table is bounded too (forgetting costs a later agent its history, no more).
            if admitted[agent] == nil && admitted.count >= 100_000 { admitted.removeAll() }
            var known = admitted[agent] ?? []
            var kept = [(key: String, value: String)]()
            var refused = [String]()
            for pair in labels.pairs {
                let text = "\(pair.key)=\(pair.value)"
                if known.contains(text) || known.count < limit {
                    known.insert(text)
                    kept.append(pair)
                } else {
                    refused.append(text)
                }
            }
            admitted[agent] = known
            return (Labels(kept), refused)
        }
    }
}
