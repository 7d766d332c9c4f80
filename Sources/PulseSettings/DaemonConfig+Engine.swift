import PulseAnalytics
import PulseFormats
import PulseQuery
import PulseStore
import Synchronization

extension DaemonConfig {
    /// A window engine over `store` as this config reads it (counting rules, retained levels, time zone, billing
    /// terms), with the catalogue as it stands now: make one per round of snapshots or dashboards, so that hosts
    /// and interfaces new since the last round appear.
    public func windowEngine(over store: any MetricStore) async throws -> WindowEngine {
        windowEngine(over: store, catalogue: try await Catalogue.load(from: store, rules: self.store.rules))
    }

    /// ``windowEngine(over:)`` with the catalogue from `cache`: the same engine, without reading 10,000 series
    /// again while the store says none changed.
    public func windowEngine(over store: any MetricStore, cache: CatalogueCache) async throws -> WindowEngine {
        windowEngine(over: store, catalogue: try await cache.catalogue(of: store, rules: self.store.rules))
    }

    /// A window engine over `store` with a catalogue already read (by this config's counting rules).
    public func windowEngine(over store: any MetricStore, catalogue: Catalogue) -> WindowEngine {
        WindowEngine(
            store: store, catalogue: catalogue, levels: WindowEngine.retained(self.store.levels, retention),
            calendar: calendar, billing: billing)
    }

    /// A window engine over `store` at the levels the store keeps, as a reader reads it (`netpulse` on the daemon's
    /// host, and the daemon's HTTP API for it): one function, so that both answer from the same engine and print
    /// the same bytes. The daemon passes its `cache`; a process that reads once has none.
    public func readerEngine(over store: any MetricStore, cache: CatalogueCache? = nil) async throws -> WindowEngine {
        let catalogue =
            if let cache {
                try await cache.catalogue(of: store, rules: self.store.rules)
            } else {
                try await Catalogue.load(from: store, rules: self.store.rules)
            }
        return try await WindowEngine.load(
            store, catalogue: catalogue, retention: retention, calendar: calendar, billing: billing)
    }
}

extension DaemonConfig {
    /// What the snapshot and alert reads take from this config.
    public var readSettings: ReadSettings { ReadSettings(snapshot: snapshots.contents, alertRules: alerts.rules) }
}

/// The catalogue the daemon's readers share (alert rounds, live pages, the API): read again only when the store's
/// ``MetricStore/catalogueGeneration()`` moved (a new series, new link facts, relabelled agents) or the counting
/// rules differ, so a page's five panel requests do not read every series five times. A store that cannot tell
/// (PostgreSQL, written by several daemons) is read every time, as before: a stale catalogue would hide new hosts.
public final class CatalogueCache: Sendable {
    private let last = Mutex<(generation: Int64, catalogue: Catalogue)?>(nil)

    public init() {}

    public func catalogue(of store: any MetricStore, rules: ScopeRules) async throws -> Catalogue {
        let generation = store.catalogueGeneration()
        if let generation, let last = last.withLock({ $0 }), last.generation == generation,
            last.catalogue.rules == rules
        {
            return last.catalogue
        }
        // Read after the generation: a change committed meanwhile moves it again, so the next call reads anew.
        let fresh = try await Catalogue.load(from: store, rules: rules)
        last.withLock { $0 = generation.map { ($0, fresh) } }
        return fresh
    }
}
