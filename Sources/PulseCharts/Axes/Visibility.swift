/// Whether an axis, legend or tooltip is drawn.
public enum Visibility: Sendable, Hashable {
    /// Drawn when the chart has something for it to show.
    case automatic
    case visible
    case hidden
}
