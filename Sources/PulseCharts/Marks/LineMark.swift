/// A line through points, one line per series.
///
/// Points join in order of x. Marks with the same `series`, `foregroundStyle(by:)` or `symbol(by:)` value form
/// one line; a missing value (`nil` or NaN) breaks the line. Long series are reduced to about one point per pixel
/// with Largest-Triangle-Three-Buckets, which keeps peaks.
public struct LineMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var x: ChannelInput
    @usableFromInline var y: ChannelInput
    @usableFromInline var series: ChannelInput?

    /// A point of a line.
    @inlinable
    public init<X: Plottable, Y: Plottable>(x: PlottableValue<X>, y: PlottableValue<Y>) {
        self.x = x.input
        self.y = y.input
    }

    /// A point of the line named by `series`, for several lines of the same colour.
    @inlinable
    public init<X: Plottable, Y: Plottable, S: Plottable>(
        x: PlottableValue<X>, y: PlottableValue<Y>, series: PlottableValue<S>
    ) {
        self.x = x.input
        self.y = y.input
        self.series = series.input
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .line, x: x, y: y, series: series)
    }
}
