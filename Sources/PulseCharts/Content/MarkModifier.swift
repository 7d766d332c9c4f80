/// A change that a mark modifier makes to the marks it wraps.
@usableFromInline
enum MarkModifier: Sendable {
    case foregroundBy(SeriesKey)
    case symbolBy(SeriesKey)
    case positionBy(SeriesKey)
    case annotation(Annotation)
    case accessibilityLabel(String)
    case accessibilityValue(String)
    case style(StyleUpdate)
}

/// Direct styling from a modifier; it only fills a property that is still unset.
@usableFromInline
enum StyleUpdate: Sendable {
    case color(Color)
    case opacity(Double)
    case lineStyle(StrokeStyle)
    case symbol(ChartSymbol)
    case symbolSize(Double)
    case interpolation(InterpolationMethod)
    case cornerRadius(Double)

    func apply(to style: inout MarkStyle) {
        switch self {
        case .color(let color): if style.color == nil { style.color = color }
        case .opacity(let opacity): if style.opacity == nil { style.opacity = opacity }
        case .lineStyle(let stroke): if style.lineStyle == nil { style.lineStyle = stroke }
        case .symbol(let symbol): if style.symbol == nil { style.symbol = symbol }
        case .symbolSize(let area): if style.symbolSize == nil { style.symbolSize = area }
        case .interpolation(let method): if style.interpolation == nil { style.interpolation = method }
        case .cornerRadius(let radius): if style.cornerRadius == nil { style.cornerRadius = radius }
        }
    }
}
