/// Which side of the plot an axis is drawn on.
public enum AxisMarkPosition: Sendable, Hashable {
    /// Bottom for x; leading (left) for y, as monitoring dashboards usually have it.
    case automatic
    case leading, trailing, top, bottom
}

/// The marks of an axis: which values, on which side, and what is drawn at each, as in Swift Charts.
///
/// ```swift
/// .chartYAxis {
///     AxisMarks(position: .leading, values: .automatic(desiredCount: 4)) { _ in
///         AxisGridLine()
///         AxisValueLabel(format: .bitsPerSecond)
///     }
/// }
/// ```
public struct AxisMarks: Sendable {
    var position: AxisMarkPosition
    var values: AxisMarkValues
    var content: (@Sendable (AxisValue) -> AxisMarkContent)?
    var label: AxisValueLabel.Content

    /// Grid lines, ticks and labels at automatic values.
    public init(position: AxisMarkPosition = .automatic, values: AxisMarkValues = .automatic) {
        self.position = position
        self.values = values
        self.label = .automatic
    }

    /// Grid lines, ticks and labels with numbers written in `format`.
    public init(format: ValueFormat, position: AxisMarkPosition = .automatic, values: AxisMarkValues = .automatic) {
        self.position = position
        self.values = values
        self.label = .number(format)
    }

    /// Grid lines, ticks and labels with instants written in `format`.
    public init(format: DateFormat, position: AxisMarkPosition = .automatic, values: AxisMarkValues = .automatic) {
        self.position = position
        self.values = values
        self.label = .date(format)
    }

    /// Your own choice of grid line, tick and label at each value.
    public init(
        position: AxisMarkPosition = .automatic, values: AxisMarkValues = .automatic,
        @AxisMarkBuilder content: @escaping @Sendable (AxisValue) -> AxisMarkContent
    ) {
        self.position = position
        self.values = values
        self.content = content
        self.label = .automatic
    }

    func parts(for value: AxisValue) -> AxisMarkContent {
        if let content { return content(value) }
        return AxisMarkContent(gridLine: AxisGridLine(), tick: AxisTick(), label: AxisValueLabel(content: label))
    }
}

/// Builds the list of `AxisMarks` of one axis.
@resultBuilder
public enum AxisMarksBuilder {
    public static func buildExpression(_ marks: AxisMarks) -> [AxisMarks] { [marks] }
    public static func buildBlock(_ parts: [AxisMarks]...) -> [AxisMarks] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [AxisMarks]?) -> [AxisMarks] { part ?? [] }
    public static func buildEither(first: [AxisMarks]) -> [AxisMarks] { first }
    public static func buildEither(second: [AxisMarks]) -> [AxisMarks] { second }
}
