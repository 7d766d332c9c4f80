/// A primitive mark: the building block charts are composed of.
///
/// Marks carry the data values that style and group them (`foregroundStyle(by:)`, `symbol(by:)`,
/// `position(by:)`) themselves rather than in a wrapper, because these modifiers are applied to every data
/// point of large charts.
public protocol ChartMark: PrimitiveChartContent {
    /// The data values the mark is styled and grouped by. An implementation detail.
    var _keys: MarkKeys { get set }
}

/// The data values a mark is styled and grouped by. An implementation detail of `ChartMark`.
public struct MarkKeys: Sendable {
    @usableFromInline var color: SeriesKey?
    @usableFromInline var symbol: SeriesKey?
    @usableFromInline var position: SeriesKey?

    @inlinable
    public init() {}
}

extension ChartMark {
    /// Colours the mark by a data value: each distinct value gets a colour from the theme's palette (or from
    /// `chartForegroundStyleScale`) and an entry in the legend. Numbers get a colour ramp instead.
    @inlinable
    public consuming func foregroundStyle<V: Plottable>(by value: PlottableValue<V>) -> Self {
        keyed(\.color, by: value)
    }

    /// Gives each distinct data value its own symbol shape, for readers who cannot tell the colours apart.
    @inlinable
    public consuming func symbol<V: Plottable>(by value: PlottableValue<V>) -> Self {
        keyed(\.symbol, by: value)
    }

    /// Places bars with different values side by side within their band instead of stacking them.
    @inlinable
    public consuming func position<V: Plottable>(by value: PlottableValue<V>) -> Self {
        keyed(\.position, by: value)
    }

    /// The mark with one of its keys set, unless it is set already: the modifier written closest to the mark
    /// wins, as it does for content modifiers (`MarkTable.apply`).
    @inlinable
    consuming func keyed<V: Plottable>(
        _ key: WritableKeyPath<MarkKeys, SeriesKey?>, by value: PlottableValue<V>
    ) -> Self {
        var copy = self
        if copy._keys[keyPath: key] == nil {
            copy._keys[keyPath: key] = SeriesKey(value)
        }
        return copy
    }
}
