/// Something that can appear in a chart: a mark, a `ForEach` of marks, or a group built with
/// `@ChartContentBuilder`.
///
/// Write your own reusable content by implementing `body`, as with SwiftUI views:
/// ```swift
/// struct Threshold: ChartContent {
///     var limit: Double
///     var body: some ChartContent {
///         RuleMark(y: .value("Limit", limit)).foregroundStyle(.red)
///     }
/// }
/// ```
public protocol ChartContent {
    /// The type of content this content is made of.
    associatedtype Body: ChartContent

    /// The content this content is made of. Marks are primitive and have no body.
    @ChartContentBuilder var body: Body { get }

    /// Adds this content's marks to a chart being built. An implementation detail: custom content
    /// implements `body` instead.
    func _collect(into collector: inout ChartContentCollector)
}

extension ChartContent {
    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        body._collect(into: &collector)
    }
}

/// Content that draws itself in `_collect` rather than through a body: marks and the builder's containers.
public protocol PrimitiveChartContent: ChartContent where Body == EmptyChartContent {}

extension PrimitiveChartContent {
    /// Primitive content is not made of other content; its body is empty and never drawn.
    @inlinable
    public var body: EmptyChartContent { EmptyChartContent() }
}
