/// A grid line across the plot at an axis value.
public struct AxisGridLine: Sendable, Hashable {
    var stroke: StrokeStyle?
    var color: Color?

    /// Creates a grid line; by default a thin line in the theme's grid colour.
    public init(stroke: StrokeStyle? = nil, color: Color? = nil) {
        self.stroke = stroke
        self.color = color
    }
}

/// A short tick on the axis line at an axis value.
public struct AxisTick: Sendable, Hashable {
    var length: Double
    var color: Color?

    /// Creates a tick `length` pixels long.
    public init(length: Double = 4, color: Color? = nil) {
        self.length = length
        self.color = color
    }
}

/// The label of an axis value.
public struct AxisValueLabel: Sendable {
    enum Content: Sendable {
        case automatic
        case number(ValueFormat)
        case date(DateFormat)
        case text(String)
    }

    var content: Content

    /// The value written with the axis's automatic format.
    public init() {
        self.content = .automatic
    }

    /// A number written with `format`, such as `.bitsPerSecond`.
    public init(format: ValueFormat) {
        self.content = .number(format)
    }

    /// An instant written with `format`, such as `.weekday`.
    public init(format: DateFormat) {
        self.content = .date(format)
    }

    /// Your own text for this value.
    public init(_ text: String) {
        self.content = .text(text)
    }
}

/// The parts drawn at one axis value, built by `@AxisMarkBuilder`.
public struct AxisMarkContent: Sendable {
    var gridLine: AxisGridLine?
    var tick: AxisTick?
    var label: AxisValueLabel?
}

/// Builds the parts drawn at an axis value; `if` leaves parts out for some values.
@resultBuilder
public enum AxisMarkBuilder {
    public static func buildExpression(_ grid: AxisGridLine) -> AxisMarkContent {
        AxisMarkContent(gridLine: grid)
    }

    public static func buildExpression(_ tick: AxisTick) -> AxisMarkContent {
        AxisMarkContent(tick: tick)
    }

    public static func buildExpression(_ label: AxisValueLabel) -> AxisMarkContent {
        AxisMarkContent(label: label)
    }

    public static func buildBlock(_ parts: AxisMarkContent...) -> AxisMarkContent {
        var merged = AxisMarkContent()
        for part in parts {
            merged.gridLine = part.gridLine ?? merged.gridLine
            merged.tick = part.tick ?? merged.tick
            merged.label = part.label ?? merged.label
        }
        return merged
    }

    public static func buildOptional(_ part: AxisMarkContent?) -> AxisMarkContent {
        part ?? AxisMarkContent()
    }

    public static func buildEither(first: AxisMarkContent) -> AxisMarkContent { first }
    public static func buildEither(second: AxisMarkContent) -> AxisMarkContent { second }
}

extension AxisValueLabel {
    init(content: Content) {
        self.content = content
    }
}
