/// Where an annotation sits relative to its mark.
public enum AnnotationPosition: Sendable, Hashable {
    /// Above a vertical bar or point, right of a horizontal bar, over a rectangle or sector.
    case automatic
    case top, bottom, leading, trailing
    case topLeading, topTrailing, bottomLeading, bottomTrailing
    /// Centred on the mark.
    case overlay
}

/// How an annotation lines up with the side of the mark it is placed on.
public enum AnnotationAlignment: Sendable, Hashable {
    case center, leading, trailing
}

/// A text attached to a mark.
@usableFromInline
struct Annotation: Sendable, Hashable {
    var text: Text
    var position: AnnotationPosition
    var alignment: AnnotationAlignment
    var spacing: Double

    @usableFromInline
    init(text: Text, position: AnnotationPosition, alignment: AnnotationAlignment, spacing: Double) {
        self.text = text
        self.position = position
        self.alignment = alignment
        self.spacing = spacing
    }
}
