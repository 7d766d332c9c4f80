import PulseAnalytics
import Testing

@testable import PulseStore

/// Spread gap steps merge into a series' stored buckets exactly as adding each to the bucket of its start would:
/// into the bucket there, or as a bucket of their own, in order, the larger revision kept.
@Suite struct VirtualGapsSpreadTests {
    static func values(_ bytes: Int64) -> BucketValues {
        var values = BucketValues.empty
        values.traffic[.rxBytes] = bytes
        values.measuredMilliseconds = 1_000
        return values
    }

    @Test func stepsMergeIntoTheBucketsTheyTouchAndInOrderElsewhere() {
        let level = RollupLevel.fiveMinutes
        let width = level.width
        let stored = [2, 3, 5, 6].map { slot in
            Bucket(level: level, start: Int64(slot) * width, values: Self.values(Int64(100 * slot)), revision: 10)
        }
        var spread = VirtualGaps.Spread()
        // Before the first bucket, on one (twice), between two, on the last, after it; and another series'.
        let steps: [(slot: Int64, bytes: Int64, revision: Int64)] = [
            (0, 1, 4), (3, 2, 12), (3, 3, 5), (4, 4, 7), (6, 5, 9), (8, 6, 11),
        ]
        for step in steps { spread.add(7, step.slot * width, Self.values(step.bytes), step.revision) }
        spread.add(8, 0, Self.values(9), 1)

        let merged = spread.merge(7, into: stored, level: level)

        // What each start should hold, worked out one step at a time.
        var expected = [Int64: Bucket]()
        for bucket in stored { expected[bucket.start] = bucket }
        for step in steps {
            let start = step.slot * width
            var bucket = expected[start] ?? Bucket(level: level, start: start, values: .empty)
            bucket.values.merge(Self.values(step.bytes))
            bucket.revision = max(bucket.revision, step.revision)
            expected[start] = bucket
        }
        #expect(merged == expected.values.sorted { $0.start < $1.start })
        #expect(merged.map(\.start) == [0, 2, 3, 4, 5, 6, 8].map { $0 * width })
        #expect(merged.first { $0.start == 3 * width }?.revision == 12)
        // The series is done; the other one is still to merge, and one without steps is left as it was.
        #expect(spread.remaining == [8])
        #expect(spread.merge(7, into: stored, level: level) == stored)
    }
}
