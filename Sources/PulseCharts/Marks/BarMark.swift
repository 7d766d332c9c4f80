/// A bar. It is vertical when x is nominal or temporal and y quantitative, horizontal when y is nominal and x
/// quantitative. Bars at the same position stack by default; `position(by:)` places them side by side instead.
public struct BarMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var extent = MarkExtent()
    @usableFromInline var style = MarkStyle()

    /// A bar at `x` reaching from zero (or the stack below it) to `y`, or a horizontal bar when `y` is nominal.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, width: MarkDimension = .automatic,
        height: MarkDimension = .automatic, stacking: MarkStackingMethod = .standard
    ) {
        extent.x = x.input
        extent.y = y.input
        style.width = width
        style.height = height
        style.stacking = stacking
    }

    /// A vertical bar spanning `yStart` to `yEnd`, for ranges.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>, width: MarkDimension = .automatic
    ) {
        extent.x = x.input
        extent.y = yStart.input
        extent.yEnd = yEnd.input
        style.width = width
    }

    /// A horizontal bar spanning `xStart` to `xEnd`, for ranges and timelines.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        xStart: PlottableValue<X>, xEnd: PlottableValue<X>, y: PlottableValue<Y>, height: MarkDimension = .automatic
    ) {
        extent.x = xStart.input
        extent.xEnd = xEnd.input
        extent.y = y.input
        style.height = height
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .bar, extent: extent, style: style)
    }
}
