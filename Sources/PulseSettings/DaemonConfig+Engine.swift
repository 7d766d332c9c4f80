import PulseQuery
import PulseStore

extension DaemonConfig {
    /// A window engine over `store` as this config reads it (counting rules, retained levels, time zone, billing
    /// terms), with the catalogue as it stands now: make one per round of snapshots or dashboards, so that hosts
    /// and interfaces new since the last round appear.
    public func windowEngine(over store: any MetricStore) async throws -> WindowEngine {
        windowEngine(over: store, catalogue: try await Catalogue.load(from: store, rules: self.store.rules))
    }

    /// A window engine over `store` with a catalogue already read (by this config's counting rules).
    public func windowEngine(over store: any MetricStore, catalogue: Catalogue) -> WindowEngine {
        WindowEngine(
            store: store, catalogue: catalogue, levels: WindowEngine.retained(self.store.levels, retention),
            calendar: calendar, billing: billing)
    }
}
