/// The shape drawn for a point, and for a line's points when the line is styled with `symbol(by:)`.
public enum ChartSymbol: String, Sendable, Hashable, CaseIterable {
    case circle, square, triangle, diamond, plus, cross, pentagon, asterisk

    /// The order in which series get shapes: adjacent entries differ in outline, not only size.
    static let defaultOrder: [ChartSymbol] = [
        .circle, .square, .triangle, .diamond, .cross, .pentagon, .plus, .asterisk,
    ]
}
