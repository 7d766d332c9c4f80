/// One axis worked out for a plot size: the values it marks, where they are, and the parts drawn at each.
struct AxisPlan: Sendable {
    struct Mark: Sendable {
        var value: Double
        var pixel: Double
        var parts: AxisMarkContent
        var label: String?
    }

    var isX: Bool
    /// `.bottom` or `.top` for x, `.leading` or `.trailing` for y.
    var side: AxisMarkPosition
    var marks: [Mark]
    var fontSize: Double

    /// The widest label, for the y gutter.
    var maxLabelWidth: Double {
        marks.compactMap { $0.label }.map { TextMetrics.width($0, fontSize: fontSize) }.max() ?? 0
    }

    var hasLabels: Bool { marks.contains { $0.label != nil } }

    var tickLength: Double { marks.compactMap { $0.parts.tick?.length }.max() ?? 0 }

    /// How far the x labels reach to the left and right of the frame once clamped inside it, and whether
    /// neighbours keep a gap. Used to choose a stride whose labels never overlap or get cut.
    static func labelsFit(
        pixels: [Double], labels: [String?], isX: Bool, fontSize: Double, frameMin: Double, frameMax: Double
    ) -> Bool {
        var previousEnd = -Double.infinity
        let order = pixels.indices.sorted { pixels[$0] < pixels[$1] }
        for i in order {
            guard let label = labels[i] else { continue }
            let extent = AxisPlan.extent(
                of: label, at: pixels[i], isX: isX, fontSize: fontSize, frameMin: frameMin, frameMax: frameMax)
            let gap = isX ? fontSize * 0.6 : 2
            if extent.lower < previousEnd + gap { return false }
            previousEnd = extent.upper
        }
        return true
    }

    /// The span a label covers along its axis, shifted inside the frame when it would stick out.
    static func extent(
        of label: String, at pixel: Double, isX: Bool, fontSize: Double, frameMin: Double, frameMax: Double
    ) -> (lower: Double, upper: Double) {
        let size = isX ? TextMetrics.width(label, fontSize: fontSize) : TextMetrics.lineHeight(fontSize: fontSize)
        var lower = pixel - size / 2
        var upper = pixel + size / 2
        if lower < frameMin {
            upper += frameMin - lower
            lower = frameMin
        }
        if upper > frameMax {
            lower -= upper - frameMax
            upper = frameMax
        }
        return (lower, upper)
    }
}

/// Chooses axis values and labels for a resolved scale.
struct AxisPlanner {
    var scale: PositionScale
    var isX: Bool
    var calendar: ChartCalendar
    var fontSize: Double
    /// The frame's extent along the axis, labels must stay inside it.
    var frameMin: Double
    var frameMax: Double

    func plan(_ marks: AxisMarks, side: AxisMarkPosition) -> AxisPlan {
        let length = abs(scale.rangeEnd - scale.rangeStart)
        var desired: Int
        switch marks.values.storage {
        case .automatic(let count): desired = count ?? max(2, Int(length / (isX ? 75 : 36)))
        default: desired = 0
        }
        desired = max(desired, 1)
        var planner = self
        planner.tickUnit = AxisPlanner.tickUnit(for: marks, lower: lower, upper: upper)
        return planner.plan(marks, side: side, desired: desired)
    }

    /// Ticks are round numbers in the unit the labels are written in: multiples of a MiB for IEC formats, so
    /// labels read 16 MiB/s rather than 15.2588 MiB/s.
    var tickUnit = 1.0

    static func tickUnit(for marks: AxisMarks, lower: Double, upper: Double) -> Double {
        var format: ValueFormat?
        if case .number(let f) = marks.label { format = f }
        if format == nil, marks.content != nil,
            case .number(let f)? = marks.parts(for: AxisValue(index: 0, count: 1, value: .number(0))).label?.content
        {
            format = f
        }
        guard let format, case .prefixed(_, let base, let prefixes) = format.style, base != 1000 else { return 1 }
        let index = ValueFormat.prefixIndex(for: max(abs(lower), abs(upper)), base: base, count: prefixes.count)
        var unit = 1.0
        for _ in 0..<index { unit *= base }
        return unit
    }

    private func plan(_ marks: AxisMarks, side: AxisMarkPosition, desired: Int) -> AxisPlan {
        var candidate = firstCandidate(marks.values.storage, desired: desired)
        var attempts = 0
        while true {
            let planned = build(candidate, marks: marks)
            let fits = AxisPlan.labelsFit(
                pixels: planned.map { $0.pixel }, labels: planned.map { $0.label }, isX: isX, fontSize: fontSize,
                frameMin: frameMin, frameMax: frameMax)
            if fits {
                return AxisPlan(isX: isX, side: side, marks: planned, fontSize: fontSize)
            }
            attempts += 1
            guard attempts <= 40, let next = coarser(candidate) else {
                // Nothing coarser fits: keep the values but only the first label, which cannot collide.
                let thinned = planned.enumerated().map { index, mark in
                    var copy = mark
                    if index > 0 { copy.label = nil }
                    return copy
                }
                return AxisPlan(isX: isX, side: side, marks: thinned, fontSize: fontSize)
            }
            candidate = next
        }
    }

    /// A set of axis values: generated automatically (and coarsened until labels fit) or fixed, in which
    /// case only every `labelEvery`-th value keeps its label.
    enum Candidate {
        case linear(step: Double)
        case log(maxCount: Int)
        case time(strideIndex: Int)
        case band(every: Int)
        case fixedTime(TimeTicks.Stride, labelEvery: Int)
        case fixed([Double], labelEvery: Int)
    }

    private var lower: Double { min(scale.lower, scale.upper) }
    private var upper: Double { max(scale.lower, scale.upper) }

    private func firstCandidate(_ storage: AxisMarkValues.Storage, desired: Int) -> Candidate {
        switch storage {
        case .automatic:
            switch scale.kind {
            case .linear:
                return .linear(
                    step: NiceTicks.step(lower: lower / tickUnit, upper: upper / tickUnit, count: desired) * tickUnit)
            case .log: return .log(maxCount: max(desired, 2))
            case .time: return .time(strideIndex: TimeTicks.strideIndex(span: upper - lower, count: desired))
            case .band: return .band(every: 1)
            }
        case .numberStride(let step):
            return .fixed(NiceTicks.ticks(lower: lower, upper: upper, step: abs(step)), labelEvery: 1)
        case .calendarStride(let unit, let count):
            return .fixedTime(TimeTicks.Stride(unit: unit, count: count), labelEvery: 1)
        case .explicit(let values):
            let numbers: [Double] = values.compactMap { value in
                switch value {
                case .number(let n): return n
                case .date(let d): return d.secondsSinceEpoch
                case .category(let name): return scale.categories.firstIndex(of: name).map(Double.init)
                case .missing: return nil
                }
            }
            return .fixed(numbers, labelEvery: 1)
        }
    }

    private func coarser(_ candidate: Candidate) -> Candidate? {
        switch candidate {
        case .linear(let step):
            let next = NiceTicks.nextStep(after: step / tickUnit) * tickUnit
            return next > (upper - lower) * 4 ? nil : .linear(step: next)
        case .log(let maxCount): return maxCount <= 1 ? nil : .log(maxCount: maxCount - 1)
        case .time(let index): return index + 1 >= TimeTicks.strides.count ? nil : .time(strideIndex: index + 1)
        case .band(let every): return every > scale.categories.count ? nil : .band(every: every + 1)
        case .fixedTime(let stride, let every): return every > 1000 ? nil : .fixedTime(stride, labelEvery: every + 1)
        case .fixed(let values, let every): return every > values.count ? nil : .fixed(values, labelEvery: every + 1)
        }
    }

    private func pixel(_ value: Double) -> Double {
        scale.kind == .band ? scale.bandCenter(Int(value)) : scale.position(value)
    }

    private func primitive(_ value: Double) -> PlottablePrimitive {
        switch scale.kind {
        case .band:
            let index = Int(value)
            return index >= 0 && index < scale.categories.count ? .category(scale.categories[index]) : .missing
        case .time: return .date(ChartDate(secondsSinceEpoch: value))
        default: return .number(value)
        }
    }

    private func build(_ candidate: Candidate, marks: AxisMarks) -> [AxisPlan.Mark] {
        var values: [Double]
        var automaticLabels: [String]
        var labelEvery = 1
        switch candidate {
        case .linear(let step):
            values = NiceTicks.ticks(lower: lower, upper: upper, step: step)
            automaticLabels = ValueFormat.number.formatTicks(values)
        case .log(let maxCount):
            values = NiceTicks.logTicks(lower: lower, upper: upper, maxCount: maxCount)
            automaticLabels = values.map(ValueFormat.abbreviated.format)
        case .time(let index):
            let stride = TimeTicks.strides[index]
            values = TimeTicks.ticks(lower: lower, upper: upper, stride: stride, calendar: calendar)
            automaticLabels = TimeTicks.labels(for: values, stride: stride, calendar: calendar)
        case .band(let every):
            values = Array(0..<scale.categories.count).map(Double.init)
            automaticLabels = scale.categories
            labelEvery = every
        case .fixedTime(let stride, let every):
            values = TimeTicks.ticks(lower: lower, upper: upper, stride: stride, calendar: calendar)
            automaticLabels = TimeTicks.labels(for: values, stride: stride, calendar: calendar)
            labelEvery = every
        case .fixed(let fixed, let every):
            values = fixed.filter {
                scale.kind == .band || ($0 >= lower - 1e-9 * abs(lower) && $0 <= upper + 1e-9 * abs(upper))
            }
            switch scale.kind {
            case .band: automaticLabels = values.map { scale.categories[Int($0)] }
            case .time:
                automaticLabels = values.map {
                    DateFormat.iso.format(ChartDate(secondsSinceEpoch: $0), calendar: calendar)
                }
            case .log: automaticLabels = values.map(ValueFormat.abbreviated.format)
            case .linear: automaticLabels = ValueFormat.number.formatTicks(values)
            }
            labelEvery = every
        }
        let count = values.count
        var parts = values.enumerated().map { index, value in
            marks.parts(for: AxisValue(index: index, count: count, value: primitive(value)))
        }
        // Band axes mark categories, not boundaries: the default draws no grid line through the bars.
        if scale.kind == .band && marks.content == nil {
            for i in parts.indices { parts[i].gridLine = nil }
        }
        let numberFormats = parts.compactMap { part -> ValueFormat? in
            if case .number(let format)? = part.label?.content { return format }
            return nil
        }
        let formatted = scale.kind == .linear ? numberFormats.first.map { $0.formatTicks(values) } : nil
        return values.indices.map { i in
            var label: String?
            if let content = parts[i].label?.content, i % labelEvery == 0 {
                switch content {
                case .automatic: label = automaticLabels[i]
                case .number(let format):
                    // A number format means nothing on a time or category axis; those keep their own labels.
                    switch scale.kind {
                    case .linear: label = formatted?[i] ?? format.format(values[i])
                    case .log: label = format.format(values[i])
                    case .time, .band: label = automaticLabels[i]
                    }
                case .date(let format):
                    label = format.format(ChartDate(secondsSinceEpoch: values[i]), calendar: calendar)
                case .text(let text): label = text
                }
            }
            return AxisPlan.Mark(value: values[i], pixel: pixel(values[i]), parts: parts[i], label: label)
        }
    }
}
