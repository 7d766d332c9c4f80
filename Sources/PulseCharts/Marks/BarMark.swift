/// A bar. It is vertical when x is nominal or temporal and y quantitative, horizontal when y is nominal and x
/// quantitative. Bars at the same position stack by default; `position(by:)` places them side by side instead.
public struct BarMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var x: ChannelInput?
    @usableFromInline var xEnd: ChannelInput?
    @usableFromInline var y: ChannelInput?
    @usableFromInline var yEnd: ChannelInput?
    @usableFromInline var style = MarkStyle()

    /// A bar at `x` reaching from zero (or the stack below it) to `y`, or a horizontal bar when `y` is nominal.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, width: MarkDimension = .automatic,
        height: MarkDimension = .automatic, stacking: MarkStackingMethod = .standard
    ) {
        self.x = x.input
        self.y = y.input
        style.width = width
        style.height = height
        style.stacking = stacking
    }

    /// A vertical bar spanning `yStart` to `yEnd`, for ranges.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>, width: MarkDimension = .automatic
    ) {
        self.x = x.input
        self.y = yStart.input
        self.yEnd = yEnd.input
        style.width = width
    }

    /// A horizontal bar spanning `xStart` to `xEnd`, for ranges and timelines.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        xStart: PlottableValue<X>, xEnd: PlottableValue<X>, y: PlottableValue<Y>, height: MarkDimension = .automatic
    ) {
        self.x = xStart.input
        self.xEnd = xEnd.input
        self.y = y.input
        style.height = height
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .bar, x: x, xEnd: xEnd, y: y, yEnd: yEnd, style: style)
    }
}
