/// Styling set on a mark directly (not derived from data).
@usableFromInline
struct MarkStyle: Sendable, Hashable {
    @usableFromInline var color: Color?
    @usableFromInline var opacity: Double?
    @usableFromInline var lineStyle: StrokeStyle?
    @usableFromInline var symbol: ChartSymbol?
    @usableFromInline var symbolSize: Double?
    @usableFromInline var interpolation: InterpolationMethod?
    @usableFromInline var cornerRadius: Double?
    @usableFromInline var width: MarkDimension?
    @usableFromInline var height: MarkDimension?
    @usableFromInline var stacking: MarkStackingMethod?
    @usableFromInline var innerRadius: MarkDimension?
    @usableFromInline var outerRadius: MarkDimension?
    @usableFromInline var angularInset: Double?

    @usableFromInline
    init() {}
}

/// What the marks written at one place in the source share: kind, channel labels and direct styling.
///
/// Marks point at an interned template, so a chart of 345,600 line marks stores a handful of these rather than
/// one copy per mark.
struct MarkTemplate: Sendable, Hashable {
    var kind: MarkKind
    var xLabel: String = ""
    var yLabel: String = ""
    var xUnit: CalendarUnit?
    var yUnit: CalendarUnit?
    var hasX = false
    var hasY = false
    var xIsRange = false
    var yIsRange = false
    var style = MarkStyle()
}
