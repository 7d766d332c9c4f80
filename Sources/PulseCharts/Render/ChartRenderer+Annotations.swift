/// What kind of mark an annotation is attached to, which decides where `.automatic` puts it.
enum AnnotationAnchorKind: Equatable {
    case point
    case verticalBar(negative: Bool)
    case horizontalBar(negative: Bool)
    case horizontalRule
    case verticalRule
    case area
}

extension ChartRenderer {
    /// Places a mark's annotations around `anchor`, kept inside the frame so they are never cut off.
    mutating func annotate(_ recordIndex: Int, anchor: Rect, kind: AnnotationAnchorKind) {
        let extrasIndex = Int(resolution.records[recordIndex].extras)
        guard extrasIndex >= 0 else { return }
        let frame = layout.frame
        for annotation in resolution.table.extras[extrasIndex].annotations {
            let text = annotation.text
            let size = text.fontSize ?? fontSize
            let width = TextMetrics.width(text.content, fontSize: size, bold: text.weight == .bold)
            let ascent = TextMetrics.ascent(fontSize: size)
            var position = annotation.position
            if position == .automatic {
                switch kind {
                case .point: position = .top
                case .verticalBar(let negative): position = negative ? .bottom : .top
                case .horizontalBar(let negative): position = negative ? .leading : .trailing
                case .horizontalRule: position = .top
                case .verticalRule: position = .topTrailing
                case .area: position = .overlay
                }
            }
            let spacing = annotation.spacing
            // The text's box, left edge and baseline, before clamping.
            var left: Double
            var baseline: Double
            func alignedLeft() -> Double {
                switch annotation.alignment {
                case .leading: return anchor.minX + (kind == .horizontalRule ? 2 : 0)
                case .trailing: return anchor.maxX - width - (kind == .horizontalRule ? 2 : 0)
                case .center: return anchor.midX - width / 2
                }
            }
            switch position {
            case .top, .automatic:
                left = alignedLeft()
                baseline = anchor.minY - spacing - size * 0.22
            case .bottom:
                left = alignedLeft()
                baseline = anchor.maxY + spacing + ascent
            case .leading:
                left = anchor.minX - spacing - width
                baseline = anchor.midY + size * 0.35
            case .trailing:
                left = anchor.maxX + spacing
                baseline = anchor.midY + size * 0.35
            case .overlay:
                left = anchor.midX - width / 2
                baseline = anchor.midY + size * 0.35
            case .topLeading:
                left = anchor.minX + (kind == .verticalRule ? -spacing - width : 0)
                baseline = anchor.minY + (kind == .verticalRule ? ascent : -spacing - size * 0.22)
            case .topTrailing:
                left = kind == .verticalRule ? anchor.maxX + spacing : anchor.maxX - width
                baseline = anchor.minY + (kind == .verticalRule ? ascent : -spacing - size * 0.22)
            case .bottomLeading:
                left = anchor.minX + (kind == .verticalRule ? -spacing - width : 0)
                baseline = anchor.maxY + (kind == .verticalRule ? -size * 0.22 : spacing + ascent)
            case .bottomTrailing:
                left = kind == .verticalRule ? anchor.maxX + spacing : anchor.maxX - width
                baseline = anchor.maxY + (kind == .verticalRule ? -size * 0.22 : spacing + ascent)
            }
            left = min(max(left, frame.minX + ChartRenderer.textInset), frame.maxX - ChartRenderer.textInset - width)
            baseline = min(
                max(baseline, frame.minY + ChartRenderer.textInset + ascent),
                frame.maxY - ChartRenderer.textInset - size * 0.22)
            var attributes: [(String, String)] = [
                ("x", Coordinates.text(left)), ("y", Coordinates.text(baseline)),
            ]
            if text.fontSize != nil { attributes.append(("font-size", Coordinates.text(size))) }
            if text.weight == .bold { attributes.append(("font-weight", "bold")) }
            attributes += text.color.map { fill($0, role: nil) } ?? fill(colors.text, role: "tx")
            annotationElements.append(SVGElement("text", attributes, text: text.content))
        }
    }

    /// The mark with a `<title>` child (a browser shows it as a tooltip) when tooltips are on.
    func withTooltip(_ element: SVGElement, record index: Int) -> SVGElement {
        guard tooltipsForDiscreteMarks else { return element }
        var copy = element
        copy.children.append(.element(SVGElement("title", text: tooltip(for: index))))
        return copy
    }

    /// "Label: value" from the mark's accessibility modifiers, or its values with their labels.
    func tooltip(for index: Int) -> String {
        let record = resolution.records[index]
        if record.extras >= 0 {
            let extras = resolution.table.extras[Int(record.extras)]
            switch (extras.accessibilityLabel, extras.accessibilityValue) {
            case (let label?, let value?): return "\(label): \(value)"
            case (let label?, nil): return label
            case (nil, let value?): return value
            case (nil, nil): break
            }
        }
        let template = resolution.table.templates[Int(record.template)]
        var parts: [String] = []
        let keys = resolution.table.keys.values
        for key in [record.color, record.symbol, record.position, record.series] where key >= 0 {
            let entry = keys[Int(key)]
            let part = "\(entry.label): \(ChartResolution.name(of: entry.value))"
            if !parts.contains(part) { parts.append(part) }
        }
        let horizontal = resolution.horizontal[Int(record.template)]
        let stackedX = resolution.valueIsRange[Int(record.template)] && horizontal
        let stackedY = resolution.valueIsRange[Int(record.template)] && !horizontal
        if template.hasX && template.kind != .sector {
            parts.append("\(template.xLabel): \(valueText(record, isX: true, stacked: stackedX))")
        }
        if template.hasY {
            parts.append("\(template.yLabel): \(valueText(record, isX: false, stacked: stackedY))")
        }
        if template.kind == .sector {
            parts.append("\(template.xLabel): \(valueFormat(isX: false).format(record.x0))")
        }
        return parts.joined(separator: ", ")
    }

    /// A mark's value on one channel as text: a stacked value is its own size, a range is "a – b".
    func valueText(_ record: MarkRecord, isX: Bool, stacked: Bool) -> String {
        let type = isX ? record.xType : record.yType
        let a = isX ? record.x0 : record.y0
        let b = isX ? record.x1 : record.y1
        let template = resolution.table.templates[Int(record.template)]
        let isRange = isX ? template.xIsRange : template.yIsRange
        if stacked { return text(of: b - a, type: type, isX: isX) }
        if isRange && b.isFinite {
            if type == .date, let unit = isX ? template.xUnit : template.yUnit {
                return text(of: a, type: type, isX: isX, unit: unit)
            }
            return "\(text(of: a, type: type, isX: isX)) – \(text(of: b, type: type, isX: isX))"
        }
        return text(of: a, type: type, isX: isX)
    }

    func text(of value: Double, type: ValueType, isX: Bool, unit: CalendarUnit? = nil) -> String {
        switch type {
        case .number: return valueFormat(isX: isX).format(value)
        case .date:
            let date = ChartDate(secondsSinceEpoch: value)
            let calendar = configuration.calendar
            switch unit {
            case .day?, .weekOfYear?: return DateFormat("yyyy-MM-dd").format(date, calendar: calendar)
            case .month?, .quarter?: return DateFormat("MMM yyyy").format(date, calendar: calendar)
            case .year?: return DateFormat.year.format(date, calendar: calendar)
            default:
                let c = calendar.components(of: date)
                return (c.second == 0 ? DateFormat.iso : DateFormat.isoSeconds).format(date, calendar: calendar)
            }
        case .category:
            let names = isX ? resolution.table.xCategories.values : resolution.table.yCategories.values
            let i = Int(value)
            return i >= 0 && i < names.count ? names[i] : "–"
        case .missing, .none: return "–"
        }
    }

    /// The number format of an axis: the one its `AxisMarks` give labels, or plain numbers.
    func valueFormat(isX: Bool) -> ValueFormat {
        let axis = isX ? configuration.x : configuration.y
        for marks in axis.marks {
            if case .number(let format) = marks.label { return format }
            if marks.content != nil {
                let sample = marks.parts(for: AxisValue(index: 0, count: 1, value: .number(0)))
                if case .number(let format)? = sample.label?.content { return format }
            }
        }
        return .number
    }
}
