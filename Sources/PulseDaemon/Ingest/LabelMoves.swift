import Logging
import PulseAnalytics
import PulseCore
import PulseSettings
import PulseStore

/// Moves the agents the store knows to the groups the daemon's configuration gives them, at once: at start and at
/// each reload (`docs/windows.md`, "Scopes"). A host moved in `[labels.AGENT]` while it is away is moved when the
/// daemon reads the change, not when the host comes back, so the time it was away is billed to the group it was
/// in then. Connected agents take their new labels with their next batch (``ConnectionStateMachine``).
enum LabelMoves {
    /// Each known agent's labels as `config` gives them, where they differ from the stored ones. What an agent set
    /// itself is known only as the store holds it: a label of a key agents may set (`[labels] from_agents`) is kept
    /// until the agent next sends its labels; the daemon's own labels, and with them every billing group, are exact.
    static func changes(_ config: DaemonConfig, agents: [AgentRecord]) -> [String: Labels] {
        var changes = [String: Labels]()
        for agent in agents {
            let labels = config.effectiveLabels(agent: agent.name, sent: agent.labels)
            if labels != agent.labels { changes[agent.name] = labels }
        }
        return changes
    }

    /// Applies ``changes(_:agents:)`` to the store at `now` and logs whom it moved. A failure is logged, not thrown:
    /// the agents then move with their next batch, as before.
    static func apply(_ config: DaemonConfig, to store: any MetricStore, at now: Int64, logger: Logger) async {
        do {
            let changes = changes(config, agents: try await store.agents())
            guard !changes.isEmpty else { return }
            let moved = try await store.relabel(changes, at: now)
            guard !moved.isEmpty else { return }
            let names = moved.prefix(10).joined(separator: ", ") + (moved.count > 10 ? " …" : "")
            logger.notice(
                "labels: moved \(moved.count) agent\(moved.count == 1 ? "" : "s") to the groups the configuration now gives \(moved.count == 1 ? "it" : "them") (\(names)), from \(RFC3339.text(now)) on"
            )
        } catch {
            logger.error(
                "labels: could not move agents to their new groups now (\(error)); each moves with its next batch")
        }
    }
}
