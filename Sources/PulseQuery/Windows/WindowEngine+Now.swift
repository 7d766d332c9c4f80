import PulseAnalytics
import PulseStore

extension WindowEngine {
    /// Each series' current rate: its newest finest bucket with data among the last few (the current one
    /// included), over the time that bucket's samples cover, so a minute that is half over, or began idle, is not
    /// diluted by the rest. Series without such a bucket are left out.
    public func currentRates(_ series: [SeriesRecord], now: Int64) async throws -> [Int64: Direction<Int64?>] {
        let finest = self.finest
        let recent = try await store.buckets(
            level: finest, series: series.map(\.id), from: finest.bucketStart(now) - 5 * finest.width,
            to: finest.bucketStart(now) + finest.width)
        var current = [Int64: Direction<Int64?>]()
        for (id, buckets) in recent {
            guard let latest = buckets.last(where: { $0.values.hasData }) else { continue }
            let covered = latest.values.coveredMilliseconds
            current[id] = Direction(
                rx: RateMath.rate(bytes: latest.values.traffic[.rxBytes], milliseconds: covered),
                tx: RateMath.rate(bytes: latest.values.traffic[.txBytes], milliseconds: covered))
        }
        return current
    }

    /// Each series' counts whose time could not be placed, received during `received` (`docs/windows.md`, "Time
    /// that cannot be placed"); series without any are left out.
    public func unplaced(_ series: [SeriesRecord], received: Window) async throws -> [Int64: UnplacedTotals] {
        try await store.unplaced(series: series.map(\.id), from: received.from, to: received.to)
    }
}

extension WindowEngine {
    /// A window engine over `store` at the levels the store keeps (as a reader that does not know the daemon's
    /// `[rollups]`), with `catalogue` (read by `Catalogue.load` now, or kept while the store says it holds).
    public static func load(
        _ store: any MetricStore, catalogue: Catalogue, retention: RetentionPolicy, calendar: CivilCalendar,
        billing: BillingPolicy
    ) async throws -> WindowEngine {
        WindowEngine(
            store: store, catalogue: catalogue, levels: retained(try await store.levels(), retention),
            calendar: calendar, billing: billing)
    }
}
