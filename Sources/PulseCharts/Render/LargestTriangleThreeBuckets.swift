/// Largest-Triangle-Three-Buckets (Steinarsson, 2013): picks `threshold` of `n` points so that a line through
/// them looks like the line through all of them. Each bucket keeps the point that makes the largest triangle
/// with the point kept before it and the average of the next bucket, so peaks and dips survive.
enum LargestTriangleThreeBuckets {
    /// Indexes into `xs`/`ys` (same length, x ascending) of the points to keep; first and last are always kept.
    static func select(xs: UnsafeBufferPointer<Double>, ys: UnsafeBufferPointer<Double>, threshold: Int) -> [Int] {
        let n = xs.count
        guard threshold >= 3, n > threshold else { return Array(0..<n) }
        var kept: [Int] = []
        kept.reserveCapacity(threshold)
        kept.append(0)
        let bucketSize = Double(n - 2) / Double(threshold - 2)
        var a = 0
        for bucket in 0..<(threshold - 2) {
            let start = Int(Double(bucket) * bucketSize) + 1
            let end = min(Int(Double(bucket + 1) * bucketSize) + 1, n - 1)
            let nextStart = end
            let nextEnd = min(Int(Double(bucket + 2) * bucketSize) + 1, n)
            var avgX = 0.0
            var avgY = 0.0
            let nextCount = max(nextEnd - nextStart, 1)
            for j in nextStart..<max(nextEnd, nextStart + 1) where j < n {
                avgX += xs[j]
                avgY += ys[j]
            }
            avgX /= Double(nextCount)
            avgY /= Double(nextCount)
            let ax = xs[a]
            let ay = ys[a]
            var best = start
            var bestArea = -1.0
            var j = start
            while j < end {
                // Twice the triangle's area; the factor does not change which point wins.
                let area = abs((ax - avgX) * (ys[j] - ay) - (ax - xs[j]) * (avgY - ay))
                if area > bestArea {
                    bestArea = area
                    best = j
                }
                j += 1
            }
            kept.append(best)
            a = best
        }
        kept.append(n - 1)
        return kept
    }

    /// Reduces a series with gaps: each unbroken run gets a share of `threshold` proportional to its length.
    /// `runs` are half-open index ranges into `xs`/`ys`; returns the kept indexes per run.
    static func reduce(
        xs: [Double], ys: [Double], runs: [Range<Int>], threshold: Int
    ) -> [[Int]] {
        let total = runs.reduce(0) { $0 + $1.count }
        guard total > threshold, threshold > 0 else { return runs.map { Array($0) } }
        return xs.withUnsafeBufferPointer { xp in
            ys.withUnsafeBufferPointer { yp in
                runs.map { run in
                    let share = max(3, Int((Double(threshold) * Double(run.count) / Double(total)).rounded()))
                    guard run.count > share else { return Array(run) }
                    let sx = UnsafeBufferPointer(rebasing: xp[run])
                    let sy = UnsafeBufferPointer(rebasing: yp[run])
                    return select(xs: sx, ys: sy, threshold: share).map { $0 + run.lowerBound }
                }
            }
        }
    }
}
