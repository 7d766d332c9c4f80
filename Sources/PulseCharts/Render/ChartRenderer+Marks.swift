extension ChartRenderer {
    /// Draws every mark, template by template in the order they were first written, so later marks are on top.
    mutating func drawMarks() {
        let templates = resolution.table.templates
        let groups = resolution.stats.groups
        let groupsOfTemplate = resolution.stats.groupsOfTemplate
        let byTemplate = resolution.stats.discreteByTemplate
        let sectorTotal = resolution.stats.sectorTotal
        var sectorStart = 0.0
        var layers: [SVGElement] = []
        for (t, template) in templates.enumerated() {
            let before = markElements.count
            switch template.kind {
            case .line:
                for g in groupsOfTemplate[t] { drawLine(groups[g]) }
            case .area:
                for g in groupsOfTemplate[t] { drawArea(groups[g]) }
            case .bar:
                drawBars(byTemplate[t], template: t)
            case .rectangle:
                drawRectangles(byTemplate[t], template: t)
            case .point:
                drawPoints(byTemplate[t], template: t)
            case .rule:
                drawRules(byTemplate[t], template: t)
            case .sector:
                sectorStart = drawSectors(byTemplate[t], template: t, total: sectorTotal, startingAt: sectorStart)
            }
            // Symbols centred on the plot's edge stay whole; everything else is cut at the plot's edge so data
            // outside a fixed domain does not spill over the axes.
            let clip = template.kind == .point ? id("clip-points") : id("clip")
            if let layer = SVGElement.group([("clip-path", "url(#\(clip))")], Array(markElements[before...])) {
                layers.append(layer)
            }
        }
        markElements = layers
    }

    /// Pixel positions of a group's marks, sorted by x, the record each came from (-1 for rows of a plot
    /// segment; empty when the group has no records), and the unbroken runs between missing values.
    private func points(
        of group: SeriesGroup, valueEnd: Bool
    ) -> (xs: [Double], ys: [Double], baseline: [Double], order: [Int32], runs: [Range<Int>]) {
        let records = resolution.records
        let xScale = resolution.x
        let yScale = resolution.y
        let count = group.count
        var xs = [Double](repeating: .nan, count: count)
        var ys = [Double](repeating: .nan, count: count)
        var baseline: [Double] = valueEnd ? [Double](repeating: .nan, count: count) : []
        // Rows of plot segments have no record; a group made only of segments needs no list of -1s.
        var order = group.runs.isEmpty ? [] : [Int32](repeating: -1, count: count)
        var filled = 0
        records.withUnsafeBufferPointer { buffer in
            for run in group.runs {
                for index in run {
                    let record = buffer[index]
                    order[filled] = Int32(index)
                    if record.xType != .missing { xs[filled] = record.x0 }
                    if record.yType != .missing {
                        ys[filled] = valueEnd ? record.y1 : record.y0
                        if valueEnd { baseline[filled] = record.y0 }
                    }
                    filled += 1
                }
            }
        }
        for index in group.segments {
            let segment = resolution.table.segments[index]
            let n = min(segment.count, count - filled)
            xs.withUnsafeMutableBufferPointer { target in
                segment.xs.withUnsafeBufferPointer { source in
                    for i in 0..<n { target[filled + i] = source[i] }
                }
            }
            ys.withUnsafeMutableBufferPointer { target in
                segment.ys.withUnsafeBufferPointer { source in
                    for i in 0..<n { target[filled + i] = source[i] }
                }
            }
            filled += n
        }
        // Points join in order of x; data usually arrives sorted, and then nothing moves.
        var ascending = true
        var previous = -Double.infinity
        for x in xs where x.isFinite {
            if x < previous {
                ascending = false
                break
            }
            previous = x
        }
        if !ascending {
            let permutation = xs.indices.sorted { a, b in
                let xa = xs[a].isFinite ? xs[a] : Double.infinity
                let xb = xs[b].isFinite ? xs[b] : Double.infinity
                return xa < xb
            }
            xs = permutation.map { xs[$0] }
            ys = permutation.map { ys[$0] }
            if !order.isEmpty { order = permutation.map { order[$0] } }
            if valueEnd { baseline = permutation.map { baseline[$0] } }
        }
        if let (a, k) = xScale.linearMap {
            for i in 0..<count { xs[i] = a + xs[i] * k }
        } else {
            for i in 0..<count { xs[i] = xScale.position(xs[i]) }
        }
        if let (a, k) = yScale.linearMap {
            for i in 0..<count { ys[i] = a + ys[i] * k }
            if valueEnd { for i in 0..<count { baseline[i] = a + baseline[i] * k } }
        } else {
            for i in 0..<count { ys[i] = yScale.position(ys[i]) }
            if valueEnd {
                for i in 0..<count {
                    let value = baseline[i]
                    baseline[i] =
                        yScale.kind == .log && !(value > 0) && !value.isNaN
                        ? yScale.rangeStart : yScale.position(value)
                }
            }
        }
        var runs: [Range<Int>] = []
        var start = -1
        for i in 0..<count {
            let ok = xs[i].isFinite && ys[i].isFinite && (!valueEnd || baseline[i].isFinite)
            if ok {
                if start < 0 { start = i }
            } else if start >= 0 {
                runs.append(start..<i)
                start = -1
            }
        }
        if start >= 0 { runs.append(start..<count) }
        return (xs, ys, baseline, order, runs)
    }

    private var reductionThreshold: Int? {
        switch configuration.reduction {
        case .automatic: return max(Int(layout.plot.width.rounded(.up)), 3)
        case .disabled: return nil
        case .maximumPoints(let n): return max(n, 3)
        }
    }

    private func seriesTitle(_ group: SeriesGroup) -> String {
        let keys = resolution.table.keys.values
        var names: [String] = []
        for key in [group.color, group.symbol, group.series] where key >= 0 {
            let name = ChartResolution.name(of: keys[Int(key)].value)
            if !names.contains(name) { names.append(name) }
        }
        let template = resolution.table.templates[group.template]
        return names.isEmpty ? template.yLabel : names.joined(separator: ", ")
    }

    /// The points a line keeps, in pixels, per unbroken run: all of them, or as many as the reduction allows.
    private func keptRuns<Points: ReduciblePoints>(
        _ points: Points, runs: [Range<Int>]
    ) -> [(xs: [Double], ys: [Double])] {
        let kept =
            reductionThreshold.map { LargestTriangleThreeBuckets.reduce(points, runs: runs, threshold: $0) }
            ?? runs.map { Array($0) }
        return kept.map { run in (run.map { points.x($0) }, run.map { points.y($0) }) }
    }

    /// The line of a group that is one plot segment, sorted by x, on linear or time scales: the common case of a
    /// long series from `LinePlot`, which is reduced straight from its columns.
    private func keptRunsOfSortedSegment(_ group: SeriesGroup) -> [(xs: [Double], ys: [Double])]? {
        guard group.runs.isEmpty, group.segments.count == 1, let xMap = resolution.x.linearMap,
            let yMap = resolution.y.linearMap
        else { return nil }
        let segment = resolution.table.segments[group.segments[0]]
        return segment.xs.withUnsafeBufferPointer { xs in
            segment.ys.withUnsafeBufferPointer { ys in
                let points = MappedPoints(xs: xs, ys: ys, xMap: xMap, yMap: yMap)
                return points.finiteRunsIfSorted.map { keptRuns(points, runs: $0) }
            }
        }
    }

    mutating func drawLine(_ group: SeriesGroup) {
        let template = resolution.table.templates[group.template]
        var xs: [Double] = []
        var ys: [Double] = []
        var order: [Int32] = []
        let kept: [(xs: [Double], ys: [Double])]
        if let runs = keptRunsOfSortedSegment(group) {
            kept = runs
        } else {
            let runs: [Range<Int>]
            (xs, ys, _, order, runs) = points(of: group, valueEnd: false)
            kept = xs.withUnsafeBufferPointer { xp in
                ys.withUnsafeBufferPointer { yp in keptRuns(PixelPoints(xs: xp, ys: yp), runs: runs) }
            }
        }
        var path = PathBuilder(capacity: kept.reduce(0) { $0 + $1.xs.count } * 14 + 16)
        let method = template.style.interpolation ?? .linear
        var keptXs: [Double] = []
        var keptYs: [Double] = []
        for run in kept {
            CurvePath.append(xs: run.xs, ys: run.ys, method: method, connect: false, to: &path)
            keptXs += run.xs
            keptYs += run.ys
        }
        guard !path.isEmpty else { return }
        let paint = markColor(colorKey: group.color, template: template)
        let stroke = template.style.lineStyle ?? StrokeStyle(lineWidth: 2)
        var attributes: [(String, String)] = [("d", path.string), ("fill", "none")] + strokePaint(paint)
        attributes.append(("stroke-width", Coordinates.text(stroke.lineWidth)))
        attributes.append(("stroke-linejoin", "round"))
        attributes.append(("stroke-linecap", "round"))
        if !stroke.dash.isEmpty {
            attributes.append(("stroke-dasharray", stroke.dash.map(Coordinates.text).joined(separator: " ")))
        }
        var element = SVGElement("path", attributes)
        if configuration.tooltips != .hidden {
            element.children.append(.element(SVGElement("title", text: seriesTitle(group))))
        }
        markElements.append(element)
        // Symbols make lines tell apart without colour; on a dense line draw enough to identify it, not one per point.
        let symbol = resolution.symbols.symbol(forKey: group.symbol) ?? template.style.symbol
        if let symbol, !keptXs.isEmpty {
            let most = max(Int(layout.plot.width / 40), 2)
            let every = keptXs.count > Int(layout.plot.width / 6) ? max(keptXs.count / most, 1) : 1
            var symbols: [SVGElement] = []
            var i = 0
            while i < keptXs.count {
                symbols.append(
                    SymbolShapes.element(
                        symbol, x: keptXs[i], y: keptYs[i],
                        area: template.style.symbolSize ?? 30,
                        paint: fillPaint(paint), strokePaint: strokePaint(paint)))
                i += every
            }
            markElements += symbols
        }
        annotateSeries(order: order, xs: xs, ys: ys)
    }

    mutating func drawArea(_ group: SeriesGroup) {
        let template = resolution.table.templates[group.template]
        let (xs, ys, baseline, order, runs) = points(of: group, valueEnd: true)
        let kept =
            reductionThreshold.map { LargestTriangleThreeBuckets.reduce(xs: xs, ys: ys, runs: runs, threshold: $0) }
            ?? runs.map { Array($0) }
        let method = template.style.interpolation ?? .linear
        var path = PathBuilder(capacity: kept.reduce(0) { $0 + $1.count } * 28 + 16)
        for run in kept where !run.isEmpty {
            CurvePath.append(xs: run.map { xs[$0] }, ys: run.map { ys[$0] }, method: method, connect: false, to: &path)
            let back = run.reversed()
            if let first = run.first, let last = run.last,
                run.allSatisfy({ abs(baseline[$0] - baseline[first]) < 0.005 })
            {
                // An area on zero (not stacked on another) has a flat bottom: one segment instead of a point each.
                path.line(xs[last], baseline[first])
                path.horizontal(xs[first])
            } else {
                CurvePath.append(
                    xs: back.map { xs[$0] }, ys: back.map { baseline[$0] }, method: method, connect: true,
                    to: &path)
            }
            path.close()
        }
        guard !path.isEmpty else { return }
        let paint = markColor(colorKey: group.color, template: template)
        var element = SVGElement("path", [("d", path.string)] + fillPaint(paint))
        if configuration.tooltips != .hidden {
            element.children.append(.element(SVGElement("title", text: seriesTitle(group))))
        }
        markElements.append(element)
        annotateSeries(order: order, xs: xs, ys: ys)
    }

    /// Annotations on line and area marks sit at their points.
    private mutating func annotateSeries(order: [Int32], xs: [Double], ys: [Double]) {
        guard !resolution.table.extras.isEmpty else { return }
        for (i, index) in order.enumerated() where index >= 0 && resolution.records[Int(index)].extras >= 0 {
            guard xs[i].isFinite && ys[i].isFinite else { continue }
            annotate(Int(index), anchor: Rect(minX: xs[i], minY: ys[i], maxX: xs[i], maxY: ys[i]), kind: .point)
        }
    }
}
