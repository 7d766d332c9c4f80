import PulseAnalytics
import PulseStore

/// Reads the alerts as the store holds them, for `netpulse alerts`: the instances pending or firing, the recent
/// events, the silences not yet ended and the notifications waiting for delivery.
public struct AlertStateQuery: Sendable {
    public let store: any MetricStore

    public init(store: any MetricStore) {
        self.store = store
    }

    public func read(now: Int64, since: Int64, limit: Int) async throws -> AlertState {
        AlertState(
            instances: try await store.alertInstances(),
            events: try await store.alertEvents(since: since, limit: limit),
            silences: try await store.silences().filter { $0.endsAt > now },
            queued: try await store.queuedNotificationCount())
    }
}

/// The alerts as the store holds them (``AlertStateQuery``).
public struct AlertState: Sendable {
    public var instances: [AlertInstance]
    /// Newest first, at most the limit asked for.
    public var events: [AlertEvent]
    public var silences: [Silence]
    public var queued: Int
}
