/// How a line is stroked: width and dash pattern, as SwiftUI's `StrokeStyle`.
public struct StrokeStyle: Sendable, Hashable {
    /// Line width in pixels.
    public var lineWidth: Double
    /// Alternating dash and gap lengths in pixels; empty for a solid line.
    public var dash: [Double]

    /// Creates a stroke style.
    public init(lineWidth: Double = 1, dash: [Double] = []) {
        self.lineWidth = lineWidth
        self.dash = dash
    }
}
