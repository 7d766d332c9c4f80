/// The area between a line and zero, or between a lower and an upper value (a band).
///
/// Areas of several series stack by default, positive values up and negative values down, so download drawn
/// above zero and upload drawn below it mirror each other.
public struct AreaMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var x: ChannelInput
    @usableFromInline var y: ChannelInput
    @usableFromInline var yEnd: ChannelInput?
    @usableFromInline var series: ChannelInput?
    @usableFromInline var stacking: MarkStackingMethod?

    /// A point of an area from zero to `y`.
    @inlinable
    public init<X: Plottable, Y: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, stacking: MarkStackingMethod = .standard
    ) {
        self.x = x.input
        self.y = y.input
        self.stacking = stacking
    }

    /// A point of the area named by `series`.
    @inlinable
    public init<X: Plottable, Y: Plottable, S: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, series: PlottableValue<S>,
        stacking: MarkStackingMethod = .standard
    ) {
        self.x = x.input
        self.y = y.input
        self.series = series.input
        self.stacking = stacking
    }

    /// A point of a band from `yStart` to `yEnd`, such as minimum to maximum.
    @inlinable
    public init<X: Plottable, Y: Plottable>(x: PlottableValue<X>, yStart: PlottableValue<Y>, yEnd: PlottableValue<Y>) {
        self.x = x.input
        self.y = yStart.input
        self.yEnd = yEnd.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        var style = MarkStyle()
        style.stacking = stacking
        collector.table.append(keys: _keys, kind: .area, x: x, y: y, yEnd: yEnd, series: series, style: style)
    }
}
