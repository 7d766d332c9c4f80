/// Content with a modifier applied to all of its marks.
public struct ModifiedChartContent<Content: ChartContent>: PrimitiveChartContent {
    @usableFromInline var content: Content
    @usableFromInline var modifier: MarkModifier

    @usableFromInline
    init(content: Content, modifier: MarkModifier) {
        self.content = content
        self.modifier = modifier
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        let start = collector.table.position
        content._collect(into: &collector)
        collector.table.apply(modifier, from: start)
    }
}

extension ModifiedChartContent: Sendable where Content: Sendable {}

extension ChartContent {
    @inlinable
    func modified(_ modifier: MarkModifier) -> ModifiedChartContent<Self> {
        ModifiedChartContent(content: self, modifier: modifier)
    }

    @inlinable
    func styled(_ update: StyleUpdate) -> ModifiedChartContent<Self> {
        modified(.style(update))
    }

    /// Colours all marks of this content by a data value, as `ChartMark.foregroundStyle(by:)` does for one mark.
    @inlinable
    public func foregroundStyle<V: Plottable>(by value: PlottableValue<V>) -> ModifiedChartContent<Self> {
        modified(.foregroundBy(SeriesKey(value)))
    }

    /// Draws marks in a fixed colour.
    @inlinable
    public func foregroundStyle(_ color: Color) -> ModifiedChartContent<Self> {
        styled(.color(color))
    }

    /// Gives all marks of this content a symbol shape by a data value.
    @inlinable
    public func symbol<V: Plottable>(by value: PlottableValue<V>) -> ModifiedChartContent<Self> {
        modified(.symbolBy(SeriesKey(value)))
    }

    /// Draws points (and a line's points) with a fixed symbol.
    @inlinable
    public func symbol(_ symbol: ChartSymbol) -> ModifiedChartContent<Self> {
        styled(.symbol(symbol))
    }

    /// The area of point symbols in square pixels, as in Swift Charts (the default is 30).
    @inlinable
    public func symbolSize(_ area: Double) -> ModifiedChartContent<Self> {
        styled(.symbolSize(area))
    }

    /// Places all bars of this content side by side by a data value instead of stacking them.
    @inlinable
    public func position<V: Plottable>(by value: PlottableValue<V>) -> ModifiedChartContent<Self> {
        modified(.positionBy(SeriesKey(value)))
    }

    /// Multiplies the marks' opacity.
    @inlinable
    public func opacity(_ opacity: Double) -> ModifiedChartContent<Self> {
        styled(.opacity(opacity))
    }

    /// Strokes lines and rules with a width and dash pattern.
    @inlinable
    public func lineStyle(_ stroke: StrokeStyle) -> ModifiedChartContent<Self> {
        styled(.lineStyle(stroke))
    }

    /// How lines and areas join their points.
    @inlinable
    public func interpolationMethod(_ method: InterpolationMethod) -> ModifiedChartContent<Self> {
        styled(.interpolation(method))
    }

    /// Rounds the corners of bars and rectangles.
    @inlinable
    public func cornerRadius(_ radius: Double) -> ModifiedChartContent<Self> {
        styled(.cornerRadius(radius))
    }

    /// Attaches a text to each mark, such as its value above a bar or a name on a threshold rule.
    ///
    /// - Parameters:
    ///   - position: Which side of the mark the text sits on.
    ///   - alignment: How the text lines up along that side.
    ///   - spacing: Pixels between the mark and the text.
    @inlinable
    public func annotation(
        position: AnnotationPosition = .automatic, alignment: AnnotationAlignment = .center, spacing: Double = 4,
        content: () -> Text
    ) -> ModifiedChartContent<Self> {
        modified(.annotation(Annotation(text: content(), position: position, alignment: alignment, spacing: spacing)))
    }

    /// The name of each mark in its tooltip and for screen readers; by default it is built from the values.
    @inlinable
    public func accessibilityLabel(_ label: String) -> ModifiedChartContent<Self> {
        modified(.accessibilityLabel(label))
    }

    /// The value of each mark in its tooltip and for screen readers.
    @inlinable
    public func accessibilityValue(_ value: String) -> ModifiedChartContent<Self> {
        modified(.accessibilityValue(value))
    }
}
