/// Where the legend goes.
public enum LegendPosition: Sendable, Hashable {
    /// Below the plot.
    case automatic
    case top, bottom, trailing
}
