/// A rectangle: a heatmap cell at nominal `x` and `y`, or a highlighted range such as an outage.
public struct RectangleMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var x: ChannelInput?
    @usableFromInline var xEnd: ChannelInput?
    @usableFromInline var y: ChannelInput?
    @usableFromInline var yEnd: ChannelInput?
    @usableFromInline var style = MarkStyle()

    /// A cell centred on `x`, `y`: a whole band on nominal axes, or `width` by `height` pixels.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, width: MarkDimension = .automatic,
        height: MarkDimension = .automatic
    ) {
        self.x = x.input
        self.y = y.input
        style.width = width
        style.height = height
    }

    /// A rectangle between two values on both axes.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        xStart: PlottableValue<X>, xEnd: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>
    ) {
        self.x = xStart.input
        self.xEnd = xEnd.input
        self.y = yStart.input
        self.yEnd = yEnd.input
    }

    /// A band over the whole height of the plot from `xStart` to `xEnd`, such as a highlighted time range.
    @inlinable
    public init<X: Plottable>(xStart: PlottableValue<X>, xEnd: PlottableValue<X>) {
        self.x = xStart.input
        self.xEnd = xEnd.input
    }

    /// A band over the whole width of the plot from `yStart` to `yEnd`, such as a normal operating range.
    @inlinable
    public init<Y: Plottable>(yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>) {
        self.y = yStart.input
        self.yEnd = yEnd.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .rectangle, x: x, xEnd: xEnd, y: y, yEnd: yEnd, style: style)
    }
}
