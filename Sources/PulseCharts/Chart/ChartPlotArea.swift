/// The plot area's own styling, set with `chartPlotStyle`.
public struct ChartPlotArea: Sendable, Hashable {
    var background: Color?
    var border: Color?
    var borderWidth: Double = 1

    /// The plot area filled with `color` behind the marks.
    public func background(_ color: Color) -> ChartPlotArea {
        var copy = self
        copy.background = color
        return copy
    }

    /// The plot area outlined in `color`.
    public func border(_ color: Color, width: Double = 1) -> ChartPlotArea {
        var copy = self
        copy.border = color
        copy.borderWidth = width
        return copy
    }
}
