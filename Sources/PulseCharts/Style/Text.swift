/// A piece of text for annotations and custom axis labels, styled like SwiftUI's `Text`.
public struct Text: Sendable, Hashable {
    /// Font weight of a text.
    public enum Weight: String, Sendable, Hashable {
        case regular, bold
    }

    /// The characters; they are escaped when written, so any string is safe.
    public var content: String
    var fontSize: Double?
    var weight: Weight = .regular
    var color: Color?

    /// Creates a text.
    public init(_ content: String) {
        self.content = content
    }

    /// The same text in another font size, in pixels.
    public func font(size: Double) -> Text {
        var copy = self
        copy.fontSize = size
        return copy
    }

    /// The same text with another weight.
    public func fontWeight(_ weight: Weight) -> Text {
        var copy = self
        copy.weight = weight
        return copy
    }

    /// The same text in another colour; by default text uses the theme's colour.
    public func foregroundStyle(_ color: Color) -> Text {
        var copy = self
        copy.color = color
        return copy
    }
}
