/// A straight line across the plot: horizontal at a `y` (a threshold, an average) or vertical at an `x`
/// (an event), or a segment between two values.
public struct RuleMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var extent = MarkExtent()

    /// A horizontal rule across the whole plot at `y`.
    @inlinable
    public init<Y: Plottable>(y: PlottableValue<Y>) {
        extent.y = y.input
    }

    /// A vertical rule across the whole plot at `x`.
    @inlinable
    public init<X: Plottable>(x: PlottableValue<X>) {
        extent.x = x.input
    }

    /// A horizontal segment at `y` from `xStart` to `xEnd`.
    @inlinable
    public init<X: Plottable, Y: Plottable>(xStart: PlottableValue<X>, xEnd: PlottableValue<X>, y: PlottableValue<Y>) {
        extent.x = xStart.input
        extent.xEnd = xEnd.input
        extent.y = y.input
    }

    /// A vertical segment at `x` from `yStart` to `yEnd`.
    @inlinable
    public init<X: Plottable, Y: Plottable>(x: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>) {
        extent.x = x.input
        extent.y = yStart.input
        extent.yEnd = yEnd.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .rule, extent: extent)
    }
}
