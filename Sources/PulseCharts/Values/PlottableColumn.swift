/// A labelled column of values for the vectorized plots, written `.value("Rate", rates)`.
///
/// Vectorized plots (`LinePlot`, `AreaPlot`, `PointPlot`), like Swift Charts' plots of the same names, draw a
/// whole series from arrays at once. Use them for long series: they skip building one mark per point.
public struct PlottableColumn<Value: Plottable>: Sendable {
    /// The name of the data, such as "Time" or "Rate".
    public var label: String
    /// The values, one per row.
    public var values: [Value]
    /// For dates: the calendar period each value stands for.
    public var unit: CalendarUnit?

    @usableFromInline
    init(label: String, values: [Value], unit: CalendarUnit?) {
        self.label = label
        self.values = values
        self.unit = unit
    }

    /// A labelled column.
    @inlinable
    public static func value(_ label: String, _ values: [Value]) -> PlottableColumn<Value> {
        PlottableColumn(label: label, values: values, unit: nil)
    }
}

extension PlottableColumn {
    /// The column as numbers (dates as seconds, missing values as NaN) when it holds no categories; nil when it
    /// does, since categories must be interned in order of appearance.
    @inlinable
    var numbers: (values: [Double], type: ValueType)? {
        var numbers = [Double](repeating: .nan, count: values.count)
        var type = ValueType.missing
        for i in values.indices {
            switch values[i].primitivePlottable {
            case .number(let n):
                if type == .date { return nil }
                type = .number
                numbers[i] = n
            case .date(let d):
                if type == .number { return nil }
                type = .date
                numbers[i] = d.secondsSinceEpoch
            case .missing:
                break
            case .category:
                return nil
            }
        }
        return (numbers, type)
    }
}

extension PlottableColumn {
    /// The column as a plot stores it, or nil when it holds categories. Finite numbers and finite dates are kept
    /// as the caller's array, without a copy; other columns are converted as by `numbers`.
    @inlinable
    var plotColumn: PlotColumn? {
        // The casts below change nothing: each is made only when `Value` is that very type.
        if Value.self == Double.self {
            let doubles = unsafeBitCast(values, to: [Double].self)
            let column = PlotColumn(.numbers(doubles), type: doubles.isEmpty ? .missing : .number)
            if column.withUnsafeBufferPointer(PlotColumn.allFinite) { return column }
        } else if Value.self == ChartDate.self && PlotColumn.datesReadAsNumbers {
            let dates = unsafeBitCast(values, to: [ChartDate].self)
            let column = PlotColumn(.dates(dates), type: dates.isEmpty ? .missing : .date)
            if column.withUnsafeBufferPointer(PlotColumn.allFinite) { return column }
        }
        return numbers.map { PlotColumn(.numbers($0.values), type: $0.type) }
    }
}

extension PlottableColumn where Value == ChartDate {
    /// A column of dates, each standing for the calendar period that contains it.
    @inlinable
    public static func value(_ label: String, _ values: [ChartDate], unit: CalendarUnit) -> PlottableColumn<ChartDate> {
        PlottableColumn(label: label, values: values, unit: unit)
    }
}
