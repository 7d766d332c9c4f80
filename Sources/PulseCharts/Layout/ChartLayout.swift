/// The regions of a chart, as Graffeine's gutters around a main region: title on top, legend below (or on top,
/// or trailing), axis gutters around the plot.
struct ChartLayout: Sendable {
    var frame: Rect
    var title: Rect?
    var legend: Rect?
    /// The plot region; axis gutters lie between it and the frame, less the title and legend.
    var plot: Rect
}
