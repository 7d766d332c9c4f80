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
        let template = collector.table.plotTemplate(
            kind: .point, xLabel: x.label, xUnit: x.unit, yLabel: y.label, yUnit: y.unit, yIsRange: false,
            style: MarkStyle())
        let color = collector.table.intern(key: _keys.color)
        let symbol = collector.table.intern(key: _keys.symbol)
        if let xs = x.plotColumn, let ys = y.plotColumn {
            collector.table.appendRows(
                template: template, xs: xs, ys: ys, color: color, symbol: symbol, series: -1)
            return
        }
        let count = min(x.values.count, y.values.count)
        for i in 0..<count {
            collector.table.appendRow(
                template: template, x: x.values[i].primitivePlottable, y: y.values[i].primitivePlottable,
                color: color, symbol: symbol, series: -1)
        }
    }
}

extension PointPlot: Sendable where X: Sendable, Y: Sendable {}
