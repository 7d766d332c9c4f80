/// Largest-Triangle-Three-Buckets (Steinarsson, 2013): picks `threshold` of `n` points so that a line through
/// them looks like the line through all of them. Each bucket keeps the point that makes the largest triangle
/// with the point kept before it and the average of the next bucket, so peaks and dips survive.
enum LargestTriangleThreeBuckets {
    /// Indexes into `xs`/`ys` (same length, x ascending) of the points to keep; first and last are always kept.
    static func select(xs: UnsafeBufferPointer<Double>, ys: UnsafeBufferPointer<Double>, threshold: Int) -> [Int] {
        select(PixelPoints(xs: xs, ys: ys), threshold: threshold)
    }

    /// Indexes of the points to keep, x ascending; first and last are always kept.
    static func select<Points: ReduciblePoints>(_ points: Points, threshold: Int) -> [Int] {
        let n = points.count
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
                avgX += points.x(j)
                avgY += points.y(j)
            }
            avgX /= Double(nextCount)
            avgY /= Double(nextCount)
            let ax = points.x(a)
            let ay = points.y(a)
            var best = start
            var bestArea = -1.0
            var j = start
            while j < end {
                // Twice the triangle's area; the factor does not change which point wins.
                let area = abs((ax - avgX) * (points.y(j) - ay) - (ax - points.x(j)) * (avgY - ay))
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
        xs.withUnsafeBufferPointer { xp in
            ys.withUnsafeBufferPointer { yp in
                reduce(PixelPoints(xs: xp, ys: yp), runs: runs, threshold: threshold)
            }
        }
    }

    /// Reduces a series with gaps: each unbroken run gets a share of `threshold` proportional to its length.
    /// `runs` are half-open index ranges into `points`; returns the kept indexes per run.
    static func reduce<Points: ReduciblePoints>(_ points: Points, runs: [Range<Int>], threshold: Int) -> [[Int]] {
        let total = runs.reduce(0) { $0 + $1.count }
        guard total > threshold, threshold > 0 else { return runs.map { Array($0) } }
        return runs.map { run in
            let share = max(3, Int((Double(threshold) * Double(run.count) / Double(total)).rounded()))
            guard run.count > share else { return Array(run) }
            return select(points.slice(run), threshold: share).map { $0 + run.lowerBound }
        }
    }
}

/// The points a line is reduced from, by index.
protocol ReduciblePoints {
    var count: Int { get }
    func x(_ index: Int) -> Double
    func y(_ index: Int) -> Double
    /// The points in `range`, numbered from 0.
    func slice(_ range: Range<Int>) -> Self
}

/// Points already in pixels.
struct PixelPoints: ReduciblePoints {
    var xs: UnsafeBufferPointer<Double>
    var ys: UnsafeBufferPointer<Double>

    var count: Int { xs.count }
    @inline(__always) func x(_ index: Int) -> Double { xs[index] }
    @inline(__always) func y(_ index: Int) -> Double { ys[index] }

    func slice(_ range: Range<Int>) -> PixelPoints {
        PixelPoints(xs: UnsafeBufferPointer(rebasing: xs[range]), ys: UnsafeBufferPointer(rebasing: ys[range]))
    }
}

/// A plot's columns in data units, put into pixels by linear maps as each point is read: a long series is reduced
/// without first writing out every point in pixels. Each point comes out exactly as `offset + value * factor`,
/// as the renderer computes it for points it does write out.
struct MappedPoints: ReduciblePoints {
    var xs: UnsafeBufferPointer<Double>
    var ys: UnsafeBufferPointer<Double>
    var xMap: (offset: Double, factor: Double)
    var yMap: (offset: Double, factor: Double)

    var count: Int { min(xs.count, ys.count) }
    @inline(__always) func x(_ index: Int) -> Double { xMap.offset + xs[index] * xMap.factor }
    @inline(__always) func y(_ index: Int) -> Double { yMap.offset + ys[index] * yMap.factor }

    func slice(_ range: Range<Int>) -> MappedPoints {
        MappedPoints(
            xs: UnsafeBufferPointer(rebasing: xs[range]), ys: UnsafeBufferPointer(rebasing: ys[range]), xMap: xMap,
            yMap: yMap)
    }

    /// The unbroken runs between points that do not map to finite pixels, or nil if the finite x values are not
    /// in ascending order (a line joins its points in order of x, so they would need sorting first).
    var finiteRunsIfSorted: [Range<Int>]? {
        // Usually every point maps to finite pixels and x ascends throughout: one pass without branches confirms it
        // (as in `PlotColumn.allFinite`, p * 0 is NaN only for a p that is not finite).
        guard count > 0 else { return [] }
        var bits = (x(0) * 0).bitPattern | (y(0) * 0).bitPattern
        var descents: UInt64 = 0
        for i in 1..<count {
            bits |= (x(i) * 0).bitPattern | (y(i) * 0).bitPattern
            descents |= xs[i] < xs[i - 1] ? 1 : 0
        }
        if bits & PlotColumn.exponentBits != PlotColumn.exponentBits && descents == 0 { return [0..<count] }
        var runs: [Range<Int>] = []
        var start = -1
        var previous = -Double.infinity
        for i in 0..<count {
            let value = xs[i]
            if value.isFinite {
                if value < previous { return nil }
                previous = value
            }
            if x(i).isFinite && y(i).isFinite {
                if start < 0 { start = i }
            } else if start >= 0 {
                runs.append(start..<i)
                start = -1
            }
        }
        if start >= 0 { runs.append(start..<count) }
        return runs
    }
}
