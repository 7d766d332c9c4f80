/// How a line or area joins its points.
public enum InterpolationMethod: Sendable, Hashable {
    /// Straight segments.
    case linear
    /// A smooth curve that never overshoots the data (Fritsch and Carlson): good for rates, which are never negative.
    case monotone
    /// A smooth Catmull-Rom curve through every point; it can overshoot between points.
    case catmullRom
    /// Steps that change at each point and hold until the next.
    case stepStart
    /// Steps that change halfway between points.
    case stepCenter
    /// Steps that hold each value up to its point.
    case stepEnd
}
