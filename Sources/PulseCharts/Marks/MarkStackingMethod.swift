/// How bars and areas that share a position are combined.
public enum MarkStackingMethod: Sendable, Hashable {
    /// Positive values stack up from zero and negative values down from zero (the default).
    case standard
    /// Stacked and scaled so each stack spans 0 ... 1, for shares of a total.
    case normalized
    /// Stacked and centred on zero, as in a stream graph.
    case center
    /// Each mark starts at zero; marks overlap.
    case unstacked
}
