/// The kind of scale a position channel uses.
public enum ScaleType: Sendable, Hashable {
    /// Inferred from the values of all marks: nominal values get a band scale, dates a time scale, numbers a
    /// linear scale.
    case automatic
    case linear
    /// Powers of ten; values of zero or below cannot be drawn on it and are left out.
    case log
    case date
    case category
}

/// The input range of a scale, as in Swift Charts' `chartXScale(domain:)`.
public struct ScaleDomain: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case automatic(includesZero: Bool?, reversed: Bool)
        case numbers(Double, Double)
        case dates(ChartDate, ChartDate)
        case categories([String])
    }

    var storage: Storage

    /// Derived from the data of all marks, rounded outward to nice values.
    ///
    /// - Parameters:
    ///   - includesZero: Whether a quantitative domain reaches zero; by default it does, as bars and rates need.
    ///   - reversed: Whether the scale runs backwards.
    public static func automatic(includesZero: Bool? = nil, reversed: Bool = false) -> ScaleDomain {
        ScaleDomain(storage: .automatic(includesZero: includesZero, reversed: reversed))
    }

    /// Derived from the data, including zero.
    public static let automatic = ScaleDomain.automatic()

    /// A fixed numeric range; marks outside it are clipped to the plot.
    public static func numbers(_ range: ClosedRange<Double>) -> ScaleDomain {
        ScaleDomain(storage: .numbers(range.lowerBound, range.upperBound))
    }

    /// A fixed time range.
    public static func dates(_ range: ClosedRange<ChartDate>) -> ScaleDomain {
        ScaleDomain(storage: .dates(range.lowerBound, range.upperBound))
    }

    /// Fixed categories in this order; marks with other categories are not drawn.
    public static func categories(_ names: [String]) -> ScaleDomain {
        ScaleDomain(storage: .categories(names))
    }
}
