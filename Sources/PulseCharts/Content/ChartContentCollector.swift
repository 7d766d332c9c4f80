/// Gathers the marks of chart content. An implementation detail of `ChartContent`.
public struct ChartContentCollector: Sendable {
    @usableFromInline var table = MarkTable()

    @usableFromInline
    init() {}
}
