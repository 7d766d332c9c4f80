import PulseAnalytics
import PulseCore
import Testing

/// The tracker keeps only a period's largest rates; swapping a changed interval's rates in must give what sorting
/// every rate gives, or say it cannot (and then leave the tracker as it was).
@Suite struct BillTrackerTests {
    /// Nearest-rank 95th percentile of every rate, sorted (docs/windows.md): the direct computation.
    static func direct(_ rates: [Int64?]) -> Int64? {
        RateMath.percentile(rates.compactMap { $0 }.sorted(), 95)
    }

    @Test func swappingRatesAgreesWithSortingThemAll() {
        var random = SplitMix64(seed: 7)
        var swapped = 0
        var refused = 0
        // Kept small: the check sorts every rate after each swap (a debug build, on the tests' shared threads).
        for round in 0..<12 {
            // Short periods keep few rates (a 300-interval period keeps 16), so drops and refusals happen often.
            let intervals = [20, 60, 300, 1_000][round % 4]
            var inbound = [Int64?](repeating: nil, count: intervals)
            var outbound = [Int64?](repeating: nil, count: intervals)
            var tracker = BillTracker(intervals: intervals)
            for index in 0..<intervals where random.next() % 5 != 0 {
                inbound[index] = Int64(random.next() % 1_000)
                outbound[index] = Int64(random.next() % 1_000)
                tracker.add(inbound: inbound[index]!, outbound: outbound[index]!)
            }
            for _ in 0..<min(intervals * 2, 300) {
                let index = Int(random.next() % UInt64(intervals))
                let old = inbound[index].map { ($0, outbound[index]!) }
                // Mostly more bytes (late data adds), sometimes fewer, sometimes data comes or goes.
                let new: (Int64, Int64)?
                switch random.next() % 10 {
                case 0: new = nil
                case 1: new = (Int64(random.next() % 1_000), Int64(random.next() % 1_000))
                default:
                    let base = old ?? (0, 0)
                    new = (base.0 + Int64(random.next() % 300), base.1 + Int64(random.next() % 300))
                }
                let before = tracker
                if tracker.replace(old, with: new) {
                    swapped += 1
                    inbound[index] = new?.0
                    outbound[index] = new?.1
                } else {
                    refused += 1
                    #expect(tracker == before, "a refused swap leaves the tracker as it was")
                    // What the bill keeper does then: read the period again.
                    inbound[index] = new?.0
                    outbound[index] = new?.1
                    tracker = BillTracker(intervals: intervals)
                    for position in 0..<intervals {
                        if let rx = inbound[position] { tracker.add(inbound: rx, outbound: outbound[position]!) }
                    }
                }
                let sums = (0..<intervals).map { position in inbound[position].map { $0 + outbound[position]! } }
                #expect(tracker.count == inbound.compactMap { $0 }.count as Int)
                #expect(tracker.inboundPercentile == Self.direct(inbound), "in, \(intervals) intervals")
                #expect(tracker.outboundPercentile == Self.direct(outbound), "out, \(intervals) intervals")
                #expect(tracker.sumPercentile == Self.direct(sums), "sum, \(intervals) intervals")
            }
        }
        // Both paths were taken, the swap far more often (late data mostly adds bytes).
        #expect(swapped > 10 * refused && refused > 0, "\(swapped) swapped, \(refused) refused")
    }
}
