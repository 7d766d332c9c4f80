/// All marks of a chart, collected from its content.
@usableFromInline
struct MarkTable: Sendable {
    @usableFromInline var records: [MarkRecord] = []
    var segments: [PlotSegment] = []

    @usableFromInline
    var position: TablePosition {
        TablePosition(records: records.count, segments: segments.count)
    }
    var templates: [MarkTemplate] = []
    var xCategories = Interner<String>()
    var yCategories = Interner<String>()
    var keys = Interner<SeriesKey>()
    var extras: [MarkExtras] = []
    private var lastTemplate: Int32 = -1

    mutating func intern(_ template: MarkTemplate) -> Int32 {
        if lastTemplate >= 0 && templates[Int(lastTemplate)] == template {
            return lastTemplate
        }
        if let found = templates.firstIndex(of: template) {
            lastTemplate = Int32(found)
        } else {
            templates.append(template)
            lastTemplate = Int32(templates.count - 1)
        }
        return lastTemplate
    }

    @inline(__always)
    private mutating func encode(_ input: ChannelInput?, x: Bool) -> (Double, ValueType) {
        guard let input else { return (.nan, .none) }
        return encode(primitive: input.primitive, x: x)
    }

    @inline(__always)
    private mutating func encode(primitive: PlottablePrimitive, x: Bool) -> (Double, ValueType) {
        switch primitive {
        case .number(let value): return (value, .number)
        case .date(let date): return (date.secondsSinceEpoch, .date)
        case .category(let name):
            let index = x ? xCategories.intern(name) : yCategories.intern(name)
            return (Double(index), .category)
        case .missing: return (.nan, .missing)
        }
    }

    /// What the last unstyled mark's template was made from: most charts append the same kind of mark with the
    /// same labels thousands of times, and comparing these few fields is much cheaper than building a template.
    private struct PlainSignature {
        var kind: MarkKind
        var flags: UInt8
        var xLabel: String
        var yLabel: String
        var xUnit: CalendarUnit?
        var yUnit: CalendarUnit?
        var template: Int32
    }

    private var lastPlain: PlainSignature?

    /// Adds one mark. A channel given as a range passes both ends; a single value passes only the start.
    /// `style` is nil for marks that have no direct styling of their own.
    @usableFromInline
    mutating func append(
        keys markKeys: MarkKeys, kind: MarkKind, x: ChannelInput?, xEnd: ChannelInput? = nil, y: ChannelInput?,
        yEnd: ChannelInput? = nil, series: ChannelInput? = nil, style: MarkStyle? = nil
    ) {
        let flags: UInt8 = (x != nil ? 1 : 0) | (y != nil ? 2 : 0) | (xEnd != nil ? 4 : 0) | (yEnd != nil ? 8 : 0)
        let templateIndex: Int32
        if style == nil, let last = lastPlain, last.kind == kind, last.flags == flags, last.xUnit == x?.unit,
            last.yUnit == y?.unit, last.xLabel == (x?.label ?? ""), last.yLabel == (y?.label ?? "")
        {
            templateIndex = last.template
        } else {
            var template = MarkTemplate(kind: kind)
            template.xLabel = x?.label ?? ""
            template.yLabel = y?.label ?? ""
            template.xUnit = x?.unit
            template.yUnit = y?.unit
            template.hasX = x != nil
            template.hasY = y != nil
            template.xIsRange = xEnd != nil
            template.yIsRange = yEnd != nil
            template.style = style ?? MarkStyle()
            templateIndex = intern(template)
            if style == nil {
                lastPlain = PlainSignature(
                    kind: kind, flags: flags, xLabel: template.xLabel, yLabel: template.yLabel, xUnit: template.xUnit,
                    yUnit: template.yUnit, template: templateIndex)
            }
        }
        let (x0, xType0) = encode(x, x: true)
        let (x1, xType1) = encode(xEnd, x: true)
        let (y0, yType0) = encode(y, x: false)
        let (y1, yType1) = encode(yEnd, x: false)
        var record = MarkRecord(
            template: templateIndex,
            xType: xType0 == .missing || xType0 == .none ? (xType1 == .none ? xType0 : xType1) : xType0,
            yType: yType0 == .missing || yType0 == .none ? (yType1 == .none ? yType0 : yType1) : yType0,
            x0: x0, x1: x1, y0: y0, y1: y1)
        if let series {
            record.series = keys.intern(SeriesKey(label: series.label, value: series.primitive))
        }
        if let key = markKeys.color { record.color = keys.intern(key) }
        if let key = markKeys.symbol { record.symbol = keys.intern(key) }
        if let key = markKeys.position { record.position = keys.intern(key) }
        records.append(record)
    }

    /// Adds a bar, rectangle or rule.
    @inlinable
    mutating func append(keys: MarkKeys, kind: MarkKind, extent: MarkExtent, style: MarkStyle? = nil) {
        append(keys: keys, kind: kind, x: extent.x, xEnd: extent.xEnd, y: extent.y, yEnd: extent.yEnd, style: style)
    }

    // MARK: Vectorized plots

    /// The template for a plot's rows, interned once per plot rather than once per row.
    @usableFromInline
    mutating func plotTemplate(
        kind: MarkKind, xLabel: String, xUnit: CalendarUnit?, yLabel: String, yUnit: CalendarUnit?, yIsRange: Bool,
        style: MarkStyle
    ) -> Int32 {
        var template = MarkTemplate(kind: kind)
        template.xLabel = xLabel
        template.yLabel = yLabel
        template.xUnit = xUnit
        template.yUnit = yUnit
        template.hasX = true
        template.hasY = true
        template.yIsRange = yIsRange
        template.style = style
        return intern(template)
    }

    /// The template for a plot of two columns, from their labels and units.
    @inlinable
    mutating func plotTemplate<X: Plottable, Y: Plottable>(
        kind: MarkKind, x: PlottableColumn<X>, y: PlottableColumn<Y>, yIsRange: Bool = false,
        style: MarkStyle = MarkStyle()
    ) -> Int32 {
        plotTemplate(
            kind: kind, xLabel: x.label, xUnit: x.unit, yLabel: y.label, yUnit: y.unit, yIsRange: yIsRange,
            style: style)
    }

    @usableFromInline
    mutating func intern(key: SeriesKey?) -> Int32 {
        guard let key else { return -1 }
        return keys.intern(key)
    }

    /// Adds one row of a vectorized plot.
    @usableFromInline
    mutating func appendRow(
        template: Int32, x: PlottablePrimitive, y: PlottablePrimitive, color: Int32, symbol: Int32, series: Int32
    ) {
        let (x0, xType) = encode(primitive: x, x: true)
        let (y0, yType) = encode(primitive: y, x: false)
        var record = MarkRecord(template: template, xType: xType, yType: yType, x0: x0, x1: .nan, y0: y0, y1: .nan)
        record.color = color
        record.symbol = symbol
        record.series = series
        records.append(record)
    }

    /// Adds the rows of a vectorized plot whose columns are numbers or dates. This is the path long time series
    /// take when each point is a mark of its own (areas, points).
    @usableFromInline
    mutating func appendRows(
        template: Int32, xs: PlotColumn, ys: PlotColumn, color: Int32, symbol: Int32, series: Int32
    ) {
        let count = min(xs.count, ys.count)
        let needed = records.count + count
        if records.capacity < needed {
            // Plots usually come one per series, several in a row. Room for three more series of this length
            // saves copying a large array as it grows; pages that are never written cost no memory.
            records.reserveCapacity(max(needed + 3 * count, records.capacity * 2))
        }
        let xType = xs.type
        let yType = ys.type
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                records.append(
                    contentsOf: (0..<count).lazy.map { i in
                        let x = xs[i]
                        let y = ys[i]
                        var record = MarkRecord(
                            template: template, xType: x.isNaN ? .missing : xType, yType: y.isNaN ? .missing : yType,
                            x0: x, x1: .nan, y0: y, y1: .nan)
                        record.color = color
                        record.symbol = symbol
                        record.series = series
                        return record
                    })
            }
        }
    }

    /// Adds the rows of a vectorized plot whose every row is a mark of its own (areas, points): from the columns
    /// at once where both are numbers or dates, else one row at a time.
    @inlinable
    mutating func appendRows<X: Plottable, Y: Plottable>(
        template: Int32, x: PlottableColumn<X>, y: PlottableColumn<Y>, color: Int32, symbol: Int32, series: Int32
    ) {
        if let xs = x.plotColumn, let ys = y.plotColumn {
            appendRows(template: template, xs: xs, ys: ys, color: color, symbol: symbol, series: series)
        } else {
            appendEachRow(template: template, x: x, y: y, color: color, symbol: symbol, series: series)
        }
    }

    /// Adds the rows of a vectorized plot one at a time: the path for columns that hold categories, which are
    /// interned in order of appearance. A longer column's extra values are ignored.
    @inlinable
    mutating func appendEachRow<X: Plottable, Y: Plottable>(
        template: Int32, x: PlottableColumn<X>, y: PlottableColumn<Y>, color: Int32, symbol: Int32, series: Int32
    ) {
        let count = min(x.values.count, y.values.count)
        for i in 0..<count {
            appendRow(
                template: template, x: x.values[i].primitivePlottable, y: y.values[i].primitivePlottable,
                color: color, symbol: symbol, series: series)
        }
    }

    /// Adds a vectorized line whose columns are numbers or dates as one segment.
    @usableFromInline
    mutating func appendSegment(
        template: Int32, xs: PlotColumn, ys: PlotColumn, color: Int32, symbol: Int32, series: Int32
    ) {
        segments.append(
            PlotSegment(
                template: template, color: color, symbol: symbol, series: series, xs: xs, xType: xs.type, ys: ys,
                yType: ys.type, position: records.count))
    }

    /// Adds one row of a vectorized band plot, from `y` to `yEnd`.
    @usableFromInline
    mutating func appendRangeRow(
        template: Int32, x: PlottablePrimitive, y: PlottablePrimitive, yEnd: PlottablePrimitive, color: Int32,
        series: Int32
    ) {
        let (x0, xType) = encode(primitive: x, x: true)
        let (y0, yType0) = encode(primitive: y, x: false)
        let (y1, yType1) = encode(primitive: yEnd, x: false)
        var record = MarkRecord(
            template: template, xType: xType, yType: yType0 == .missing ? yType1 : yType0, x0: x0, x1: .nan, y0: y0,
            y1: y1)
        record.color = color
        record.series = series
        records.append(record)
    }

    /// Applies a modifier to the marks from `start` on, where the mark does not already set the same property
    /// (so a modifier written closer to a mark wins, as in SwiftUI).
    @usableFromInline
    mutating func apply(_ modifier: MarkModifier, from start: TablePosition) {
        applyToSegments(modifier, from: start.segments)
        apply(modifier, from: start.records)
    }

    /// Segments take the modifiers that style a whole series; per-point annotations and accessibility texts need
    /// marks.
    private mutating func applyToSegments(_ modifier: MarkModifier, from start: Int) {
        guard start < segments.count else { return }
        for i in start..<segments.count {
            switch modifier {
            case .foregroundBy(let key): if segments[i].color < 0 { segments[i].color = keys.intern(key) }
            case .symbolBy(let key): if segments[i].symbol < 0 { segments[i].symbol = keys.intern(key) }
            case .style(let update):
                var template = templates[Int(segments[i].template)]
                update.apply(to: &template.style)
                segments[i].template = intern(template)
            case .positionBy, .annotation, .accessibilityLabel, .accessibilityValue: break
            }
        }
    }

    mutating func apply(_ modifier: MarkModifier, from start: Int) {
        guard start < records.count else { return }
        switch modifier {
        case .foregroundBy(let key):
            let index = keys.intern(key)
            for i in start..<records.count where records[i].color < 0 { records[i].color = index }
        case .symbolBy(let key):
            let index = keys.intern(key)
            for i in start..<records.count where records[i].symbol < 0 { records[i].symbol = index }
        case .positionBy(let key):
            let index = keys.intern(key)
            for i in start..<records.count where records[i].position < 0 { records[i].position = index }
        case .annotation(let annotation):
            for i in start..<records.count {
                extrasIndex(for: i).map { extras[$0].annotations.append(annotation) }
            }
        case .accessibilityLabel(let label):
            for i in start..<records.count {
                if let e = extrasIndex(for: i), extras[e].accessibilityLabel == nil {
                    extras[e].accessibilityLabel = label
                }
            }
        case .accessibilityValue(let value):
            for i in start..<records.count {
                if let e = extrasIndex(for: i), extras[e].accessibilityValue == nil {
                    extras[e].accessibilityValue = value
                }
            }
        case .style(let update):
            var remap: (from: Int32, to: Int32) = (-1, -1)
            for i in start..<records.count {
                let old = records[i].template
                if old != remap.from {
                    var template = templates[Int(old)]
                    update.apply(to: &template.style)
                    remap = (old, intern(template))
                }
                records[i].template = remap.to
            }
        }
    }

    private mutating func extrasIndex(for record: Int) -> Int? {
        if records[record].extras < 0 {
            extras.append(MarkExtras())
            records[record].extras = Int32(extras.count - 1)
        }
        return Int(records[record].extras)
    }
}
