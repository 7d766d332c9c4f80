/// The legend's entries and where each goes, derived from the resolved colour and symbol scales.
struct LegendPlan: Sendable {
    enum Swatch: Sendable {
        case line, square, symbol
    }

    struct Item: Sendable {
        var name: String
        var color: Color?
        var slot: Int?
        var symbol: ChartSymbol?
        var swatch: Swatch
        var width: Double
        var x = 0.0
        var y = 0.0
    }

    struct Ramp: Sendable {
        var label: String
        var lower: String
        var upper: String
        var colors: [Color]
        var width: Double
        var x = 0.0
        var y = 0.0
    }

    var items: [Item] = []
    var continuous: Ramp?
    var fontSize = 11.0

    static let swatchSize = 10.0
    static let rampLength = 100.0

    var lineHeight: Double { TextMetrics.lineHeight(fontSize: fontSize) + 3 }

    /// The width of the widest entry, for a legend in a column.
    var columnWidth: Double {
        max(items.map { $0.width }.max() ?? 0, continuous?.width ?? 0)
    }

    init() {}

    init(resolution: ChartResolution, fontSize: Double) {
        self.fontSize = fontSize
        let templates = resolution.table.templates
        let colorTemplates = resolution.stats.colorTemplates
        let colorKinds = Set(templates.indices.filter { colorTemplates[$0] }.map { templates[$0].kind })
        let swatch: Swatch
        if colorKinds.contains(.line) {
            swatch = .line
        } else if colorKinds.isEmpty || colorKinds == [.point] || colorKinds == [.rule] {
            swatch = colorKinds.contains(.rule) ? .line : .symbol
        } else {
            swatch = .square
        }
        let symbols = resolution.symbols
        let colorScale = resolution.color
        // Colour and symbol by the same data make one legend: each entry shows its colour and its symbol.
        let mergeSymbols =
            !symbols.entries.isEmpty && symbols.label == colorScale.label
            && Set(symbols.entries.map { $0.name }) == Set(colorScale.entries.map { $0.name })
            && symbols.entries.count == colorScale.entries.count
        func width(_ name: String) -> Double {
            LegendPlan.swatchSize * (swatch == .line ? 1.8 : 1) + 5 + TextMetrics.width(name, fontSize: fontSize) + 14
        }
        switch colorScale.mode {
        case .categorical:
            for entry in colorScale.entries {
                items.append(
                    Item(
                        name: entry.name, color: entry.color, slot: entry.slot,
                        symbol: mergeSymbols ? symbols.entries.first { $0.name == entry.name }?.symbol : nil,
                        swatch: mergeSymbols && swatch != .line ? .symbol : swatch, width: width(entry.name)))
            }
        case .continuous:
            let format = ValueFormat.number
            let lower = format.format(colorScale.lower)
            let upper = format.format(colorScale.upper)
            let label = colorScale.label
            let total =
                TextMetrics.width(label, fontSize: fontSize) + 8 + TextMetrics.width(lower, fontSize: fontSize)
                + 4 + LegendPlan.rampLength + 4 + TextMetrics.width(upper, fontSize: fontSize) + 14
            continuous = Ramp(label: label, lower: lower, upper: upper, colors: colorScale.ramp, width: total)
        case .none:
            break
        }
        if !mergeSymbols {
            for entry in symbols.entries {
                items.append(
                    Item(
                        name: entry.name, color: nil, slot: nil, symbol: entry.symbol, swatch: .symbol,
                        width: LegendPlan.swatchSize + 5 + TextMetrics.width(entry.name, fontSize: fontSize) + 14))
            }
        }
    }

    /// Shortens entries wider than `width` so that none sticks out of the chart.
    private mutating func fit(width: Double) {
        for i in items.indices where items[i].width > width {
            let swatch = items[i].width - TextMetrics.width(items[i].name, fontSize: fontSize)
            items[i].name = TextMetrics.truncate(items[i].name, toWidth: max(width - swatch, 0), fontSize: fontSize)
            items[i].width = swatch + TextMetrics.width(items[i].name, fontSize: fontSize)
        }
    }

    /// Places entries left to right, wrapping into rows within `width`; returns the height used.
    mutating func layoutRows(width: Double) -> Double {
        fit(width: width)
        var x = 0.0
        var y = 0.0
        if continuous != nil {
            continuous?.x = 0
            continuous?.y = 0
            y += lineHeight
        }
        for i in items.indices {
            if x > 0 && x + items[i].width > width {
                x = 0
                y += lineHeight
            }
            items[i].x = x
            items[i].y = y
            x += items[i].width
        }
        if !items.isEmpty { y += lineHeight }
        return y
    }

    /// Places entries in one column.
    mutating func layoutColumn(width: Double) {
        fit(width: width)
        var y = 0.0
        if continuous != nil {
            continuous?.y = 0
            y += lineHeight
        }
        for i in items.indices {
            items[i].x = 0
            items[i].y = y
            y += lineHeight
        }
    }
}
