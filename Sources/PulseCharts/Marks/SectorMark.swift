/// A slice of a pie or donut whose angle is proportional to its value.
///
/// Slices go clockwise from twelve o'clock in the order written; colour them with `foregroundStyle(by:)`.
public struct SectorMark: ChartMark, Sendable {
    public var _keys = MarkKeys()
    @usableFromInline var angle: ChannelInput
    @usableFromInline var style = MarkStyle()

    /// A slice.
    ///
    /// - Parameters:
    ///   - innerRadius: `.ratio(0.6)` makes a donut; zero (the default) a pie.
    ///   - outerRadius: The slice's radius; by default the largest circle that fits the plot.
    ///   - angularInset: Pixels of space between neighbouring slices.
    @inlinable
    public init<A: Plottable>(
        angle: PlottableValue<A>, innerRadius: MarkDimension = .automatic, outerRadius: MarkDimension = .automatic,
        angularInset: Double = 0
    ) {
        self.angle = angle.input
        style.innerRadius = innerRadius
        style.outerRadius = outerRadius
        style.angularInset = angularInset
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        collector.table.append(keys: _keys, kind: .sector, x: angle, y: nil, style: style)
    }
}
