import PulseAnalytics
import PulseStore
import StoreFixtures
import Testing

@testable import PulseQuery

/// What dashboards read: ranked panels and "other", and a range no level keeps (from a real SQLite store of a small
/// fleet; PulseReportsTests draws the same fleet).
@Suite struct DashboardQueryTests {

    /// With more interfaces than it shows, the utilisation panel ranks them by their utilisation over the range
    /// (the window engine's figure, which the oracle checks) and reads only the shown ones slot by slot; "other"
    /// is the scope's bytes less theirs, over the rest's link speeds.
    @Test func busiestInterfacesAreRankedByTheirUtilisationOverTheRange() async throws {
        let fleet = try await Fleet.shared.value
        let engine = fleet.engine
        let level = RollupLevel.oneHour
        let timeline = Timeline(
            from: level.bucketStart(Fleet.now) - 7 * 86_400_000, to: level.bucketStart(Fleet.now), level: level)
        let window = Window(from: timeline.from, to: timeline.to)
        let members = ScopeMembers(.fleet, catalogue: engine.catalogue, window: window)
        let buckets = try await engine.store.buckets(
            level: level, series: [members.record!.id], from: timeline.from, to: timeline.to)
        let reader = PanelQuery(
            engine: engine, members: members, timeline: timeline, level: level, now: Fleet.now,
            scopeValues: timeline.values(buckets[members.record!.id] ?? []))
        var speeds = [Int64: Int64]()
        for record in members.counted { speeds[record.id] = Int64(record.facts?.speedMbps ?? 0) }
        let selection = try await reader.rankedByWindowUtilisation(
            members.counted.filter { speeds[$0.id]! > 0 }, limit: 2)
        // The busiest while they report: the larger direction's bytes over the time their data covers (the
        // figures' coverage of the range) and their speed; a<b&c reported two days of the seven.
        let figures = try await engine.figures(members.counted, window: window, now: Fleet.now)
        func busy(_ entry: ScopeFigures) -> Double {
            let covered = Double(entry.figures.elapsed) / 1_000 * Double(entry.figures.coverage) / 1e6
            return Double(max(entry.figures.bytes.rx, entry.figures.bytes.tx)) * 8
                / (covered * Double(speeds[entry.series.id]!) * 1e6)
        }
        let expected = figures.filter { speeds[$0.series.id]! > 0 }.sorted { busy($0) > busy($1) }.prefix(2).map(
            \.series.name)
        #expect(expected.contains("a<b&c/eth0"))
        #expect(selection.shown.map(\.record.name) == Array(expected))
        #expect(selection.otherCount == 2)
        // Other: the two interfaces not shown, read on their own and added up slot by slot (every counted
        // interface here has a known speed), over their speeds.
        let others = members.counted.filter { record in !selection.shown.contains { $0.record.id == record.id } }
        let otherSpeed = others.reduce(0) { $0 + speeds[$1.id]! }
        let otherBuckets = try await engine.store.buckets(
            level: level, series: others.map(\.id), from: timeline.from, to: timeline.to)
        var othersSum = [SIMD4<Int64>](repeating: .zero, count: timeline.count)
        for record in others {
            for (slot, lane) in timeline.lanes(otherBuckets[record.id] ?? []).enumerated() {
                if let lane { othersSum[slot] &+= lane }
            }
        }
        var compared = 0
        for slot in 0..<timeline.count where reader.scopeValues[slot] != nil {
            let other = try #require(selection.other?[slot])
            #expect(other[0] == othersSum[slot][0] && other[1] == othersSum[slot][1], "slot \(slot)")
            #expect(other[2] == otherSpeed)
            compared += 1
        }
        #expect(compared > 100)
    }

    /// "Other" is exactly the sum of the series not shown, slot by slot, and missing where none has data.
    @Test func otherIsTheExactSumOfTheRest() async throws {
        let fleet = try await Fleet.shared.value
        let engine = fleet.engine
        let now = Fleet.now
        let level = RollupLevel.oneHour
        let timeline = Timeline(from: level.bucketStart(now) - 7 * 86_400_000, to: level.bucketStart(now), level: level)
        let window = Window(from: timeline.from, to: timeline.to)
        let members = ScopeMembers(.fleet, catalogue: engine.catalogue, window: window)
        let reader = PanelQuery(
            engine: engine, members: members, timeline: timeline, level: level, now: now, scopeValues: [])
        let selection = try await reader.ranked(members.counted, limit: 1, rank: PanelQuery.byBytes)
        #expect(selection.shown.count == 1 && selection.otherCount == 3)
        // The busiest is a<b&c's 10 Gbit/s link, although it reported for two days only.
        #expect(selection.shown[0].record.agent == Fleet.hostile)
        let rest = members.counted.filter { $0.id != selection.shown[0].record.id }
        let buckets = try await engine.store.buckets(
            level: level, series: rest.map(\.id), from: timeline.from, to: timeline.to)
        var expected = [SIMD4<Int64>?](repeating: nil, count: timeline.count)
        for record in rest {
            for (slot, lane) in timeline.lanes(buckets[record.id] ?? []).enumerated() {
                if let lane { expected[slot] = (expected[slot] ?? .zero) &+ lane }
            }
        }
        let other = try #require(selection.other)
        #expect(other.map { $0.map { SIMD2($0[0], $0[1]) } } == expected.map { $0.map { SIMD2($0[0], $0[1]) } })
        #expect(other.allSatisfy { $0 != nil })
        // The shown series has gaps (nil) before it first reported, never zeros.
        let shown = selection.shown[0].lanes
        #expect(shown.prefix(24 * 4).allSatisfy { $0 == nil })
        #expect(shown.suffix(24).allSatisfy { $0 != nil })

        // Ranked by how many buckets have data, a<b&c comes last: "other" is its series alone, gaps included.
        let byCoverage = try await reader.ranked(members.counted, limit: 3) { lanes, _ in
            Int64(lanes.count { $0 != nil })
        }
        #expect(byCoverage.otherCount == 1 && !byCoverage.shown.contains { $0.record.agent == Fleet.hostile })
        #expect(
            byCoverage.other.map { $0.map { $0.map { SIMD2($0[0], $0[1]) } } }
                == shown.map { $0.map { SIMD2($0[0], $0[1]) } })
    }

    @Test func aRangeNoLevelKeepsIsAnErrorThatSaysWhatToDo() async throws {
        let fleet = try await Fleet.shared.value
        let short = WindowEngine(
            store: fleet.store, catalogue: fleet.engine.catalogue,
            levels: [RetainedLevel(level: .oneMinute, keep: 86_400_000)], calendar: .utc, billing: BillingPolicy())
        let error = await #expect(throws: DashboardError.self) {
            try await DashboardQuery(engine: short).read(.fleetOverview(groupKey: nil), range: .week, now: Fleet.now)
        }
        #expect(error?.description.contains("keep a level at least that long") == true)
    }

    /// A range someone picks or brushes is read at the finest kept level that gives at most 720 buckets, whole
    /// buckets covering it, and never past the last complete bucket.
    @Test func aPickedRangeIsReadAtTheResolutionItNeeds() async throws {
        let fleet = try await Fleet.shared.value
        let query = DashboardQuery(engine: fleet.engine)
        let now = Fleet.now
        let spec = DashboardSpec.hostPage(Fleet.hostile)
        for (length, level) in [
            (3 * 3_600_000, RollupLevel.oneMinute), (86_400_000, .fiveMinutes), (7 * 86_400_000, .oneHour),
        ] as [(Int64, RollupLevel)] {
            let from = now - length - 123_456
            let data = try await query.read(spec, from: from, to: now - 123_456, now: now, title: "picked")
            #expect(data.panels.level == level, "\(length) ms")
            #expect(data.panels.window.from == level.bucketStart(from))
            #expect(data.panels.window.to <= level.bucketStart(now))
            #expect(data.range.name == "custom" && data.range.title == "picked")
        }
        // A range past the last complete bucket ends there.
        let late = try await query.read(spec, from: now - 600_000, to: now + 3_600_000, now: now, title: "late")
        #expect(late.panels.window.to == RollupLevel.oneMinute.bucketStart(now))
        await #expect(throws: DashboardError.self) {
            try await query.read(spec, from: now + 60_000, to: now + 120_000, now: now, title: "future")
        }
    }
}
