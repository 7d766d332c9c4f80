#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ChartRenderer {
    /// Where a bar or rectangle sits across its band or step: the pixel span on the category/time axis.
    private func span(
        start: Double, end: Double, isRange: Bool, scale: PositionScale, dimension: MarkDimension,
        automaticRatio: Double, continuousStep: Double
    ) -> (Double, Double)? {
        if isRange {
            let a = scale.position(start)
            let b = scale.position(end)
            guard a.isFinite, b.isFinite else { return nil }
            let full = abs(b - a)
            let size = dimension.resolve(in: full, automaticRatio: automaticRatio)
            let mid = (a + b) / 2
            return (mid - size / 2, mid + size / 2)
        }
        let center = scale.position(start)
        guard center.isFinite else { return nil }
        let step = scale.kind == .band ? abs(scale.step) : continuousStep
        let size = dimension.resolve(in: step, automaticRatio: automaticRatio)
        return (center - size / 2, center + size / 2)
    }

    /// The smallest pixel distance between neighbouring positions of a template's marks, which bounds the width
    /// of bars on a continuous axis.
    private func smallestStep(_ indices: [Int32], horizontal: Bool) -> Double {
        let scale = horizontal ? resolution.y : resolution.x
        let pixels = indices.map { i -> Double in
            let r = resolution.records[Int(i)]
            return scale.position(horizontal ? r.y0 : r.x0)
        }.filter { $0.isFinite }.sorted()
        var step = Double.infinity
        for i in 1..<max(pixels.count, 1) where pixels.count > 1 {
            let d = pixels[i] - pixels[i - 1]
            if d > 0.5 { step = min(step, d) }
        }
        let length = horizontal ? layout.plot.height : layout.plot.width
        return step.isFinite ? step : length / 8
    }

    private func valuePixel(_ value: Double, scale: PositionScale) -> Double {
        if scale.kind == .log && !(value > 0) { return scale.rangeStart }
        return scale.position(value)
    }

    mutating func drawBars(_ indices: [Int32], template t: Int) {
        guard !indices.isEmpty else { return }
        let template = resolution.table.templates[t]
        let horizontal = resolution.horizontal[t]
        let step =
            (horizontal ? resolution.y.kind : resolution.x.kind) == .band
            ? 0 : smallestStep(indices, horizontal: horizontal)
        let positions = resolution.positionCount
        var elements: [SVGElement] = []
        for index in indices {
            let record = resolution.records[Int(index)]
            let across: (Double, Double)?
            if horizontal {
                across = span(
                    start: record.y0, end: record.y1, isRange: template.yIsRange, scale: resolution.y,
                    dimension: template.style.height ?? .automatic, automaticRatio: 0.8, continuousStep: step)
            } else {
                across = span(
                    start: record.x0, end: record.x1, isRange: template.xIsRange, scale: resolution.x,
                    dimension: template.style.width ?? .automatic, automaticRatio: 0.8, continuousStep: step)
            }
            guard var (a, b) = across else { continue }
            if record.position >= 0, positions > 1, let slot = resolution.positionSlots[record.position] {
                let width = (b - a) / Double(positions)
                a += width * Double(slot)
                b = a + width
                let gap = min(1, width * 0.1)
                a += gap / 2
                b -= gap / 2
            }
            let low = horizontal ? record.x0 : record.y0
            let high = horizontal ? record.x1 : record.y1
            guard low.isFinite, high.isFinite else { continue }
            let scale = horizontal ? resolution.x : resolution.y
            let p0 = valuePixel(low, scale: scale)
            let p1 = valuePixel(high, scale: scale)
            guard p0.isFinite, p1.isFinite else { continue }
            let rect = horizontal ? Rect(corners: p0, a, p1, b) : Rect(corners: a, p0, b, p1)
            let paint = markColor(record, template: template)
            var attributes = rectAttributes(rect) + fillPaint(paint)
            if let radius = template.style.cornerRadius, radius > 0 {
                attributes.append(("rx", Coordinates.text(min(radius, rect.width / 2, rect.height / 2))))
            }
            elements.append(withTooltip(SVGElement("rect", attributes), record: Int(index)))
            if record.extras >= 0 {
                annotate(
                    Int(index), anchor: rect,
                    kind: horizontal
                        ? .horizontalBar(negative: high < low || high < 0)
                        : .verticalBar(negative: high < low || high < 0))
            }
        }
        markElements += elements
    }

    mutating func drawRectangles(_ indices: [Int32], template t: Int) {
        let template = resolution.table.templates[t]
        let plot = layout.plot
        var elements: [SVGElement] = []
        for index in indices {
            let record = resolution.records[Int(index)]
            var xSpan: (Double, Double)? = (plot.minX, plot.maxX)
            var ySpan: (Double, Double)? = (plot.minY, plot.maxY)
            if template.hasX {
                xSpan = span(
                    start: record.x0, end: record.x1, isRange: template.xIsRange, scale: resolution.x,
                    dimension: template.style.width ?? .automatic, automaticRatio: 1, continuousStep: 8)
            }
            if template.hasY {
                ySpan = span(
                    start: record.y0, end: record.y1, isRange: template.yIsRange, scale: resolution.y,
                    dimension: template.style.height ?? .automatic, automaticRatio: 1, continuousStep: 8)
            }
            guard var (x0, x1) = xSpan, var (y0, y1) = ySpan else { continue }
            // Heatmap cells on bands keep a hairline between them so neighbouring equal values stay countable.
            if template.hasX && !template.xIsRange && resolution.x.kind == .band && template.style.width == nil {
                x0 += 0.5
                x1 -= 0.5
            }
            if template.hasY && !template.yIsRange && resolution.y.kind == .band && template.style.height == nil {
                y0 += 0.5
                y1 -= 0.5
            }
            let rect = Rect(corners: x0, y0, x1, y1)
            var paint = markColor(record, template: template)
            // A highlighted range over the whole plot would hide the data under it at full strength.
            if (!template.hasX || !template.hasY) && template.style.opacity == nil && paint.0.alpha == 1 {
                paint.0 = paint.0.opacity(0.18)
            }
            var attributes = rectAttributes(rect) + fillPaint(paint)
            if let radius = template.style.cornerRadius, radius > 0 {
                attributes.append(("rx", Coordinates.text(min(radius, rect.width / 2, rect.height / 2))))
            }
            elements.append(withTooltip(SVGElement("rect", attributes), record: Int(index)))
            if record.extras >= 0 { annotate(Int(index), anchor: rect, kind: .area) }
        }
        markElements += elements
    }

    mutating func drawPoints(_ indices: [Int32], template t: Int) {
        let template = resolution.table.templates[t]
        var elements: [SVGElement] = []
        let area = template.style.symbolSize ?? 30
        for index in indices {
            let record = resolution.records[Int(index)]
            guard record.xType != .missing, record.yType != .missing else { continue }
            let x = resolution.x.position(record.x0)
            let y = valuePixel(record.y0, scale: resolution.y)
            guard x.isFinite, y.isFinite else { continue }
            let paint = markColor(record, template: template)
            let symbol = resolution.symbols.symbol(forKey: record.symbol) ?? template.style.symbol ?? .circle
            let element = SymbolShapes.element(
                symbol, x: x, y: y, area: area, paint: fillPaint(paint),
                strokePaint: strokePaint(paint))
            elements.append(withTooltip(element, record: Int(index)))
            if record.extras >= 0 {
                let r = (area / Double.pi).squareRoot()
                annotate(Int(index), anchor: Rect(minX: x - r, minY: y - r, maxX: x + r, maxY: y + r), kind: .point)
            }
        }
        markElements += elements
    }

    mutating func drawRules(_ indices: [Int32], template t: Int) {
        let template = resolution.table.templates[t]
        let plot = layout.plot
        var elements: [SVGElement] = []
        let stroke = template.style.lineStyle ?? StrokeStyle(lineWidth: 1.5)
        for index in indices {
            let record = resolution.records[Int(index)]
            var path = PathBuilder()
            let kind: AnnotationAnchorKind
            let anchor: Rect
            if template.hasY && !template.yIsRange {
                let y = valuePixel(record.y0, scale: resolution.y)
                guard y.isFinite, record.yType != .missing else { continue }
                var x0 = plot.minX
                var x1 = plot.maxX
                if template.hasX && template.xIsRange {
                    x0 = resolution.x.position(record.x0)
                    x1 = resolution.x.position(record.x1)
                    guard x0.isFinite, x1.isFinite else { continue }
                }
                path.move(x0, y)
                path.horizontal(x1)
                kind = .horizontalRule
                anchor = Rect(corners: x0, y, x1, y)
            } else if template.hasX {
                let x = resolution.x.position(record.x0)
                guard x.isFinite, record.xType != .missing else { continue }
                var y0 = plot.maxY
                var y1 = plot.minY
                if template.hasY && template.yIsRange {
                    y0 = valuePixel(record.y0, scale: resolution.y)
                    y1 = valuePixel(record.y1, scale: resolution.y)
                    guard y0.isFinite, y1.isFinite else { continue }
                }
                path.move(x, y0)
                path.vertical(y1)
                kind = .verticalRule
                anchor = Rect(corners: x, y0, x, y1)
            } else {
                continue
            }
            let paint = markColor(record, template: template)
            var attributes = [("d", path.string)] + strokePaint(paint)
            attributes.append(("stroke-width", Coordinates.text(stroke.lineWidth)))
            if !stroke.dash.isEmpty {
                attributes.append(("stroke-dasharray", stroke.dash.map(Coordinates.text).joined(separator: " ")))
            }
            elements.append(withTooltip(SVGElement("path", attributes), record: Int(index)))
            if record.extras >= 0 { annotate(Int(index), anchor: anchor, kind: kind) }
        }
        markElements += elements
    }

    /// Draws slices clockwise from twelve o'clock; returns the angle where the next template's slices start.
    mutating func drawSectors(_ indices: [Int32], template t: Int, total: Double, startingAt start: Double) -> Double {
        let template = resolution.table.templates[t]
        let plot = layout.plot
        let cx = plot.midX
        let cy = plot.midY
        let full = max(min(plot.width, plot.height) / 2 - 2, 1)
        let outer = max((template.style.outerRadius ?? .automatic).resolve(in: full, automaticRatio: 1), 1)
        let inner: Double
        switch template.style.innerRadius ?? .automatic {
        case .automatic: inner = 0
        case let other: inner = min(max(other.resolve(in: outer, automaticRatio: 0), 0), outer - 1)
        }
        let pad = (template.style.angularInset ?? 0) / outer
        var angle = start
        var elements: [SVGElement] = []
        guard total > 0 else { return start }
        for index in indices {
            let record = resolution.records[Int(index)]
            guard record.x0.isFinite, record.x0 > 0 else { continue }
            let sweep = record.x0 / total * 2 * Double.pi
            let a0 = angle + min(pad / 2, sweep / 4)
            let a1 = angle + sweep - min(pad / 2, sweep / 4)
            angle += sweep
            let path = ChartRenderer.sectorPath(cx: cx, cy: cy, inner: inner, outer: outer, from: a0, to: a1)
            let paint = markColor(record, template: template)
            elements.append(
                withTooltip(
                    SVGElement("path", [("d", path), ("fill-rule", "evenodd")] + fillPaint(paint)), record: Int(index)))
            if record.extras >= 0 {
                let mid = (a0 + a1) / 2 - Double.pi / 2
                let r = inner > 0 ? (inner + outer) / 2 : outer * 0.62
                let x = cx + r * cos(mid)
                let y = cy + r * sin(mid)
                annotate(Int(index), anchor: Rect(minX: x, minY: y, maxX: x, maxY: y), kind: .area)
            }
        }
        markElements += elements
        return angle
    }

    /// A ring segment between two angles measured clockwise from twelve o'clock.
    static func sectorPath(cx: Double, cy: Double, inner: Double, outer: Double, from a0: Double, to a1: Double)
        -> String
    {
        var path = PathBuilder()
        func point(_ r: Double, _ a: Double) -> (Double, Double) {
            (cx + r * cos(a - Double.pi / 2), cy + r * sin(a - Double.pi / 2))
        }
        // A whole circle cannot be one arc: it is drawn as two halves.
        func circle(radius: Double, clockwise: Bool) {
            let top = point(radius, 0)
            let bottom = point(radius, Double.pi)
            path.move(top.0, top.1)
            path.arc(radius: radius, largeArc: false, sweep: clockwise, bottom.0, bottom.1)
            path.arc(radius: radius, largeArc: false, sweep: clockwise, top.0, top.1)
            path.close()
        }
        let sweep = a1 - a0
        if sweep >= 2 * Double.pi - 1e-9 {
            circle(radius: outer, clockwise: true)
            if inner > 0 { circle(radius: inner, clockwise: false) }
            return path.string
        }
        let large = sweep > Double.pi
        let o0 = point(outer, a0)
        let o1 = point(outer, a1)
        path.move(o0.0, o0.1)
        path.arc(radius: outer, largeArc: large, sweep: true, o1.0, o1.1)
        if inner > 0 {
            let i1 = point(inner, a1)
            let i0 = point(inner, a0)
            path.line(i1.0, i1.1)
            path.arc(radius: inner, largeArc: large, sweep: false, i0.0, i0.1)
        } else {
            path.line(cx, cy)
        }
        path.close()
        return path.string
    }
}
