/// A whole line from columns of values: the vectorized form of `LineMark` for long series.
///
/// ```swift
/// LinePlot(x: .value("Time", times), y: .value("Rate", rates))
///     .foregroundStyle(by: .value("Interface", "eth0"))
/// ```
/// Rows pair up by index; a longer column's extra values are ignored. A missing value (`nil`, NaN) breaks the
/// line, as with `LineMark`. Modifiers that style the whole line apply (`foregroundStyle`, `symbol`, `lineStyle`,
/// `interpolationMethod`, `opacity`); annotations and accessibility texts belong on individual `LineMark`s.
public struct LinePlot<X: Plottable, Y: Plottable>: ChartMark {
    public var _keys = MarkKeys()
    @usableFromInline var x: PlottableColumn<X>
    @usableFromInline var y: PlottableColumn<Y>
    @usableFromInline var series: SeriesKey?

    /// A line through the points (`x[i]`, `y[i]`).
    @inlinable
    public init(x: PlottableColumn<X>, y: PlottableColumn<Y>) {
        self.x = x
        self.y = y
    }

    /// A line through the points (`x[i]`, `y[i]`) that belongs to the series `series`.
    @inlinable
    public init<S: Plottable>(x: PlottableColumn<X>, y: PlottableColumn<Y>, series: PlottableValue<S>) {
        self.x = x
        self.y = y
        self.series = SeriesKey(series)
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        let template = collector.table.plotTemplate(kind: .line, x: x, y: y)
        let color = collector.table.intern(key: _keys.color)
        let symbol = collector.table.intern(key: _keys.symbol)
        let series = collector.table.intern(key: self.series)
        if let xs = x.plotColumn, let ys = y.plotColumn {
            collector.table.appendSegment(
                template: template, xs: xs, ys: ys, color: color, symbol: symbol, series: series)
        } else {
            collector.table.appendEachRow(template: template, x: x, y: y, color: color, symbol: symbol, series: series)
        }
    }
}

extension LinePlot: Sendable where X: Sendable, Y: Sendable {}
