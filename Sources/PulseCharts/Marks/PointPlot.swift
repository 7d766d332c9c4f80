/// Many points from columns of values: the vectorized form of `PointMark`, for large scatter plots.
public struct PointPlot<X: Plottable, Y: Plottable>: ChartMark {
    public var _keys = MarkKeys()
    @usableFromInline var x: PlottableColumn<X>
    @usableFromInline var y: PlottableColumn<Y>

    /// A point at each (`x[i]`, `y[i]`).
    @inlinable
    public init(x: PlottableColumn<X>, y: PlottableColumn<Y>) {
        self.x = x
        self.y = y
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        let template = collector.table.plotTemplate(kind: .point, x: x, y: y)
        let color = collector.table.intern(key: _keys.color)
        let symbol = collector.table.intern(key: _keys.symbol)
        collector.table.appendRows(template: template, x: x, y: y, color: color, symbol: symbol, series: -1)
    }
}

extension PointPlot: Sendable where X: Sendable, Y: Sendable {}
