/// One value an axis marks, passed to the content closure of `AxisMarks`.
public struct AxisValue: Sendable, Hashable {
    /// The position of this value among the axis's values.
    public var index: Int
    /// How many values the axis marks.
    public var count: Int
    /// The value itself.
    public var value: PlottablePrimitive

    /// The value as a number, for quantitative axes.
    public var number: Double? {
        if case .number(let n) = value { return n }
        return nil
    }

    /// The value as an instant, for time axes.
    public var date: ChartDate? {
        if case .date(let d) = value { return d }
        return nil
    }

    /// The value as a category name, for nominal axes.
    public var category: String? {
        if case .category(let c) = value { return c }
        return nil
    }
}
