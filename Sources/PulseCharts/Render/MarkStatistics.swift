/// Marks of one line or area: same template and same colour, symbol and series values.
struct SeriesGroup: Sendable {
    var template: Int
    var color: Int32
    var symbol: Int32
    var series: Int32
    /// The group's marks as runs of consecutive record indexes: a plot or a series written in one loop is a
    /// single run, so no index list is built for it.
    var runs: [Range<Int>] = []
    /// Indexes of the table's plot segments drawn as part of this line.
    var segments: [Int] = []
    var count = 0
}

/// What the renderer needs to know about all marks, gathered in a single pass: the range and kinds of values on
/// each channel, the order in which series values first appear, and each colour series' extremes.
struct MarkStatistics: Sendable {
    struct Channel: Sendable {
        var sawNumber = false
        var sawDate = false
        var sawCategory = false
        var lower = Double.infinity
        var upper = -Double.infinity
        var lowestPositive = Double.infinity

        @inline(__always)
        mutating func add(_ type: ValueType, _ a: Double, _ b: Double) {
            switch type {
            case .number: sawNumber = true
            case .date: sawDate = true
            case .category:
                sawCategory = true
                return
            default: return
            }
            if a.isFinite {
                if a < lower { lower = a }
                if a > upper { upper = a }
                if a > 0 && a < lowestPositive { lowestPositive = a }
            }
            if b.isFinite {
                if b < lower { lower = b }
                if b > upper { upper = b }
                if b > 0 && b < lowestPositive { lowestPositive = b }
            }
        }
    }

    /// A colour series' smallest and largest value, and where the largest is.
    struct Series: Sendable {
        var low = Double.infinity
        var high = -Double.infinity
        var highAt = Double.nan
        var highAtType = ValueType.none
    }

    var x = Channel()
    var y = Channel()
    var colorOrder: [Int32] = []
    var symbolOrder: [Int32] = []
    var positionOrder: [Int32] = []
    /// Templates that have marks coloured by a series value.
    var colorTemplates: [Bool] = []
    /// Per key of the mark table, for keys used as colours.
    var series: [Series] = []
    /// Whether any mark has a value to draw.
    var hasData = false
    /// Marks other than lines and areas, which get a tooltip each.
    var discreteCount = 0
    /// Lines and areas, one group per drawn path, in order of first appearance.
    var groups: [SeriesGroup] = []
    var groupsOfTemplate: [[Int]] = []
    /// Indexes of the other marks, per template.
    var discreteByTemplate: [[Int32]] = []
    /// The sum of all positive sector values: the whole pie.
    var sectorTotal = 0.0
    /// Rows of plot segments, which are marks too as far as the reader is concerned.
    var markCount = 0

    /// A column's storage, valid as a key while the segments that hold the column are alive.
    private struct ColumnKey: Equatable {
        var address: UInt
        var count: Int
    }

    private struct GroupKey: Hashable {
        var template: Int32
        var color: Int32
        var symbol: Int32
        var series: Int32
    }

    init() {}

    init(
        records: [MarkRecord], segments: [PlotSegment], table: MarkTable, valueIsRange: [Bool], horizontal: [Bool]
    ) {
        let templates = table.templates
        let keyCount = table.keys.count
        let discrete = templates.map { $0.kind != .line && $0.kind != .area }
        let stackedY = templates.indices.map { valueIsRange[$0] && !horizontal[$0] }
        var seenColor = [Bool](repeating: false, count: keyCount)
        var seenSymbol = [Bool](repeating: false, count: keyCount)
        var seenPosition = [Bool](repeating: false, count: keyCount)
        colorTemplates = [Bool](repeating: false, count: templates.count)
        series = [Series](repeating: Series(), count: keyCount)
        var lastColor: Int32 = -1
        var lastColorTemplate = -1
        groupsOfTemplate = [[Int]](repeating: [], count: templates.count)
        discreteByTemplate = [[Int32]](repeating: [], count: templates.count)
        let isSector = templates.map { $0.kind == .sector }
        var groupIndex: [GroupKey: Int] = [:]
        var lastKey = GroupKey(template: -1, color: -1, symbol: -1, series: -1)
        var lastGroup = -1
        var nextSegment = 0
        var lastSegmentColor: Int32 = -1
        var xExtremes: (column: ColumnKey, low: Double, high: Double)?
        for (index, record) in records.enumerated() {
            while nextSegment < segments.count && segments[nextSegment].position <= index {
                add(
                    segment: segments[nextSegment], index: nextSegment, groupIndex: &groupIndex,
                    seenColor: &seenColor, seenSymbol: &seenSymbol, xExtremes: &xExtremes)
                lastSegmentColor = segments[nextSegment].color
                nextSegment += 1
            }
            if lastSegmentColor >= 0 {
                // A segment came between: the colour seen last is no longer the previous record's.
                lastColor = -1
                lastKey = GroupKey(template: -1, color: -1, symbol: -1, series: -1)
                lastSegmentColor = -1
            }
            let t = Int(record.template)
            if discrete[t] {
                discreteByTemplate[t].append(Int32(index))
                if isSector[t] && record.x0 > 0 && record.x0.isFinite { sectorTotal += record.x0 }
            } else {
                let key = GroupKey(
                    template: record.template, color: record.color, symbol: record.symbol,
                    series: record.series)
                if key != lastKey {
                    lastGroup = group(for: key, in: &groupIndex)
                    lastKey = key
                }
                if let last = groups[lastGroup].runs.last, last.upperBound == index {
                    groups[lastGroup].runs[groups[lastGroup].runs.count - 1] = last.lowerBound..<(index + 1)
                } else {
                    groups[lastGroup].runs.append(index..<(index + 1))
                }
                groups[lastGroup].count += 1
            }
            x.add(record.xType, record.x0, record.x1)
            y.add(record.yType, record.y0, record.y1)
            if !hasData && record.xType != .missing && record.yType != .missing
                && (record.xType != .none || record.yType != .none)
            {
                hasData = true
            }
            if discrete[t] { discreteCount += 1 }
            let color = record.color
            if color >= 0 {
                let c = Int(color)
                if color != lastColor || t != lastColorTemplate {
                    lastColor = color
                    lastColorTemplate = t
                    colorTemplates[t] = true
                    if !seenColor[c] {
                        seenColor[c] = true
                        colorOrder.append(color)
                    }
                }
                if record.yType == .number {
                    let value = stackedY[t] ? record.y1 - record.y0 : record.y0
                    if value.isFinite {
                        if value < series[c].low { series[c].low = value }
                        if value > series[c].high {
                            series[c].high = value
                            series[c].highAt = record.x0
                            series[c].highAtType = record.xType
                        }
                    }
                }
            }
            if record.symbol >= 0 && !seenSymbol[Int(record.symbol)] {
                seenSymbol[Int(record.symbol)] = true
                symbolOrder.append(record.symbol)
            }
            if record.position >= 0 && !seenPosition[Int(record.position)] {
                seenPosition[Int(record.position)] = true
                positionOrder.append(record.position)
            }
        }
        while nextSegment < segments.count {
            add(
                segment: segments[nextSegment], index: nextSegment, groupIndex: &groupIndex, seenColor: &seenColor,
                seenSymbol: &seenSymbol, xExtremes: &xExtremes)
            nextSegment += 1
        }
    }

    /// Adds a whole plot segment: its extremes come from its columns in one tight loop each.
    /// The index of the series group for `key`, made (and listed under its template) the first time.
    private mutating func group(for key: GroupKey, in groupIndex: inout [GroupKey: Int]) -> Int {
        if let found = groupIndex[key] { return found }
        let template = Int(key.template)
        groups.append(SeriesGroup(template: template, color: key.color, symbol: key.symbol, series: key.series))
        let group = groups.count - 1
        groupIndex[key] = group
        groupsOfTemplate[template].append(group)
        return group
    }

    private mutating func add(
        segment: PlotSegment, index: Int, groupIndex: inout [GroupKey: Int], seenColor: inout [Bool],
        seenSymbol: inout [Bool], xExtremes: inout (column: ColumnKey, low: Double, high: Double)?
    ) {
        let t = Int(segment.template)
        let count = segment.count
        var low = Double.infinity
        var high = -Double.infinity
        var highAt = Double.nan
        var anyPair = false
        var xLow = Double.infinity
        var xHigh = -Double.infinity
        segment.xs.withUnsafeBufferPointer { xs in
            segment.ys.withUnsafeBufferPointer { ys in
                var first = 0
                while first < count && !(xs[first].isFinite && ys[first].isFinite) { first += 1 }
                anyPair = first < count
                // Plots over the same instants share their x column: its extremes are found once.
                let column = ColumnKey(address: UInt(bitPattern: xs.baseAddress), count: count)
                if let known = xExtremes, known.column == column {
                    (xLow, xHigh) = (known.low, known.high)
                } else {
                    for i in 0..<count {
                        let xv = xs[i]
                        if xv < xLow { xLow = xv }
                        if xv > xHigh { xHigh = xv }
                    }
                    xExtremes = (column, xLow, xHigh)
                }
                var highIndex = -1
                for i in 0..<count {
                    let yv = ys[i]
                    if yv < low { low = yv }
                    if yv > high {
                        high = yv
                        highIndex = i
                    }
                }
                if highIndex >= 0 { highAt = xs[highIndex] }
            }
        }
        if anyPair { hasData = true }
        if xLow <= xHigh { x.add(segment.xType, xLow, xHigh) }
        if low <= high { y.add(segment.yType, low, high) }
        let key = GroupKey(
            template: segment.template, color: segment.color, symbol: segment.symbol,
            series: segment.series)
        let group = group(for: key, in: &groupIndex)
        groups[group].segments.append(index)
        groups[group].count += count
        if segment.color >= 0 {
            let c = Int(segment.color)
            colorTemplates[t] = true
            if !seenColor[c] {
                seenColor[c] = true
                colorOrder.append(segment.color)
            }
            if segment.yType == .number && low <= high {
                series[c].low = min(series[c].low, low)
                if high > series[c].high {
                    series[c].high = high
                    series[c].highAt = highAt
                    series[c].highAtType = segment.xType
                }
            }
        }
        if segment.symbol >= 0 && !seenSymbol[Int(segment.symbol)] {
            seenSymbol[Int(segment.symbol)] = true
            symbolOrder.append(segment.symbol)
        }
        markCount += count
    }
}
