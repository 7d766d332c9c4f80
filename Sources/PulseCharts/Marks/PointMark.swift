/// A symbol at a point, for scatter plots and for highlighting values.
public struct PointMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var x: ChannelInput
    @usableFromInline var y: ChannelInput

    /// A point at `x`, `y`.
    @inlinable
    public init<X: Plottable, Y: Plottable>(x: PlottableValue<X>, y: PlottableValue<Y>) {
        self.x = x.input
        self.y = y.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .point, x: x, y: y)
    }
}
