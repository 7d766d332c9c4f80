/// A chart's marks with derived positions (calendar units expanded, stacks computed) and its scales resolved
/// from the values of all marks together.
struct ChartResolution: Sendable {
    var records: [MarkRecord]
    var table: MarkTable
    var x: PositionScale
    var y: PositionScale
    /// Per template: bars and rectangles whose value runs along x.
    var horizontal: [Bool]
    /// Per template: the value channel was turned into a range by stacking or by the zero baseline.
    var valueIsRange: [Bool]
    var color = ColorScale()
    var symbols = SymbolScale()
    /// Position keys of grouped bars in order, and each key's slot.
    var positionSlots: [Int32: Int] = [:]
    var positionCount = 0
    /// Marks that could not be drawn, for the description.
    var notes: [String] = []
    /// Facts gathered in one pass over all marks, so later steps need not walk 345,600 records again.
    var stats: MarkStatistics

    init(chart: Chart) {
        let configuration = chart.configuration
        self.table = chart.table
        self.records = chart.table.records
        self.horizontal = Array(repeating: false, count: table.templates.count)
        self.valueIsRange = Array(repeating: false, count: table.templates.count)
        self.x = .empty
        self.y = .empty
        self.stats = MarkStatistics()
        // Orientation is decided on the marks as written, before a calendar unit turns a date into a span.
        decideOrientation()
        expandCalendarUnits(calendar: configuration.calendar)
        stack()
        stats = MarkStatistics(
            records: records, segments: table.segments, table: table, valueIsRange: valueIsRange,
            horizontal: horizontal)
        stats.markCount += records.count
        x = ChartResolution.resolveScale(
            stats: stats.x, configuration: configuration.x, categories: table.xCategories.values, isX: true,
            notes: &notes)
        y = ChartResolution.resolveScale(
            stats: stats.y, configuration: configuration.y, categories: table.yCategories.values, isX: false,
            notes: &notes)
        resolveColors(configuration: configuration)
        resolveSymbols(configuration: configuration)
        resolvePositions()
    }

    // MARK: Calendar units

    /// A date with a unit stands for a whole period: bars and rectangles span it, other marks sit in its middle.
    private mutating func expandCalendarUnits(calendar: ChartCalendar) {
        let templates = table.templates
        guard templates.contains(where: { $0.xUnit != nil || $0.yUnit != nil }) else { return }
        for i in table.segments.indices {
            let template = templates[Int(table.segments[i].template)]
            if let unit = template.xUnit, table.segments[i].xType == .date {
                let middles = table.segments[i].xs.withUnsafeBufferPointer { xs in
                    xs.map { ChartResolution.middle(ofPeriod: $0, unit: unit, calendar: calendar) }
                }
                table.segments[i].xs = PlotColumn(.numbers(middles), type: table.segments[i].xs.type)
            }
        }
        for i in records.indices {
            var record = records[i]
            let template = templates[Int(record.template)]
            let spans = template.kind == .bar || template.kind == .rectangle
            if let unit = template.xUnit, record.xType == .date, !template.xIsRange {
                ChartResolution.place(&record.x0, end: &record.x1, inPeriod: unit, calendar: calendar, spans: spans)
            }
            if let unit = template.yUnit, record.yType == .date, !template.yIsRange {
                ChartResolution.place(&record.y0, end: &record.y1, inPeriod: unit, calendar: calendar, spans: spans)
            }
            records[i] = record
        }
        for (index, template) in templates.enumerated() where template.kind == .bar || template.kind == .rectangle {
            if template.xUnit != nil { table.templates[index].xIsRange = true }
            if template.yUnit != nil { table.templates[index].yIsRange = true }
        }
    }

    /// Moves a single date on one axis to its period: `start` and `end` become the period's bounds for a mark that
    /// spans it, or `start` its middle for one that does not.
    private static func place(
        _ start: inout Double, end: inout Double, inPeriod unit: CalendarUnit, calendar: ChartCalendar, spans: Bool
    ) {
        if spans {
            (start, end) = period(start, unit: unit, calendar: calendar)
        } else {
            start = middle(ofPeriod: start, unit: unit, calendar: calendar)
        }
    }

    private static func middle(ofPeriod seconds: Double, unit: CalendarUnit, calendar: ChartCalendar) -> Double {
        let (start, end) = period(seconds, unit: unit, calendar: calendar)
        return (start + end) / 2
    }

    static func period(_ seconds: Double, unit: CalendarUnit, calendar: ChartCalendar) -> (Double, Double) {
        guard seconds.isFinite else { return (.nan, .nan) }
        let start = calendar.startOf(unit, containing: ChartDate(secondsSinceEpoch: seconds))
        let end = calendar.adding(1, unit, to: start)
        return (start.secondsSinceEpoch, end.secondsSinceEpoch)
    }

    // MARK: Orientation and stacking

    private func firstTypes(of template: Int) -> (ValueType, ValueType) {
        var xType = ValueType.none
        var yType = ValueType.none
        for record in records where Int(record.template) == template {
            if xType == .none || xType == .missing { xType = record.xType }
            if yType == .none || yType == .missing { yType = record.yType }
            if xType != .missing && xType != .none && yType != .missing && yType != .none { break }
        }
        return (xType, yType)
    }

    /// Bars run along the quantitative channel: vertical when y is a number, horizontal when x is a number and y
    /// is nominal or temporal, or when only x is given as a range.
    private mutating func decideOrientation() {
        for (index, template) in table.templates.enumerated() where template.kind == .bar {
            if template.xIsRange && !template.yIsRange {
                horizontal[index] = true
            } else if template.yIsRange {
                horizontal[index] = false
            } else {
                let (xType, yType) = firstTypes(of: index)
                horizontal[index] = (yType == .category || yType == .date) && xType == .number
            }
        }
    }

    private struct StackKey: Hashable {
        var group: UInt8
        var position: Int32
        var at: Double
    }

    /// Bars and areas that share a position stack: positive values upwards from zero, negative values
    /// downwards, in the order the marks were written.
    private mutating func stack() {
        let templates = table.templates
        var stacks: [StackKey: (positive: Double, negative: Double)] = [:]
        var needsTotals = false
        var touched = false
        for (index, template) in templates.enumerated() {
            guard template.kind == .bar || template.kind == .area else { continue }
            let valueRange = horizontal[index] ? template.xIsRange : template.yIsRange
            if !valueRange {
                valueIsRange[index] = true
                touched = true
                if template.style.stacking == .normalized || template.style.stacking == .center { needsTotals = true }
            }
        }
        guard touched else { return }
        var totals: [StackKey: Double] = [:]
        if needsTotals {
            for record in records {
                let t = Int(record.template)
                guard valueIsRange[t] else { continue }
                let method = templates[t].style.stacking ?? .standard
                guard method == .normalized || method == .center else { continue }
                let (key, value) = ChartResolution.stackKey(record, kind: templates[t].kind, horizontal: horizontal[t])
                guard value.isFinite else { continue }
                totals[key, default: 0] += abs(value)
            }
        }
        for i in records.indices {
            let t = Int(records[i].template)
            guard valueIsRange[t] else { continue }
            let method = templates[t].style.stacking ?? .standard
            let (key, value) = ChartResolution.stackKey(records[i], kind: templates[t].kind, horizontal: horizontal[t])
            var low = 0.0
            var high = value
            if value.isFinite && method != .unstacked {
                var sums = stacks[key] ?? (0, 0)
                if value >= 0 || method == .center || method == .normalized {
                    low = sums.positive
                    sums.positive += abs(value)
                    high = sums.positive
                } else {
                    high = sums.negative
                    sums.negative += value
                    low = sums.negative
                }
                stacks[key] = sums
                if method == .normalized, let total = totals[key], total > 0 {
                    low /= total
                    high /= total
                } else if method == .center, let total = totals[key] {
                    low -= total / 2
                    high -= total / 2
                }
            }
            if horizontal[t] {
                records[i].x0 = low
                records[i].x1 = high
            } else {
                records[i].y0 = low
                records[i].y1 = high
            }
        }
    }

    private static func stackKey(_ record: MarkRecord, kind: MarkKind, horizontal: Bool) -> (StackKey, Double) {
        let group: UInt8 = kind == .area ? 1 : (horizontal ? 2 : 0)
        if horizontal {
            return (StackKey(group: group, position: record.position, at: record.y0), record.x0)
        }
        return (StackKey(group: group, position: kind == .area ? -1 : record.position, at: record.x0), record.y0)
    }

    // MARK: Position scales

    static func resolveScale(
        stats: MarkStatistics.Channel, configuration: AxisConfiguration, categories: [String], isX: Bool,
        notes: inout [String]
    ) -> PositionScale {
        let sawNumber = stats.sawNumber
        let sawDate = stats.sawDate
        let sawCategory = stats.sawCategory
        let lower = stats.lower
        let upper = stats.upper
        let lowestPositive = stats.lowestPositive
        var kind: PositionScale.Kind
        switch configuration.scaleType {
        case .linear: kind = .linear
        case .log: kind = .log
        case .date: kind = .time
        case .category: kind = .band
        case .automatic:
            if case .categories = configuration.domain.storage {
                kind = .band
            } else if case .dates = configuration.domain.storage {
                kind = .time
            } else if sawCategory {
                kind = .band
            } else if sawDate {
                kind = .time
            } else {
                kind = .linear
            }
        }
        if kind == .band {
            var order: [String]
            if case .categories(let names) = configuration.domain.storage {
                order = names
            } else {
                order = categories
            }
            var seen: [String: Int] = [:]
            var unique: [String] = []
            for name in order where seen[name] == nil {
                seen[name] = unique.count
                unique.append(name)
            }
            var scale = PositionScale(kind: .band, lower: 0, upper: Double(unique.count), hasDomain: !unique.isEmpty)
            scale.categories = unique
            scale.bandOfTableIndex = categories.map { seen[$0] ?? -1 }
            if sawNumber || sawDate {
                notes.append("Some \(isX ? "x" : "y") values were not categories and were left out.")
            }
            return scale
        }
        if sawCategory {
            notes.append("Some \(isX ? "x" : "y") values were categories on a continuous scale and were left out.")
        }
        var includesZero = kind == .linear
        var reversed = false
        switch configuration.domain.storage {
        case .numbers(let a, let b):
            var scale = PositionScale(kind: kind, lower: a, upper: b, hasDomain: true)
            if kind == .log && (a <= 0 || b <= 0) {
                scale.lower = max(a, 1e-12)
                scale.upper = max(b, scale.lower * 10)
            }
            return scale
        case .dates(let a, let b):
            return PositionScale(kind: .time, lower: a.secondsSinceEpoch, upper: b.secondsSinceEpoch, hasDomain: true)
        case .categories:
            return PositionScale(kind: kind, lower: 0, upper: 1, hasDomain: false)
        case .automatic(let zero, let reverse):
            if let zero { includesZero = zero && kind == .linear }
            reversed = reverse
        }
        guard lower <= upper else {
            return PositionScale(kind: kind, lower: 0, upper: 1, hasDomain: false)
        }
        var scale: PositionScale
        switch kind {
        case .log:
            guard lowestPositive.isFinite else {
                notes.append("No \(isX ? "x" : "y") value was above zero, so the log scale has nothing to show.")
                return PositionScale(kind: .log, lower: 1, upper: 10, hasDomain: false)
            }
            if lower <= 0 { notes.append("Values of zero or below cannot be drawn on a log scale and were left out.") }
            let lo = pow10(Int(magnitudeExponent(lowestPositive)))
            var hi = pow10(Int(magnitudeExponent(max(upper, lowestPositive))))
            if hi < max(upper, lowestPositive) * (1 - 1e-12) { hi *= 10 }
            if hi <= lo { hi = lo * 10 }
            scale = PositionScale(kind: .log, lower: lo, upper: hi, hasDomain: true)
        case .time:
            var lo = lower
            var hi = upper
            if lo == hi {
                lo -= 1800
                hi += 1800
            }
            scale = PositionScale(kind: .time, lower: lo, upper: hi, hasDomain: true)
        default:
            var lo = lower
            var hi = upper
            if includesZero {
                lo = min(lo, 0)
                hi = max(hi, 0)
            }
            let (niceLo, niceHi) = NiceTicks.niceDomain(lower: lo, upper: hi, count: 5)
            scale = PositionScale(kind: .linear, lower: niceLo, upper: niceHi, hasDomain: true)
        }
        if reversed { swap(&scale.lower, &scale.upper) }
        return scale
    }

    // MARK: Colours, symbols and positions

    /// Keys used on one channel, in order of first appearance.
    static func name(of value: PlottablePrimitive) -> String {
        switch value {
        case .category(let name): return name
        case .number(let n): return ValueFormat.number.format(n)
        case .date(let d): return DateFormat.iso.format(d)
        case .missing: return "–"
        }
    }

    private mutating func resolveColors(configuration: ChartConfiguration) {
        let keys = stats.colorOrder
        guard !keys.isEmpty else { return }
        let values = table.keys.values
        color.label = values[Int(keys[0])].label
        color.entryOfKey = [Int](repeating: -1, count: values.count)
        let allNumbers = keys.allSatisfy { if case .number = values[Int($0)].value { true } else { false } }
        var explicitMapping: [(String, Color)] = []
        if case .mapping(let pairs) = configuration.colorScale { explicitMapping = pairs }
        if allNumbers && explicitMapping.isEmpty {
            color.mode = .continuous
            color.numberOfKey = values.map { if case .number(let n) = $0.value { n } else { .nan } }
            var lo = Double.infinity
            var hi = -Double.infinity
            for key in keys {
                let n = color.numberOfKey[Int(key)]
                lo = min(lo, n)
                hi = max(hi, n)
            }
            color.ramp = configuration.theme.colors.sequential
            if case .numeric(let l, let u, let range) = configuration.colorScale {
                lo = l ?? lo
                hi = u ?? hi
                if range.count > 1 { color.ramp = range }
            }
            if case .range(let range) = configuration.colorScale, range.count > 1 { color.ramp = range }
            color.lower = lo
            color.upper = hi
            for key in keys { color.entryOfKey[Int(key)] = 0 }
            return
        }
        color.mode = .categorical
        var palette = configuration.theme.colors.palette
        var usesThemePalette = true
        if case .range(let range) = configuration.colorScale, !range.isEmpty {
            palette = range
            usesThemePalette = false
        }
        if palette.isEmpty { palette = [.blue] }
        let (ordered, mapped) = ChartResolution.legendOrder(of: keys, values: values, mapping: explicitMapping)
        var nextSlot = 0
        for key in ordered {
            let name = ChartResolution.name(of: values[Int(key)].value)
            if let fixed = mapped[key] {
                color.entries.append((key, name, fixed, nil))
            } else {
                let slot = nextSlot % palette.count
                color.entries.append((key, name, palette[slot], usesThemePalette ? slot : nil))
                nextSlot += 1
            }
            color.entryOfKey[Int(key)] = color.entries.count - 1
        }
    }

    private mutating func resolveSymbols(configuration: ChartConfiguration) {
        let keys = stats.symbolOrder
        guard !keys.isEmpty else { return }
        let values = table.keys.values
        symbols.label = values[Int(keys[0])].label
        symbols.entryOfKey = [Int](repeating: -1, count: values.count)
        let (ordered, mapped) = ChartResolution.legendOrder(
            of: keys, values: values, mapping: configuration.symbolMapping)
        var next = 0
        for key in ordered {
            let symbol: ChartSymbol
            if let fixed = mapped[key] {
                symbol = fixed
            } else {
                symbol = ChartSymbol.defaultOrder[next % ChartSymbol.defaultOrder.count]
                next += 1
            }
            symbols.entries.append((key, ChartResolution.name(of: values[Int(key)].value), symbol))
            symbols.entryOfKey[Int(key)] = symbols.entries.count - 1
        }
    }

    /// The order of a legend's keys: those the chart maps to a fixed colour or symbol come first, in the order of
    /// the mapping (a name that matches no key, or a key mapped already, is skipped), then the others in order of
    /// first appearance.
    private static func legendOrder<Value>(
        of keys: [Int32], values: [SeriesKey], mapping: [(String, Value)]
    ) -> (ordered: [Int32], mapped: [Int32: Value]) {
        var ordered: [Int32] = []
        var mapped: [Int32: Value] = [:]
        for (name, value) in mapping {
            if let key = keys.first(where: { ChartResolution.name(of: values[Int($0)].value) == name }),
                mapped[key] == nil
            {
                ordered.append(key)
                mapped[key] = value
            }
        }
        for key in keys where mapped[key] == nil { ordered.append(key) }
        return (ordered, mapped)
    }

    private mutating func resolvePositions() {
        let keys = stats.positionOrder
        for (slot, key) in keys.enumerated() { positionSlots[key] = slot }
        positionCount = keys.count
    }
}
