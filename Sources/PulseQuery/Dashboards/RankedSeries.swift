import PulseAnalytics
import PulseStore
import Synchronization

/// A series chosen for a panel and its lanes per slot (see ``Timeline/lanes(_:speed:)``).
public struct RankedLanes: Sendable {
    public var record: SeriesRecord
    public var lanes: [SIMD4<Int64>?]
}

/// The top series of a panel and the rest summed into one "other".
public struct RankedSelection: Sendable {
    public var shown: [RankedLanes]
    /// The sum of the series not shown, per slot (nil where none of them has data); nil when all are shown.
    public var other: [SIMD4<Int64>?]?
    /// How many series with data `other` sums.
    public var otherCount: Int
}

/// Lanes of every series read, added up as they stream past (the store may hand series over from several reader
/// connections at once).
private final class LaneTotals: Sendable {
    private let sums: Mutex<[SIMD4<Int64>]>

    init(count: Int) { sums = Mutex([SIMD4<Int64>](repeating: .zero, count: count)) }

    func add(_ lanes: [SIMD4<Int64>?]) {
        sums.withLock { sums in
            for index in lanes.indices { if let lane = lanes[index] { sums[index] &+= lane } }
        }
    }

    var values: [SIMD4<Int64>] { sums.withLock { $0 } }
}

extension PanelQuery {
    /// The `limit` series of `candidates` (in name order) ranked highest by `rank` (nil: no data, left out), ties by
    /// name, and the rest summed per slot.
    ///
    /// With more candidates than `limit`, each series is ranked as it streams from the store and added to running
    /// totals, so a fleet of ten thousand interfaces is never held at once; the top ones are then read again and
    /// "other" is the totals less them, exactly (integer sums).
    func ranked(
        _ candidates: [SeriesRecord], limit: Int, speeds: [Int64: Int64] = [:],
        rank: @escaping @Sendable ([SIMD4<Int64>?], Int64) -> Int64?
    ) async throws -> RankedSelection {
        guard !candidates.isEmpty else { return RankedSelection(shown: [], other: nil, otherCount: 0) }
        let timeline = self.timeline
        let store = engine.store
        func order(_ values: [Int64: Int64]) -> [SeriesRecord] {
            ScopeMembers.highestFirst(candidates, name: \.name) { values[$0.id] }
        }
        if candidates.count <= limit {
            let buckets = try await store.buckets(
                level: level, series: candidates.map(\.id), from: timeline.from, to: timeline.to)
            var lanes = [Int64: [SIMD4<Int64>?]]()
            var values = [Int64: Int64]()
            for record in candidates {
                let list = timeline.lanes(buckets[record.id] ?? [], speed: speeds[record.id] ?? 0)
                lanes[record.id] = list
                values[record.id] = rank(list, timeline.width)
            }
            return RankedSelection(
                shown: order(values).map { RankedLanes(record: $0, lanes: lanes[$0.id]!) }, other: nil, otherCount: 0)
        }
        let totals = LaneTotals(count: timeline.count)
        let values = try await store.reduceBuckets(
            level: level, series: candidates.map(\.id), from: timeline.from, to: timeline.to,
            fields: [.bytes, .coverage, .peaks]
        ) { id, buckets in
            let lanes = timeline.lanes(buckets, speed: speeds[id] ?? 0)
            totals.add(lanes)
            return rank(lanes, timeline.width)
        }
        let ordered = order(values)
        let top = Array(ordered.prefix(limit))
        let buckets = try await store.buckets(
            level: level, series: top.map(\.id), from: timeline.from, to: timeline.to)
        var rest = totals.values
        let shown = top.map { record in
            let lanes = timeline.lanes(buckets[record.id] ?? [], speed: speeds[record.id] ?? 0)
            for index in lanes.indices { if let lane = lanes[index] { rest[index] &-= lane } }
            return RankedLanes(record: record, lanes: lanes)
        }
        let otherCount = ordered.count - top.count
        let other: [SIMD4<Int64>?]? = otherCount == 0 ? nil : rest.map { $0[3] > 0 ? $0 : nil }
        return RankedSelection(shown: shown, other: other, otherCount: otherCount)
    }

    /// Ranks by bytes received and sent.
    static let byBytes: @Sendable ([SIMD4<Int64>?], Int64) -> Int64? = { lanes, _ in
        var total: Int64?
        for lane in lanes { if let lane { total = (total ?? 0) &+ lane[0] &+ lane[1] } }
        return total
    }

    /// Ranks by mean utilisation (hundredths of a percent of the larger direction) over slots with data and a
    /// known speed.
    static let byUtilisation: @Sendable ([SIMD4<Int64>?], Int64) -> Int64? = { lanes, width in
        var sum: Int64 = 0
        var count: Int64 = 0
        for lane in lanes {
            guard let lane, lane[2] > 0, let rx = RateMath.rate(bytes: lane[0], milliseconds: width),
                let tx = RateMath.rate(bytes: lane[1], milliseconds: width),
                let share = RateMath.utilisation(rate: max(rx, tx), speedMbps: lane[2])
            else { continue }
            sum &+= share
            count += 1
        }
        return count == 0 ? nil : sum / count
    }
}
