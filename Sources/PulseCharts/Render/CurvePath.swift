/// Writes a run of points into a path with an interpolation method.
enum CurvePath {
    /// Appends the points; `connect` continues the current subpath with a line (areas), else starts one.
    static func append(
        xs: [Double], ys: [Double], method: InterpolationMethod, connect: Bool, to path: inout PathBuilder
    ) {
        let n = xs.count
        guard n > 0 else { return }
        if connect { path.line(xs[0], ys[0]) } else { path.move(xs[0], ys[0]) }
        guard n > 1 else { return }
        switch method {
        case .linear:
            for i in 1..<n { path.line(xs[i], ys[i]) }
        case .stepStart:
            for i in 1..<n {
                path.vertical(ys[i])
                path.horizontal(xs[i])
            }
        case .stepEnd:
            for i in 1..<n {
                path.horizontal(xs[i])
                path.vertical(ys[i])
            }
        case .stepCenter:
            for i in 1..<n {
                let mid = (xs[i - 1] + xs[i]) / 2
                path.horizontal(mid)
                path.vertical(ys[i])
                path.horizontal(xs[i])
            }
        case .catmullRom:
            for i in 1..<n {
                let p0x = xs[max(i - 2, 0)], p0y = ys[max(i - 2, 0)]
                let p1x = xs[i - 1], p1y = ys[i - 1]
                let p2x = xs[i], p2y = ys[i]
                let p3x = xs[min(i + 1, n - 1)], p3y = ys[min(i + 1, n - 1)]
                path.curve(
                    p1x + (p2x - p0x) / 6, p1y + (p2y - p0y) / 6,
                    p2x - (p3x - p1x) / 6, p2y - (p3y - p1y) / 6,
                    p2x, p2y)
            }
        case .monotone:
            let tangents = monotoneTangents(xs: xs, ys: ys)
            for i in 1..<n {
                let h = xs[i] - xs[i - 1]
                path.curve(
                    xs[i - 1] + h / 3, ys[i - 1] + tangents[i - 1] * h / 3,
                    xs[i] - h / 3, ys[i] - tangents[i] * h / 3,
                    xs[i], ys[i])
            }
        }
    }

    /// Fritsch-Carlson tangents: the curve between two points stays within their values.
    static func monotoneTangents(xs: [Double], ys: [Double]) -> [Double] {
        let n = xs.count
        var slopes = [Double](repeating: 0, count: max(n - 1, 0))
        for i in 0..<(n - 1) {
            let h = xs[i + 1] - xs[i]
            slopes[i] = h != 0 ? (ys[i + 1] - ys[i]) / h : 0
        }
        var tangents = [Double](repeating: 0, count: n)
        tangents[0] = slopes.first ?? 0
        tangents[n - 1] = slopes.last ?? 0
        if n > 2 {
            for i in 1..<(n - 1) {
                let a = slopes[i - 1]
                let b = slopes[i]
                tangents[i] = a * b <= 0 ? 0 : (a + b) / 2
            }
        }
        for i in 0..<(n - 1) where slopes[i] == 0 {
            tangents[i] = 0
            tangents[i + 1] = 0
        }
        for i in 0..<(n - 1) where slopes[i] != 0 {
            let alpha = tangents[i] / slopes[i]
            let beta = tangents[i + 1] / slopes[i]
            let sum = alpha * alpha + beta * beta
            if sum > 9 {
                let tau = 3 / sum.squareRoot()
                tangents[i] = tau * alpha * slopes[i]
                tangents[i + 1] = tau * beta * slopes[i]
            }
        }
        return tangents
    }
}
