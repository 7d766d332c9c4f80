/// Content made for each element of a collection, as Swift Charts' `ForEach`.
///
/// The content closure runs once per element when the `ForEach` is created, so the data does not have to
/// outlive it or be `Sendable`.
public struct ForEach<Content: ChartContent>: PrimitiveChartContent {
    @usableFromInline var contents: [Content]

    /// Creates content for each element of `data`.
    @inlinable
    public init<Data: Sequence>(_ data: Data, @ChartContentBuilder content: (Data.Element) -> Content) {
        self.contents = data.map(content)
    }

    /// Creates content for each element of `data`; `id` is accepted for source compatibility with Swift Charts
    /// and not needed, since charts are drawn once.
    @inlinable
    public init<Data: Sequence, ID: Hashable>(
        _ data: Data, id: KeyPath<Data.Element, ID>, @ChartContentBuilder content: (Data.Element) -> Content
    ) {
        self.contents = data.map(content)
    }

    @inlinable
    public func _collect(into collector: inout ChartContentCollector) {
        for content in contents {
            content._collect(into: &collector)
        }
    }
}

extension ForEach: Sendable where Content: Sendable {}
