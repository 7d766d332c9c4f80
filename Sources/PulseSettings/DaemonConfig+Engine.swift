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

    /// A window engine over `store` at the levels the store keeps, as a reader reads it (`netpulse` on the daemon's
    /// host, and the daemon's HTTP API for it): one function, so that both answer from the same engine and print
    /// the same bytes.
    public func readerEngine(over store: any MetricStore) async throws -> WindowEngine {
        try await WindowEngine.load(
            store, rules: self.store.rules, retention: retention, calendar: calendar, billing: billing)
    }
}
