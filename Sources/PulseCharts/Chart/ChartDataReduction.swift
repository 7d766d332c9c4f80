/// How long line and area series are thinned before drawing.
public enum ChartDataReduction: Sendable, Hashable {
    /// Series with more points than the plot is wide are reduced to about one point per pixel with
    /// Largest-Triangle-Three-Buckets, which keeps peaks and troughs.
    case automatic
    /// Every point is drawn.
    case disabled
    /// Reduced to at most this many points per series.
    case maximumPoints(Int)
}
