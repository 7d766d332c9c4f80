/// A rectangle: a heatmap cell at nominal `x` and `y`, or a highlighted range such as an outage.
public struct RectangleMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var extent = MarkExtent()
    @usableFromInline var style = MarkStyle()

    /// A cell centred on `x`, `y`: a whole band on nominal axes, or `width` by `height` pixels.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, width: MarkDimension = .automatic,
        height: MarkDimension = .automatic
    ) {
        extent.x = x.input
        extent.y = y.input
        style.width = width
        style.height = height
    }

    /// A rectangle between two values on both axes.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        xStart: PlottableValue<X>, xEnd: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>
    ) {
        extent.x = xStart.input
        extent.xEnd = xEnd.input
        extent.y = yStart.input
        extent.yEnd = yEnd.input
    }

    /// A band over the whole height of the plot from `xStart` to `xEnd`, such as a highlighted time range.
    @inlinable
    public init<X: Plottable>(xStart: PlottableValue<X>, xEnd: PlottableValue<X>) {
        extent.x = xStart.input
        extent.xEnd = xEnd.input
    }

    /// A band over the whole width of the plot from `yStart` to `yEnd`, such as a normal operating range.
    @inlinable
    public init<Y: Plottable>(yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>) {
        extent.y = yStart.input
        extent.yEnd = yEnd.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .rectangle, extent: extent, style: style)
    }
}
