/// The width of a bar or rectangle, or the radius of a sector, as in Swift Charts.
public enum MarkDimension: Sendable, Hashable, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    /// Chosen by the chart: most of a band, or a width derived from the spacing of the data.
    case automatic
    /// A fixed size in pixels.
    case fixed(Double)
    /// A fraction of the band or step, 0 ... 1.
    case ratio(Double)
    /// The band or step less this many pixels.
    case inset(Double)

    public init(floatLiteral value: Double) {
        self = .fixed(value)
    }

    public init(integerLiteral value: Int) {
        self = .fixed(Double(value))
    }

    /// The size this dimension gives inside an available `step`, with `automaticRatio` for `.automatic`.
    func resolve(in step: Double, automaticRatio: Double) -> Double {
        switch self {
        case .automatic: return step * automaticRatio
        case .fixed(let size): return size
        case .ratio(let ratio): return step * ratio
        case .inset(let inset): return max(step - inset, 0)
        }
    }
}
