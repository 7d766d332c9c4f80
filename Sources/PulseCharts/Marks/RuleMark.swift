/// A straight line across the plot: horizontal at a `y` (a threshold, an average) or vertical at an `x`
/// (an event), or a segment between two values.
public struct RuleMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var x: ChannelInput?
    @usableFromInline var xEnd: ChannelInput?
    @usableFromInline var y: ChannelInput?
    @usableFromInline var yEnd: ChannelInput?

    /// A horizontal rule across the whole plot at `y`.
    @inlinable
    public init<Y: Plottable>(y: PlottableValue<Y>) {
        self.y = y.input
    }

    /// A vertical rule across the whole plot at `x`.
    @inlinable
    public init<X: Plottable>(x: PlottableValue<X>) {
        self.x = x.input
    }

    /// A horizontal segment at `y` from `xStart` to `xEnd`.
    @inlinable
    public init<X: Plottable, Y: Plottable>(xStart: PlottableValue<X>, xEnd: PlottableValue<X>, y: PlottableValue<Y>) {
        self.x = xStart.input
        self.xEnd = xEnd.input
        self.y = y.input
    }

    /// A vertical segment at `x` from `yStart` to `yEnd`.
    @inlinable
    public init<X: Plottable, Y: Plottable>(x: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>) {
        self.x = x.input
        self.y = yStart.input
        self.yEnd = yEnd.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .rule, x: x, xEnd: xEnd, y: y, yEnd: yEnd)
    }
}
