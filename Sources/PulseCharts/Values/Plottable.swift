/// The primitive form of a plotted value: what kind of data it is decides the scale it gets.
public enum PlottablePrimitive: Sendable, Hashable {
    /// Quantitative data, drawn on a linear or log scale.
    case number(Double)
    /// Temporal data, drawn on a time scale.
    case date(ChartDate)
    /// Nominal data, drawn on a band scale in order of first appearance.
    case category(String)
    /// No value: lines and areas break here instead of bridging the gap.
    case missing
}

/// A type whose values can be plotted with `.value(label, value)`.
///
/// Numbers are quantitative, `ChartDate` is temporal and strings are nominal. Conform an enum with
/// `String` raw values by writing `extension MyEnum: Plottable {}`.
public protocol Plottable: Sendable {
    /// The value as a number, an instant, a category or nothing.
    var primitivePlottable: PlottablePrimitive { get }
}

extension Plottable where Self: RawRepresentable, RawValue == String {
    public var primitivePlottable: PlottablePrimitive { .category(rawValue) }
}

extension Double: Plottable {
    public var primitivePlottable: PlottablePrimitive { isFinite ? .number(self) : .missing }
}

extension Float: Plottable {
    public var primitivePlottable: PlottablePrimitive { isFinite ? .number(Double(self)) : .missing }
}

/// Integers are quantitative: every integer type plots as the nearest `Double`.
extension Plottable where Self: BinaryInteger {
    public var primitivePlottable: PlottablePrimitive { .number(Double(self)) }
}

extension Int: Plottable {}
extension Int32: Plottable {}
extension Int64: Plottable {}
extension UInt: Plottable {}
extension UInt32: Plottable {}
extension UInt64: Plottable {}

extension String: Plottable {
    public var primitivePlottable: PlottablePrimitive { .category(self) }
}

extension Substring: Plottable {
    public var primitivePlottable: PlottablePrimitive { .category(String(self)) }
}

extension ChartDate: Plottable {
    public var primitivePlottable: PlottablePrimitive {
        secondsSinceEpoch.isFinite ? .date(self) : .missing
    }
}

extension Optional: Plottable where Wrapped: Plottable {
    /// `nil` is a missing value: a line or area is broken there.
    public var primitivePlottable: PlottablePrimitive {
        switch self {
        case .some(let value): value.primitivePlottable
        case .none: .missing
        }
    }
}
