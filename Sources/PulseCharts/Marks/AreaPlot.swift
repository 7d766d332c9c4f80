/// A whole area from columns of values: the vectorized form of `AreaMark` for long series.
///
/// Areas from `AreaPlot` stack with each other and with `AreaMark`s at equal x values, as `AreaMark`s do.
public struct AreaPlot<X: Plottable, Y: Plottable>: ChartMark {
    public var _keys = MarkKeys()
    @usableFromInline var x: PlottableColumn<X>
    @usableFromInline var y: PlottableColumn<Y>
    @usableFromInline var yEnd: PlottableColumn<Y>?
    @usableFromInline var stacking: MarkStackingMethod

    /// An area from zero (or the stack below) to `y[i]` at each `x[i]`.
    @inlinable
    public init(x: PlottableColumn<X>, y: PlottableColumn<Y>, stacking: MarkStackingMethod = .standard) {
        self.x = x
        self.y = y
        self.stacking = stacking
    }

    /// A band from `yStart[i]` to `yEnd[i]` at each `x[i]`, such as minimum to maximum.
    @inlinable
    public init(x: PlottableColumn<X>, yStart: PlottableColumn<Y>, yEnd: PlottableColumn<Y>) {
        self.x = x
        self.y = yStart
        self.yEnd = yEnd
        self.stacking = .unstacked
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        var style = MarkStyle()
        style.stacking = stacking
        let template = collector.table.plotTemplate(kind: .area, x: x, y: y, yIsRange: yEnd != nil, style: style)
        let color = collector.table.intern(key: _keys.color)
        if let yEnd {
            let count = min(x.values.count, y.values.count, yEnd.values.count)
            for i in 0..<count {
                collector.table.appendRangeRow(
                    template: template, x: x.values[i].primitivePlottable, y: y.values[i].primitivePlottable,
                    yEnd: yEnd.values[i].primitivePlottable, color: color, series: -1)
            }
        } else {
            collector.table.appendRows(template: template, x: x, y: y, color: color, symbol: -1, series: -1)
        }
    }
}

extension AreaPlot: Sendable where X: Sendable, Y: Sendable {}
