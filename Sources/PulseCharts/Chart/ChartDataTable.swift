/// The values a chart draws, as a table: one row per mark (or per point of a plotted series), in the order they were
/// written, with the values given to the marks rather than the pixels they became. A panel exported as CSV or JSON
/// is this table, so it holds exactly what the picture shows: mirrored series keep their sign, stacked ones their
/// own values (the stacking is drawing), and a gap is a missing value.
///
/// Points that only mark a lone value of a line or area in the same colour repeat that series' value; they are
/// left out, so each value appears once.
public struct ChartDataTable: Sendable, Equatable {
    /// A cell: a number, an instant, a category's name, or nothing.
    public enum Value: Sendable, Equatable {
        case number(Double)
        case date(ChartDate)
        case text(String)
        case missing
    }

    /// The chart's title, if it has one.
    public var title: String?
    /// The column headings: the series (by the label of its colour, `Series` without one), then x and y by their
    /// channel labels, each followed by its end for ranges; `Measure`, the y channel's label, when marks plot
    /// different quantities (received and sent) on one axis, whose column is then `Value`.
    public var columns: [String]
    public var rows: [[Value]]
    /// Whether the chart stacks its series (areas on top of one another, positive values up from zero and
    /// negative ones down, in the rows' order): a value is then drawn at the sum of those before it.
    public var stacked: Bool
}

extension Chart {
    typealias DataValue = ChartDataTable.Value

    /// The values this chart draws (``ChartDataTable``).
    public func dataTable() -> ChartDataTable {
        let templates = table.templates
        let keys = table.keys.values
        // Which templates are lines or areas of a colour: points of the same colour only mark their lone values.
        var seriesDrawn = Set<Int32>()
        for segment in table.segments where [.line, .area].contains(templates[Int(segment.template)].kind) {
            seriesDrawn.insert(segment.color)
        }
        for record in table.records where [.line, .area].contains(templates[Int(record.template)].kind) {
            seriesDrawn.insert(record.color)
        }
        func shown(_ template: Int32, color: Int32) -> Bool {
            templates[Int(template)].kind != .point || !seriesDrawn.contains(color)
        }
        let used = Set(
            table.segments.filter { shown($0.template, color: $0.color) }.map(\.template)
                + table.records.filter { shown($0.template, color: $0.color) }.map(\.template)
        ).sorted().map { templates[Int($0)] }
        let first = used.first ?? MarkTemplate(kind: .line)
        let measures = Set(used.map(\.yLabel)).count > 1
        let xRange = used.contains(where: \.xIsRange)
        let yRange = used.contains(where: \.yIsRange)
        let seriesLabel = keys.first?.label ?? "Series"

        var columns = [seriesLabel, first.xLabel.isEmpty ? "x" : first.xLabel]
        if xRange { columns.append(columns[1] + " end") }
        let yName = measures ? "Value" : (first.yLabel.isEmpty ? "y" : first.yLabel)
        columns.append(yName)
        if yRange { columns.append(yName + " end") }
        if measures { columns.append("Measure") }

        func series(_ color: Int32) -> DataValue {
            guard color >= 0, Int(color) < keys.count else { return .missing }
            return Self.cell(keys[Int(color)].value)
        }
        func cell(_ number: Double, _ type: ValueType, x: Bool) -> DataValue {
            guard !number.isNaN else { return .missing }
            switch type {
            case .number: return .number(number)
            case .date: return .date(ChartDate(secondsSinceEpoch: number))
            case .category:
                let names = x ? table.xCategories.values : table.yCategories.values
                let index = Int(number)
                return index >= 0 && index < names.count ? .text(names[index]) : .missing
            case .none, .missing: return .missing
            }
        }
        func row(
            template: MarkTemplate, color: Int32, x: (Double, Double, ValueType), y: (Double, Double, ValueType)
        ) -> [DataValue] {
            var cells = [series(color), cell(x.0, x.2, x: true)]
            if xRange { cells.append(template.xIsRange ? cell(x.1, x.2, x: true) : .missing) }
            cells.append(cell(y.0, y.2, x: false))
            if yRange { cells.append(template.yIsRange ? cell(y.1, y.2, x: false) : .missing) }
            if measures { cells.append(.text(template.yLabel)) }
            return cells
        }

        // Records and whole plotted series, in the order they were written.
        var rows = [[DataValue]]()
        var segments = table.segments[...]
        func flushSegments(through position: Int) {
            while let segment = segments.first, segment.position <= position {
                segments.removeFirst()
                guard shown(segment.template, color: segment.color) else { continue }
                let template = templates[Int(segment.template)]
                segment.xs.withUnsafeBufferPointer { xs in
                    segment.ys.withUnsafeBufferPointer { ys in
                        for index in 0..<segment.count {
                            rows.append(
                                row(
                                    template: template, color: segment.color,
                                    x: (xs[index], .nan, segment.xType), y: (ys[index], .nan, segment.yType)))
                        }
                    }
                }
            }
        }
        for (index, record) in table.records.enumerated() {
            flushSegments(through: index)
            guard shown(record.template, color: record.color) else { continue }
            rows.append(
                row(
                    template: templates[Int(record.template)], color: record.color,
                    x: (record.x0, record.x1, record.xType), y: (record.y0, record.y1, record.yType)))
        }
        flushSegments(through: Int.max)
        let stacked = used.contains { $0.kind == .area && ($0.style.stacking ?? .standard) == .standard }
        return ChartDataTable(title: configuration.title, columns: columns, rows: rows, stacked: stacked)
    }

    static func cell(_ value: PlottablePrimitive) -> ChartDataTable.Value {
        switch value {
        case .number(let number): .number(number)
        case .date(let date): .date(date)
        case .category(let name): .text(name)
        case .missing: .missing
        }
    }
}
