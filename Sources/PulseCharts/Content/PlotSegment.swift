/// A whole line from a vectorized plot, kept as its columns: long series never become one record per point.
struct PlotSegment: Sendable {
    var template: Int32
    var color: Int32
    var symbol: Int32
    var series: Int32
    var xs: PlotColumn
    var xType: ValueType
    var ys: PlotColumn
    var yType: ValueType
    /// How many records came before it, so series keep their order of first appearance across both kinds.
    var position: Int

    var count: Int { min(xs.count, ys.count) }
}

/// Where the next mark goes, in both the record and the segment lists: modifiers apply to what is added after.
@usableFromInline
struct TablePosition: Sendable {
    @usableFromInline var records: Int
    @usableFromInline var segments: Int
}
